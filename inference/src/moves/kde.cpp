#include "swarmfit/inference/moves/kde.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>
#include <vector>

namespace swarmfit {

KdeMove::KdeMove(KdeSettings settings) : settings_(settings) {
  if (!(settings_.probability >= 0)) throw std::invalid_argument("DEMCMC: the KDE probability must be >= 0");
  if (settings_.components < 1 || !(settings_.bandwidth > 0))
    throw std::invalid_argument("DEMCMC: KDE components must be >= 1 and the bandwidth factor > 0");
}

bool KdeMove::prepare(const HalfUpdate& half) {
  const long d = half.walkers.rows(), n = half.n;
  const auto members = half.other_half();
  Eigen::VectorXd mean;
  if (!covariance_factor(members, cholesky_, &mean)) return false;
  if (settings_.components == 1) {  // one Gaussian at the other half's mean, bandwidth x its covariance
    centres_ = mean;
    white_ = cholesky_.triangularView<Eigen::Lower>().solve(centres_).transpose();
    h_ = settings_.bandwidth;
    return true;
  }
  // Kernel centres: the whole other half, or K of its members by a partial Fisher-Yates shuffle
  // keyed by (level, generation) only.
  const long k_max = std::min<long>(n, settings_.components);
  std::vector<long> order(n);
  std::iota(order.begin(), order.end(), 0L);
  if (k_max < n)
    for (long i = 0; i < k_max; ++i) {
      const long j =
          i + static_cast<long>(half.random.below(n - i, RandomPurpose::kKdeSubset, half.level, half.stream, i));
      std::swap(order[i], order[j]);
    }
  centres_.resize(d, k_max);
  for (long i = 0; i < k_max; ++i) centres_.col(i) = members.col(order[i]);
  white_ = cholesky_.triangularView<Eigen::Lower>().solve(centres_).transpose();
  // Silverman (1986) eq. 4.14, times the user's factor.
  h_ = settings_.bandwidth *
       std::pow(4.0 / ((d + 2.0) * static_cast<double>(k_max)), 1.0 / (static_cast<double>(d) + 4.0));
  return true;
}

void KdeMove::propose(const HalfUpdate& half, std::uint64_t walker, Eigen::Ref<Eigen::VectorXd> proposal) const {
  const long d = centres_.rows();
  const std::uint64_t g = half.stream;
  const long j = static_cast<long>(half.random.below(centres_.cols(), RandomPurpose::kKdeDraw, walker, g, 0));
  Eigen::VectorXd xi(d);
  for (long p = 0; p < d; ++p) xi(p) = half.random.normal(RandomPurpose::kKdeDraw, walker, g, 1 + p);
  const Eigen::VectorXd offset = cholesky_.triangularView<Eigen::Lower>() * xi;
  proposal = centres_.col(j) + h_ * offset;
}

double KdeMove::log_ratio(const Eigen::VectorXd& x, const Eigen::VectorXd& y) const {
  // ln q(v) up to a constant: log-sum-exp over the K kernels of -|L^-1 (v - c_k)|^2 / 2 h^2.
  // Distances to all kernels one parameter at a time, then the exponentials, both SIMD over the
  // kernels (Eigen's vectorised exp).
  const long d = white_.cols();
  Eigen::ArrayXd distance2(white_.rows());
  auto log_q = [&](const Eigen::VectorXd& v) {
    const Eigen::VectorXd white = cholesky_.triangularView<Eigen::Lower>().solve(v);
    distance2 = (white_.col(0).array() - white(0)).square();
    for (long p = 1; p < d; ++p) distance2 += (white_.col(p).array() - white(p)).square();
    const double scale = 0.5 / (h_ * h_);
    const double nearest = distance2.minCoeff();
    return -scale * nearest + std::log((-scale * (distance2 - nearest)).exp().sum());
  };
  return log_q(x) - log_q(y);
}

}  // namespace swarmfit
