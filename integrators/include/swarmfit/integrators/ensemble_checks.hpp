// Checks and comparisons of whole ensembles, for every face that integrates one (the integrate
// command, the benchmarks, the Python package): initial states that cannot be integrated,
// energy errors, and the Swarm-NG test mode's state differences.
#pragma once

#include <string>
#include <vector>

#include "swarmfit/integrators/ensemble.hpp"

namespace swarmfit {

// Why system s cannot be integrated as given ("" when it can), starting "body i": a non-finite
// mass, position or velocity, a negative mass, or two bodies at the same place.
std::string initial_state_problem(const Ensemble& e, long system);

// The total energy of every system (Ensemble::energy).
std::vector<double> system_energies(const Ensemble& e, double G);
// (E_after - E_before) / |E_before| of every system.
std::vector<double> relative_energy_errors(const std::vector<double>& before, const Ensemble& after, double G);
// The largest and the median |error| (0 for none).
struct ErrorSpread {
  double worst = 0, median = 0;
};
ErrorSpread error_spread(const std::vector<double>& errors);

// Swarm-NG test mode (Dindar et al. 2013, sec. 5.2.1): the largest position and velocity
// differences of system s from the reference, relative to the reference system's largest
// position and velocity (so a star near the origin counts), and the time difference relative to
// max(|t_reference|, 1).
struct StateDifference {
  double position = 0, velocity = 0, time = 0;
};
StateDifference state_difference(const Ensemble& e, const Ensemble& reference, long system);

}  // namespace swarmfit
