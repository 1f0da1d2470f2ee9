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
  int steps = 1;             // leapfrog steps a trajectory (1: MALA; 0: the trajectory length adapted, below)
  double step_size = 0.0;    // leapfrog step in whitened units, jittered +-20% per half update (0: 1.5 d^-1/4)
  long adapt_until = 0;      // generations (the burn-in) during which the step adapts (0: never)
  // The whole population in one move (Demcmc: a generation is then a gradient move of every walker
  // with probability `probability`, else the two DE half updates): whitened by the whole level's
  // covariance, averaged over the gradient generations until adapt_until and frozen after it (the
  // first positive-definite one, without a burn-in). Why: a fixed metric needs no other half, so the
  // leapfrog steps of all walkers share one batched call, half the sequential calls of halves;
  // once frozen each walker is an HMC chain with a fixed mass matrix (Neal 2011, section 5.4.1).
  bool whole = false;
  // The leapfrog's force (whole only, steps >= 1): false, forward differences of the target (d + 1
  // points a step and walker); true, the gradient of the level's quadratic surrogate of its residuals
  // (moves/surrogate.hpp), built from the level's mean with the metric during the burn-in (one
  // batched call of 2 d^2 + 1 points a level, before the move) and frozen with it, so a trajectory is
  // one batched call (its ends) whatever its steps.
  bool surrogate = false;
};

// The warm-up adaptation of the step (as Stan's, Hoffman & Gelman 2014, section 3.2, by a
// Robbins-Monro update of its logarithm): after each gradient move before adapt_until,
// ln scale += gain (mean acceptance probability of the T = 1 walkers - target), the gain
// (1 + generation / 10)^-1/2 decreasing (Robbins & Monro 1951) so the step frozen at the end of the
// burn-in is not one noisy generation's; the target is 0.65 for trajectories, also with the
// adapted length (Beskos et al. 2013), and 0.574 for MALA (Roberts & Rosenthal 1998). Why: at
// the start the population's scales need not be the posterior's (a Laplace start of a
// non-Gaussian posterior), and a leapfrog step beyond 2 / sqrt(curvature) diverges. Frozen
// afterwards, so the kept chain is a Markov chain.
double adapted_gradient_scale(double scale, double mean_acceptance, int steps, long generation);

// steps = 0: the trajectory length T (whitened units) adapts in the burn-in by the ChEES criterion
// of Hoffman, Radul & Sountsov 2021 (AISTATS, PMLR 130, 3907: "change in the estimator of the
// expected square", ChEES = E[(|x' - E x|^2 - |x - E x|^2)^2] / 4, its derivative from each
// walker's end point and momentum, eq. 6, the expectations over the population), per unit of cost
// (a move is its leapfrog steps + 1 batched calls), and is frozen after it. Each move takes
// ceil(v T / step) leapfrog steps, v uniform in (0, 1) per move (their jitter, shared by every
// walker so a batch stays one call). Why: the length a posterior needs is set by its widest scale
// over its stiffest, unknown beforehand (TRAPPIST-1: 6 steps diffuse, 14 travel).
// A move's estimate, at the time t it integrated (steps x step): ChEES, t dChEES/dt, and the ChEES
// of an independent draw (Var|x - E x|^2 / 2, the scale the signal is measured in).
struct CheesEstimate {
  double chees = 0, time_derivative = 0, independent = 0;
};
// ln T moves by 0.2 x the step's gain x clamp((t dChEES/dt - c ChEES) / independent, -1, 1), c the
// cost's elasticity d ln cost / d ln T, within [1, 1000] steps. Over moves (v) its mean is
// T dE[ChEES]/dT - c E[ChEES] in a fixed unit, zero where E[ChEES] / cost is largest; a ratio per
// move instead (d ln ChEES / d ln t, clamped) is dominated by the moves near ChEES's zeros and
// settles where it should not (on a Gaussian at ~4.9 as well as near the optimum ~1.5).
double adapted_trajectory_length(double length, const CheesEstimate& estimate, double step, long generation);
// The leapfrog steps of a move of length `length` at step `step`, jittered by `uniform` in (0, 1].
int trajectory_steps(double length, double step, double uniform);

class GradientMove {
 public:
  // The forward-difference step, in whitened units (about posterior standard deviations): small
  // against the curvature's scale (the truncation error of the gradient ~ 5e-4 of it), large
  // against the rounding of a log-likelihood summed over hundreds of points.
  static constexpr double kDifference = 1e-3;

  // The adapted trajectory's length (whitened units) before its first adaptation.
  static constexpr double kInitialLength = 1.0;

  // Throws std::invalid_argument for a probability outside [0, 1], steps outside [0, 1000] or a
  // negative or non-finite step size.
  explicit GradientMove(GradientSettings settings = {});
  const GradientSettings& settings() const { return settings_; }

  // The other half's Cholesky factor and this half update's step (times `scale`). False (no move for this
  // temperature's walkers) where its covariance is not positive definite.
  bool prepare(const HalfUpdate& half, double scale = 1.0);
  // The step of a move in d dimensions (times `scale`) from a uniform draw of its own (the jitter).
  double jittered_step(long d, double scale, double uniform) const;
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
