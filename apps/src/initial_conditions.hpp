// Initial conditions of an ensemble from a CSV file with columns system, body, mass, x, y, z, vx,
// vy, vz (optional: radius, time); the Swarm-NG generator is integrators/swarm_systems.hpp.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "swarmfit/integrators/ensemble.hpp"
#include "swarmfit/integrators/swarm_systems.hpp"

namespace swarmfit::app {

// Reads and validates a CSV file. Throws InputError naming file, line and column.
std::unique_ptr<Ensemble> read_initial_conditions(const std::string& path);

}  // namespace swarmfit::app
