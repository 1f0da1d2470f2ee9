// Sampler settings the DEMCMC tests share.
#pragma once

#include <cstdint>

#include "swarmfit/inference/demcmc.hpp"

namespace swarmfit::testing_support {

// The gradient-move settings the sampler tests vary: seed, probability, leapfrog steps (0:
// adapted length), whole population or halves, the burn-in that adapts them.
inline DemcmcSettings gradient_settings(std::uint64_t seed, double probability, int steps, bool whole,
                                        long adapt_until) {
  DemcmcSettings settings;
  settings.seed = seed;
  settings.gradient.probability = probability;
  settings.gradient.steps = steps;
  settings.gradient.whole = whole;
  settings.gradient.adapt_until = adapt_until;
  return settings;
}

}  // namespace swarmfit::testing_support
