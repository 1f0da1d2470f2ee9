// The posterior summary of a fit: median and 16/84% (and 2.5/97.5%) of every free parameter,
// with R-hat and ESS (Vehtari et al. 2021), plus derived planet quantities (mass in Earth and
// Jupiter masses or K, semi-major axis, e, omega); printed and written as CSV.
#pragma once

#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "swarmfit/inference/run_file.hpp"
#include "swarmfit/models/planetary_model.hpp"

namespace swarmfit::app {

struct SummaryRow {
  std::string name, unit;
  double median = 0, lower = 0, upper = 0;  // 16% and 84% quantiles
  double lower95 = 0, upper95 = 0;          // 2.5% and 97.5%
  double mean = 0, sd = 0;
  double rhat = 0, ess_bulk = 0, ess_tail = 0;  // NaN for derived quantities
  bool derived = false;
};

// Attributes that let `swarmfit summary` rebuild the model from a run file alone.
void describe_model(const PlanetaryModel& model, std::map<std::string, std::string>& attributes);
std::unique_ptr<PlanetaryModel> model_from_attributes(const std::map<std::string, std::string>& attributes);

// The draw where the summaries start: burn_in generations (< 0: half the run).
long first_kept_draw(const RunRecord& run, long burn_in);
std::vector<SummaryRow> summarize(const RunRecord& run, const PlanetaryModel* model, long first_draw);
void print_summary(std::ostream& out, const std::vector<SummaryRow>& rows);
void write_summary_csv(const std::string& path, const std::vector<SummaryRow>& rows);

}  // namespace swarmfit::app
