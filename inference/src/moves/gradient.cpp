#include "swarmfit/inference/moves/gradient.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace swarmfit {

GradientMove::GradientMove(GradientSettings settings) : settings_(settings) {
  if (!(settings_.probability >= 0 && settings_.probability <= 1))
    throw std::invalid_argument("DEMCMC: the gradient move's probability must be in [0, 1]");
  if (settings_.steps < 0 || settings_.steps > 1000)
    throw std::invalid_argument("DEMCMC: the gradient move's leapfrog steps must be in [0, 1000] (0: adapted)");
  if (!(settings_.step_size >= 0) || !std::isfinite(settings_.step_size))
    throw std::invalid_argument("DEMCMC: the gradient move's step size must be >= 0 and finite (0: automatic)");
  if (settings_.adapt_until < 0) throw std::invalid_argument("DEMCMC: the gradient move's adaptation must be >= 0");
}

bool GradientMove::prepare(const HalfUpdate& half, double scale) {
  if (!covariance_factor(half.other_half(), factor_, nullptr)) return false;
  step_ = jittered_step(half.walkers.rows(), scale,
                        half.random.uniform(RandomPurpose::kGradient, half.level, half.stream, 0));
  return true;
}

double GradientMove::jittered_step(long d, double scale, double uniform) const {
  // Beskos et al. 2013: the step that keeps the acceptance as d grows scales as d^-1/4 (the factor
  // 1.5 is a start: the step adapts in the burn-in).
  const double base =
      scale * (settings_.step_size > 0 ? settings_.step_size : 1.5 * std::pow(static_cast<double>(d), -0.25));
  // A random step per move (Neal 2011, section 5.4.2.2): no trajectory length resonates with a
  // period of the posterior.
  return base * (0.8 + 0.4 * uniform);
}

void GradientMove::difference_points(const Eigen::MatrixXd& factor, const Eigen::Ref<const Eigen::VectorXd>& x,
                                     Eigen::Ref<Eigen::MatrixXd> out) {
  const long d = x.size();
  out.col(0) = x;
  for (long j = 0; j < d; ++j) out.col(1 + j) = x + kDifference * factor.col(j);
}

double adapted_gradient_scale(double scale, double mean_acceptance, int steps, long generation) {
  const double target = steps > 1 ? 0.65 : 0.574;
  const double gain = 1.0 / std::sqrt(1.0 + static_cast<double>(generation) / 10.0);
  return std::clamp(scale * std::exp(gain * (mean_acceptance - target)), 1e-3, 10.0);
}

double adapted_trajectory_length(double length, const CheesEstimate& estimate, double step, long generation) {
  if (!(estimate.independent > 0) || !std::isfinite(estimate.chees) || !std::isfinite(estimate.time_derivative))
    return length;
  // The cost's elasticity: a move is its steps + 1 batched calls, ceil(v T / step) steps for v
  // uniform in (0, 1), about T / (2 step) + 1/2 of them on average (at least 1).
  const double half = 0.5 * length / step, steps = std::max(1.0, half + 0.5);
  const double cost_elasticity = half + 0.5 > 1.0 ? half / (steps + 1.0) : 0.0;
  const double signal = (estimate.time_derivative - cost_elasticity * estimate.chees) / estimate.independent;
  const double gain = 1.0 / std::sqrt(1.0 + static_cast<double>(generation) / 10.0);
  return std::clamp(length * std::exp(0.2 * gain * std::clamp(signal, -1.0, 1.0)), step, 1000.0 * step);
}

int trajectory_steps(double length, double step, double uniform) {
  return static_cast<int>(std::clamp(std::ceil(uniform * length / step), 1.0, 1000.0));
}

bool GradientMove::gradient(const double* values, long d, Eigen::Ref<Eigen::VectorXd> out) {
  if (!std::isfinite(values[0])) return false;
  for (long j = 0; j < d; ++j) {
    if (!std::isfinite(values[1 + j])) return false;
    out(j) = (values[1 + j] - values[0]) / kDifference;
  }
  return true;
}

}  // namespace swarmfit
