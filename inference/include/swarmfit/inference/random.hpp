// Counter-based random numbers (Salmon et al. 2011, "Parallel random numbers: as easy as 1, 2,
// 3", SC'11; Random123 Philox4x64-10): every number is a pure function of (seed, purpose, walker,
// generation, index), so a chain is the same whatever the thread count, the backend or a
// resume in between, and no generator state needs saving.
#pragma once

#include <Random123/philox.h>

#include <cmath>
#include <cstdint>

namespace swarmfit {

// What a random number is for: separate streams that never collide.
enum class RandomPurpose : std::uint64_t {
  kPartnerA = 1,     // DE: first partner walker
  kPartnerB = 2,     // DE: second partner walker
  kJitter = 3,       // DE: the small Gaussian added to the difference vector
  kAccept = 4,       // Metropolis acceptance
  kInitial = 5,      // initial walkers
  kMove = 6,         // DE: which move (differential or snooker) and the snooker gamma
  kPartnerZ = 7,     // DE-snooker: the point z
  kSwapOrder = 8,    // tempering: the permutation pairing two temperatures
  kSwap = 9,         // tempering: swap acceptance
  kOptimize = 10,    // differential-evolution optimisation
  kPredictive = 11,  // posterior draws kept for plots
  kOutlier = 12,     // the walker an outlier is moved onto
  kKdeSubset = 13,   // KDE move: which members of the other half are the kernel centres
  kKdeDraw = 14,     // KDE move: the kernel a proposal is drawn from and its Gaussian offset
  kGradient = 15,    // gradient move: whether a half update is one, its step and the momenta
  kTest = 100,       // tests
};

class CounterRandom {
 public:
  explicit CounterRandom(std::uint64_t seed) : seed_(seed) {}

  // Four independent 64-bit words for (purpose, walker, generation, block).
  r123::Philox4x64::ctr_type words(RandomPurpose purpose, std::uint64_t walker, std::uint64_t generation,
                                   std::uint64_t block) const {
    r123::Philox4x64 philox;
    const r123::Philox4x64::ctr_type counter = {{walker, generation, block, 0}};
    const r123::Philox4x64::key_type key = {{seed_, static_cast<std::uint64_t>(purpose)}};
    return philox(counter, key);
  }
  // Uniform in (0, 1): the top 53 bits, offset by half a unit so 0 and 1 never occur.
  double uniform(RandomPurpose purpose, std::uint64_t walker, std::uint64_t generation, std::uint64_t index) const {
    const auto w = words(purpose, walker, generation, index / 4);
    return ((w.v[index % 4] >> 11) + 0.5) * (1.0 / 9007199254740992.0);
  }
  // Standard normal by Box-Muller from two uniforms of the same block.
  double normal(RandomPurpose purpose, std::uint64_t walker, std::uint64_t generation, std::uint64_t index) const {
    const auto w = words(purpose, walker, generation, index / 2);
    const int k = 2 * static_cast<int>(index % 2);
    const double u1 = ((w.v[k] >> 11) + 0.5) * (1.0 / 9007199254740992.0);
    const double u2 = ((w.v[k + 1] >> 11) + 0.5) * (1.0 / 9007199254740992.0);
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
  }
  // Uniform integer in [0, n), n > 0 (rejection-free: the bias is below 2^-53 n).
  std::uint64_t below(std::uint64_t n, RandomPurpose purpose, std::uint64_t walker, std::uint64_t generation,
                      std::uint64_t index) const {
    const auto k = static_cast<std::uint64_t>(uniform(purpose, walker, generation, index) * static_cast<double>(n));
    return k < n ? k : n - 1;
  }
  std::uint64_t seed() const { return seed_; }

 private:
  std::uint64_t seed_;
};

}  // namespace swarmfit
