// The Swarm-NG benchmark systems (Dindar et al. 2013, sec. 5.1), the initial conditions of the
// integrate command's generator, the benchmarks and the tests.
#pragma once

#include <cstdint>
#include <memory>

#include "swarmfit/integrators/ensemble.hpp"

namespace swarmfit {

struct GeneratorSettings {
  long num_systems = 1;
  int num_bodies = 3;
  double planet_mass = 1e-3;
  double spacing_factor = 0.4;
  double G = 1.0;
  std::uint64_t seed = 1;
};

// Star m0 = 1 at rest at the origin; planets of mass planet_mass on circular coplanar orbits at
// a_i = (1 + spacing_factor)^(i-1) with random phases (Swarm-NG, Dindar et al. 2013, sec. 5.1).
// The phases come from a counter-based hash of (seed, system, planet), so system k is the same
// whatever the ensemble size.
std::unique_ptr<Ensemble> generate_swarm_ensemble(const GeneratorSettings& settings);

}  // namespace swarmfit
