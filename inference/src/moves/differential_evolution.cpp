#include "swarmfit/inference/moves/differential_evolution.hpp"

#include <cmath>

namespace swarmfit {

void DifferentialEvolutionMove::prepare(const HalfUpdate& half) {
  const long d = half.walkers.rows(), n = half.n;
  const bool unit_gamma = settings_.gamma_one_every > 0 && (half.generation + 1) % settings_.gamma_one_every == 0;
  gamma_ = unit_gamma ? 1.0 : settings_.gamma_scale / std::sqrt(2.0 * d);
  const Eigen::MatrixXd others = half.other_half();
  const Eigen::VectorXd mean = others.rowwise().mean();
  spread_ = ((others.colwise() - mean).array().square().rowwise().sum() / (n - 1)).sqrt();
}

void DifferentialEvolutionMove::propose(const HalfUpdate& half, std::uint64_t walker,
                                        const Eigen::Ref<const Eigen::VectorXd>& x,
                                        Eigen::Ref<Eigen::VectorXd> proposal) const {
  const CounterRandom& random = half.random;
  const long d = x.size(), n = half.n;
  const std::uint64_t g = half.stream;
  const long a = static_cast<long>(random.below(n, RandomPurpose::kPartnerA, walker, g, 0));
  long b = static_cast<long>(random.below(n - 1, RandomPurpose::kPartnerB, walker, g, 0));
  if (b >= a) ++b;  // a != b, both uniform over the other half
  for (long p = 0; p < d; ++p) {
    const double e = settings_.jitter * spread_(p) * random.normal(RandomPurpose::kJitter, walker, g, p);
    proposal(p) = x(p) + gamma_ * (half.walkers(p, half.other + a) - half.walkers(p, half.other + b)) + e;
  }
}

}  // namespace swarmfit
