// Synthetic RV and transit-time data from a known truth (the parameter values of a model
// configuration), by the same integration and observers as the likelihood: RVs at uniform random
// times, every transit of the chosen planets, Gaussian noise from a seeded counter-based stream
// (inference/random.hpp). For the bundled demo, recovery tests and calibration checks
// (`swarmfit simulate`, bench/sbc_coverage.py).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "swarmfit/models/model_config.hpp"

namespace swarmfit {

struct SimulationPlan {
  double span = 0.0;                                        // days of data after the reference epoch
  int rv_count = 40;                                        // RVs at uniform random times (0: none)
  double rv_error = 3.0, rv_jitter = 0.0, rv_offset = 0.0;  // m/s: error bars, extra noise, zero point
  std::string instrument = "SIM";
  std::vector<std::string> transit_planets;  // planets with transit times (empty: all)
  double transit_error = 2.0 / 1440.0;       // days
  std::uint64_t seed = 1;
};

struct SimulatedData {
  PlanetaryModel model;       // the truth's planets with the simulated instrument
  std::vector<double> truth;  // its parameters: the configuration's values, the plan's offset and jitter
  Dataset data;               // the simulated observations, noise included
};

// Throws InputError where the plan does not fit the truth (an unknown planet, phase_parameter not
// tc, nothing to simulate, a truth the plan cannot observe).
SimulatedData simulate_data(const ModelConfig& truth_config, const SimulationPlan& plan);

}  // namespace swarmfit
