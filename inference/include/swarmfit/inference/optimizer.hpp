// Differential-evolution optimisation of a batched log-density (Storn & Price 1997, J. Glob. Optim.
// 11, 341: DE/rand/1/bin, F = 0.7, CR = 0.9), the whole population one batched call per
// generation: to move a fit's walkers to the posterior's peak before sampling.
#pragma once

#include <Eigen/Dense>
#include <cstdint>
#include <limits>

#include "swarmfit/inference/demcmc.hpp"
#include "swarmfit/inference/progress.hpp"

namespace swarmfit {

// ln prior + ln L, or -inf where either is -inf or NaN.
inline double log_posterior_of(double log_prior, double log_likelihood) {
  return (log_prior > -std::numeric_limits<double>::infinity() &&
          log_likelihood > -std::numeric_limits<double>::infinity())
             ? log_prior + log_likelihood
             : -std::numeric_limits<double>::infinity();
}

// Runs `generations` generations from the population `start` (d x n, n >= 4) and returns its best
// point. Random numbers from the RandomPurpose::kOptimize streams of `seed`. With `screen` (a
// constraint log_density leaves out, demcmc.hpp): applied to the trials that would replace their
// parent on log_density alone, the same optimisation as with the constraint inside it (it only
// lowers values) at the cost of the improving trials only.
Eigen::VectorXd optimize_differential_evolution(const Eigen::MatrixXd& start, const BatchedLogDensity& log_density,
                                                long generations, std::uint64_t seed,
                                                const ProgressCallback& progress = {}, double progress_seconds = 0.5,
                                                const BatchedScreen& screen = {});

}  // namespace swarmfit
