// Initial conditions of an ensemble: the Swarm-NG section 5.1 generator, or a CSV file with
// columns system, body, mass, x, y, z, vx, vy, vz (optional: radius, time).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "swarmfit/integrators/ensemble.hpp"

namespace swarmfit::app {

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

// Reads and validates a CSV file. Throws InputError naming file, line and column.
std::unique_ptr<Ensemble> read_initial_conditions(const std::string& path);

}  // namespace swarmfit::app
