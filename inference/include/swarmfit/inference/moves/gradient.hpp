// The gradient move: a half update in which every walker takes one Hamiltonian Monte Carlo
// trajectory (Duane et al. 1987, Phys. Lett. B 195, 216; Neal 2011, "MCMC using Hamiltonian
// dynamics", Handbook of MCMC ch. 5: leapfrog eqs. 5.18-5.20, acceptance eq. 5.8) in the
// coordinates whitened by the other half's covariance, C = L L^T, x = x0 + L u (the mass matrix
// C^-1: the posterior's scales and correlations as the population knows them). With one leapfrog
// step it is the Metropolis-adjusted Langevin algorithm (Roberts & Tweedie 1996, Bernoulli 2, 341).
// Why: in many dimensions a random walk or a fixed proposal falls behind a posterior the population
// does not yet cover; a step along the gradient travels d^(1/4) further at the same acceptance
// (Beskos et al. 2013, Bernoulli 19, 1501).
// The gradient is a forward difference along the columns of L: d + 1 points per leapfrog step and
// walker, all walkers of the half (every temperature) in one batched call. A leapfrog with any
// position-dependent force is volume-preserving and reversible, so the approximate gradient costs
// acceptance, never exactness; where a point's difference is not finite (outside a prior's support)
// the walker's trajectory is rejected, the same decision from either end.
#pragma once

#include <Eigen/Dense>
#include <cstdint>

#include "swarmfit/inference/moves/half_update.hpp"

namespace swarmfit {

struct GradientSettings {
  double probability = 0.0;  // that a half update is a gradient move (all its walkers, every temperature)
  int steps = 1;             // leapfrog steps a trajectory (1: MALA)
  double step_size = 0.0;    // leapfrog step in whitened units, jittered +-20% per half update (0: 1.5 d^-1/4)
  long adapt_until = 0;      // generations (the burn-in) during which the step adapts (0: never)
};

// The warm-up adaptation of the step (as Stan's, Hoffman & Gelman 2014, section 3.2, by a
// Robbins-Monro update of its logarithm): after each gradient half update before adapt_until,
// ln scale += (mean acceptance probability of the T = 1 walkers - target); the target is 0.65
// for trajectories (Beskos et al. 2013) and 0.574 for MALA (Roberts & Rosenthal 1998). Why: at
// the start the population's scales need not be the posterior's (a Laplace start of a
// non-Gaussian posterior), and a leapfrog step beyond 2 / sqrt(curvature) diverges. Frozen
// afterwards, so the kept chain is a Markov chain.
double adapted_gradient_scale(double scale, double mean_acceptance, int steps);

class GradientMove {
 public:
  // The forward-difference step, in whitened units (about posterior standard deviations): small
  // against the curvature's scale (the truncation error of the gradient ~ 5e-4 of it), large
  // against the rounding of a log-likelihood summed over hundreds of points.
  static constexpr double kDifference = 1e-3;

  // Throws std::invalid_argument for a probability outside [0, 1], steps outside [1, 1000] or a
  // negative or non-finite step size.
  explicit GradientMove(GradientSettings settings = {});
  const GradientSettings& settings() const { return settings_; }

  // The other half's Cholesky factor and this half update's step (times `scale`). False (no move for this
  // temperature's walkers) where its covariance is not positive definite.
  bool prepare(const HalfUpdate& half, double scale = 1.0);
  const Eigen::MatrixXd& factor() const { return factor_; }
  double step() const { return step_; }

  // x and x + kDifference L e_j (j < d), L = factor: the d + 1 columns of `out` at which the
  // gradient at x is taken.
  static void difference_points(const Eigen::MatrixXd& factor, const Eigen::Ref<const Eigen::VectorXd>& x,
                                Eigen::Ref<Eigen::MatrixXd> out);
  // The gradient in u from the log densities at those points (values[0] at x); false where any is
  // not finite.
  static bool gradient(const double* values, long d, Eigen::Ref<Eigen::VectorXd> out);

 private:
  GradientSettings settings_;
  Eigen::MatrixXd factor_;
  double step_ = 0;
};

}  // namespace swarmfit
