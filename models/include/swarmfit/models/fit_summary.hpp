// What a run file says about its planetary model (attributes written by a fit, so that a summary
// needs the run file alone) and the posterior summary of a fit: the sampled parameters'
// (inference/summary.hpp) followed by derived quantities per planet: mass in Earth masses (or K,
// m/s, whichever is not sampled), mass in Jupiter masses, semi-major axis, e and omega.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "swarmfit/inference/run_file.hpp"
#include "swarmfit/inference/summary.hpp"
#include "swarmfit/models/planetary_model.hpp"

namespace swarmfit {

// Attributes that let `swarmfit summary` rebuild the model from a run file alone.
void describe_model(const PlanetaryModel& model, std::map<std::string, std::string>& attributes);
// Null where the attributes do not describe a model.
std::unique_ptr<PlanetaryModel> model_from_attributes(const std::map<std::string, std::string>& attributes);

// Derived quantities of every kept draw from first_draw on (rows marked derived).
std::vector<SummaryRow> derived_quantities(const RunRecord& run, const PlanetaryModel& model, long first_draw);
// summarize_chain's rows, then the derived quantities where `model` is the run's.
std::vector<SummaryRow> summarize_fit(const RunRecord& run, const PlanetaryModel* model, long first_draw);

}  // namespace swarmfit
