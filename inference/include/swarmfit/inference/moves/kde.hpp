// The KDE independence move: a proposal y ~ q = (1/K) sum_j N(z_j, h^2 C), the z_j K members of the
// other half (all, or a random subset chosen from the generation's stream only), C their
// covariance and h Silverman's bandwidth (Silverman 1986, eq. 4.14: h = (4 / ((d + 2) K))^(1/(d+4)))
// times a factor, accepted with min(1, pi(y) q(x) / (pi(x) q(y))) (Metropolis-Hastings with a
// proposal that does not depend on x; Tierney 1994, Ann. Stat. 22, 1701). The other half is fixed
// during the update, so q is fixed and each half update keeps the target; once the walkers cover
// the posterior, accepted proposals are near-independent draws, which pays with large populations.
// With one component, q = N(m, h^2 C), m the other half's mean and h the factor itself: the
// Gaussian independence sampler (Tierney 1994), for near-Gaussian posteriors in many dimensions,
// where a mixture of K kernels of Silverman's width is a much wider q (variance (1 + h^2) C) whose
// proposals are rarely accepted.
#pragma once

#include <Eigen/Dense>
#include <cstdint>

#include "swarmfit/inference/moves/half_update.hpp"

namespace swarmfit {

struct KdeSettings {
  double probability = 0.0;  // that a walker's move is a KDE independence proposal
  int components = 256;      // kernel centres: at most this many members of the other half
                             // (1: one Gaussian at their mean)
  double bandwidth = 1.0;    // factor on Silverman's bandwidth (one component: the scale h itself)
};

class KdeMove {
 public:
  // Throws std::invalid_argument for a negative probability, fewer than 1 component or a
  // bandwidth factor <= 0.
  explicit KdeMove(KdeSettings settings = {});
  const KdeSettings& settings() const { return settings_; }

  // Builds the KDE of the other half. False (no KDE moves in this half update) where its covariance
  // is not positive definite.
  bool prepare(const HalfUpdate& half);
  // The proposal of walker `walker` (its stream index): a random kernel, plus h L xi.
  void propose(const HalfUpdate& half, std::uint64_t walker, Eigen::Ref<Eigen::VectorXd> proposal) const;
  // ln q(x) - ln q(y): the log of the Hastings factor q(x) / q(y) of a move from x to y.
  double log_ratio(const Eigen::VectorXd& x, const Eigen::VectorXd& y) const;

 private:
  KdeSettings settings_;
  // Kernel centres (d x K, original; K x d whitened, so that one parameter of every kernel is
  // contiguous for SIMD), the Cholesky factor of C and h.
  Eigen::MatrixXd centres_, white_;
  Eigen::MatrixXd cholesky_;
  double h_ = 0;
};

}  // namespace swarmfit
