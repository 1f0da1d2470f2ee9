// The posterior summary of a run: median, 16/84% and 2.5/97.5% quantiles, mean and sd of every
// sampled parameter, with split R-hat and bulk/tail ESS (Vehtari et al. 2021); printed as a table
// and written as CSV. Rows of derived quantities (the caller's) print without diagnostics.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "swarmfit/inference/run_file.hpp"

namespace swarmfit {

struct SummaryRow {
  std::string name, unit;
  double median = 0, lower = 0, upper = 0;  // 16% and 84% quantiles
  double lower95 = 0, upper95 = 0;          // 2.5% and 97.5%
  double mean = 0, sd = 0;
  double rhat = 0, ess_bulk = 0, ess_tail = 0;  // NaN for derived quantities
  bool derived = false;
};

// Quantiles (linear interpolation between order statistics), mean and sd of the finite values;
// diagnostics NaN. Throws std::runtime_error when none is finite.
SummaryRow summarize_values(std::string name, std::string unit, std::vector<double> values);
// One row per sampled parameter over draws [first_draw, num_draws()) (at least 4), with diagnostics.
std::vector<SummaryRow> summarize_chain(const RunRecord& run, long first_draw);
// The walkers' acceptance over draws (first_draw, num_draws()): their mean, and the lowest walker's.
struct AcceptanceSummary {
  double mean = 0, lowest = 1;
};
AcceptanceSummary summarize_acceptance(const Chain& chain, long first_draw);

void print_summary(std::ostream& out, const std::vector<SummaryRow>& rows);
// Written atomically (hdf5_io.hpp's AtomicFile).
void write_summary_csv(const std::string& path, const std::vector<SummaryRow>& rows);

}  // namespace swarmfit
