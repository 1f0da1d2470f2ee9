#include "swarmfit/inference/moves/snooker.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace swarmfit {

SnookerMove::SnookerMove(SnookerSettings settings) : settings_(settings) {
  if (!(settings_.probability >= 0 && settings_.probability <= 1))
    throw std::invalid_argument("DEMCMC: the snooker probability must be in [0, 1]");
}

double SnookerMove::propose(const HalfUpdate& half, std::uint64_t walker, const Eigen::Ref<const Eigen::VectorXd>& x,
                            Eigen::Ref<Eigen::VectorXd> proposal) const {
  const CounterRandom& random = half.random;
  const long d = x.size(), n = half.n;
  const std::uint64_t g = half.stream;
  const long z = static_cast<long>(random.below(n, RandomPurpose::kPartnerZ, walker, g, 0));
  long z1 = static_cast<long>(random.below(n - 1, RandomPurpose::kPartnerA, walker, g, 0));
  if (z1 >= z) ++z1;
  long z2 = static_cast<long>(random.below(n - 2, RandomPurpose::kPartnerB, walker, g, 0));
  const long lo = std::min(z, z1), hi = std::max(z, z1);
  if (z2 >= lo) ++z2;
  if (z2 >= hi) ++z2;
  const Eigen::VectorXd from_z = x - half.member(z);
  const double norm = from_z.norm();
  if (!(norm > 0)) {
    proposal = x;  // a null move
    return 0.0;
  }
  const Eigen::VectorXd u = from_z / norm;
  const double gamma_s = 1.2 + random.uniform(RandomPurpose::kMove, walker, g, 1);  // U(1.2, 2.2)
  const double projection = (half.member(z1) - half.member(z2)).dot(u);
  proposal = x + gamma_s * projection * u;
  const double new_norm = (proposal - half.member(z)).norm();
  return (d - 1) * std::log(new_norm / norm);
}

}  // namespace swarmfit
