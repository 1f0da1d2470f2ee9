#include "swarmfit/inference/summary.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <stdexcept>

namespace swarmfit {

namespace {

// Quantile q of sorted values (linear interpolation between order statistics).
double quantile(const std::vector<double>& sorted, double q) {
  const double h = q * (sorted.size() - 1);
  const std::size_t k = static_cast<std::size_t>(h);
  if (k + 1 >= sorted.size()) return sorted.back();
  return sorted[k] + (h - k) * (sorted[k + 1] - sorted[k]);
}

}  // namespace

SummaryRow summarize_values(std::string name, std::string unit, std::vector<double> values) {
  SummaryRow r;
  r.name = std::move(name);
  r.unit = std::move(unit);
  values.erase(std::remove_if(values.begin(), values.end(), [](double v) { return !std::isfinite(v); }), values.end());
  if (values.empty()) throw std::runtime_error("no finite draws of " + r.name);
  std::sort(values.begin(), values.end());
  r.median = quantile(values, 0.5);
  r.lower = quantile(values, 0.16);
  r.upper = quantile(values, 0.84);
  r.lower95 = quantile(values, 0.025);
  r.upper95 = quantile(values, 0.975);
  double sum = 0, sum2 = 0;
  for (double v : values) sum += v;
  r.mean = sum / values.size();
  for (double v : values) sum2 += (v - r.mean) * (v - r.mean);
  r.sd = values.size() > 1 ? std::sqrt(sum2 / (values.size() - 1)) : 0.0;
  r.rhat = r.ess_bulk = r.ess_tail = std::nan("");
  return r;
}

std::vector<SummaryRow> summarize_chain(const RunRecord& run, long first) {
  const Chain& c = run.chain;
  const long kept = c.num_draws() - first;
  if (kept < 4)
    throw std::runtime_error("too few draws after the burn-in for a summary (" + std::to_string(kept) + ")");
  std::vector<SummaryRow> rows;
  const std::vector<ConvergenceDiagnostics> diagnostics = c.diagnostics(first);
  for (int p = 0; p < c.num_parameters; ++p) {
    std::vector<double> values;
    for (const auto& series : c.series(p, first)) values.insert(values.end(), series.begin(), series.end());
    const int k = run.free[p];
    SummaryRow r = summarize_values(run.names[k], run.units[k], values);
    r.rhat = diagnostics[p].rhat;
    r.ess_bulk = diagnostics[p].ess_bulk;
    r.ess_tail = diagnostics[p].ess_tail;
    rows.push_back(r);
  }
  return rows;
}

AcceptanceSummary summarize_acceptance(const Chain& chain, long first) {
  const std::vector<double> acceptance = chain.acceptance(first);
  AcceptanceSummary out;
  for (double a : acceptance) {
    out.mean += a / acceptance.size();
    out.lowest = std::min(out.lowest, a);
  }
  return out;
}

void print_summary(std::ostream& out, const std::vector<SummaryRow>& rows) {
  char line[256];
  std::snprintf(line, sizeof line, "  %-22s %-12s %18s %14s %14s %8s %9s\n", "parameter", "unit", "median", "-(16%)",
                "+(84%)", "R-hat", "ESS bulk");
  out << line;
  bool derived_header = false;
  for (const SummaryRow& r : rows) {
    if (r.derived && !derived_header) {
      out << "  derived:\n";
      derived_header = true;
    }
    if (r.derived)
      std::snprintf(line, sizeof line, "  %-22s %-12s %18.10g %14.6g %14.6g\n", r.name.c_str(), r.unit.c_str(),
                    r.median, r.median - r.lower, r.upper - r.median);
    else
      std::snprintf(line, sizeof line, "  %-22s %-12s %18.10g %14.6g %14.6g %8.4f %9.0f\n", r.name.c_str(),
                    r.unit.c_str(), r.median, r.median - r.lower, r.upper - r.median, r.rhat, r.ess_bulk);
    out << line;
  }
}

void write_summary_csv(const std::string& path, const std::vector<SummaryRow>& rows) {
  h5::AtomicFile file(path);
  {
    std::ofstream out(file.partial_path());
    out << "parameter,unit,median,lower_16,upper_84,lower_2.5,upper_97.5,mean,sd,rhat,ess_bulk,ess_tail,derived\n";
    char line[512];
    for (const SummaryRow& r : rows) {
      std::snprintf(line, sizeof line, "%s,%s,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.6g,%.6g,%.6g,%d\n",
                    r.name.c_str(), r.unit.c_str(), r.median, r.lower, r.upper, r.lower95, r.upper95, r.mean, r.sd,
                    r.rhat, r.ess_bulk, r.ess_tail, r.derived ? 1 : 0);
      out << line;
    }
    out.close();
    if (!out) throw std::runtime_error(path + ": write failed");
  }
  file.commit();
}

}  // namespace swarmfit
