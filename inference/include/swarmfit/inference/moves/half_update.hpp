// What a move sees while one half of the walkers is updated: the walkers are updated in two halves,
// each proposing only from the other, fixed half (ter Braak 2006; emcee's red-blue moves,
// Foreman-Mackey et al. 2013), so a whole half is one batched log-density call and each half update
// keeps the target. A move only proposes; Demcmc chooses the move and accepts or rejects.
#pragma once

#include <Eigen/Dense>
#include <cstdint>

#include "swarmfit/inference/random.hpp"

namespace swarmfit {

struct HalfUpdate {
  const Eigen::MatrixXd& walkers;  // every column of the sampler (d x K W), the other half among them
  long other;                      // first column of the other half
  long n;                          // walkers per half
  long level;                      // temperature level
  long generation;                 // generations done
  std::uint64_t stream;            // generation counter of the random streams: 2 generation + half
  const CounterRandom& random;

  auto other_half() const { return walkers.middleCols(other, n); }
  auto member(long k) const { return walkers.col(other + k); }  // k in [0, n)
};

// The Cholesky factor L (lower) of the covariance C = L L^T of `members` (d x n columns), by the
// factor of their correlation matrix (scale-free) scaled back; their mean into *mean if given.
// False where C is not positive definite (a parameter without spread, or d >= n in effect).
bool covariance_factor(const Eigen::Ref<const Eigen::MatrixXd>& members, Eigen::MatrixXd& lower, Eigen::VectorXd* mean);
// Its two parts: the sample covariance of `members` (their mean into *mean if given), and the
// factor of a covariance matrix (false where it is not positive definite).
Eigen::MatrixXd sample_covariance(const Eigen::Ref<const Eigen::MatrixXd>& members, Eigen::VectorXd* mean);
bool covariance_cholesky(const Eigen::MatrixXd& covariance, Eigen::MatrixXd& lower);
// Whether c is a d x d covariance matrix the sampler can use: finite, exactly symmetric, and with
// a Cholesky factor (the check a saved metric passes both when read and when restored).
bool is_covariance_matrix(const Eigen::MatrixXd& c, long d);

}  // namespace swarmfit
