#include "fit_summary.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "swarmfit/models/units.hpp"

namespace swarmfit::app {

namespace {

std::vector<std::string> split(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, '\n'))
    if (!item.empty()) out.push_back(item);
  return out;
}
std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& i : items) out += i + "\n";
  return out;
}

// Quantile q of sorted values (linear interpolation between order statistics).
double quantile(const std::vector<double>& sorted, double q) {
  const double h = q * (sorted.size() - 1);
  const std::size_t k = static_cast<std::size_t>(h);
  if (k + 1 >= sorted.size()) return sorted.back();
  return sorted[k] + (h - k) * (sorted[k + 1] - sorted[k]);
}

SummaryRow describe(std::string name, std::string unit, std::vector<double> values) {
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

}  // namespace

void describe_model(const PlanetaryModel& model, std::map<std::string, std::string>& a) {
  a["model_planets"] = join(model.planets());
  a["model_instruments"] = join(model.instruments());
  const ModelOptions& o = model.options();
  a["element_frame"] = o.frame == ElementFrame::kJacobi ? "jacobi" : "astrocentric";
  a["mass_parameter"] = o.mass_from_semi_amplitude ? "K" : "mass";
  a["phase_parameter"] = o.phase_from_mean_anomaly ? "mean_anomaly" : "tc";
  a["eccentricity_parameter"] = o.plain_eccentricity_vector ? "ecosw" : "secosw";
  char buffer[40];
  std::snprintf(buffer, sizeof buffer, "%.17g", o.reference_epoch);
  a["reference_epoch"] = buffer;
}

std::unique_ptr<PlanetaryModel> model_from_attributes(const std::map<std::string, std::string>& a) {
  for (const char* key :
       {"model_planets", "model_instruments", "element_frame", "mass_parameter", "phase_parameter", "reference_epoch"})
    if (!a.count(key)) return nullptr;
  ModelOptions o;
  o.frame = a.at("element_frame") == "jacobi" ? ElementFrame::kJacobi : ElementFrame::kAstrocentric;
  o.mass_from_semi_amplitude = a.at("mass_parameter") == "K";
  o.phase_from_mean_anomaly = a.at("phase_parameter") == "mean_anomaly";
  // Run files written before the option existed hold sqrt(e) cos w, sqrt(e) sin w.
  o.plain_eccentricity_vector = a.count("eccentricity_parameter") && a.at("eccentricity_parameter") == "ecosw";
  o.reference_epoch = std::stod(a.at("reference_epoch"));
  return std::make_unique<PlanetaryModel>(split(a.at("model_planets")), split(a.at("model_instruments")), o);
}

long first_kept_draw(const RunRecord& run, long burn_in) {
  const Chain& c = run.chain;
  if (c.num_draws() == 0) return 0;
  if (burn_in < 0) return c.num_draws() / 2;
  long first = 0;
  while (first < c.num_draws() && c.generation[first] <= burn_in) ++first;
  return first;
}

std::vector<SummaryRow> summarize(const RunRecord& run, const PlanetaryModel* model, long first) {
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
    SummaryRow r = describe(run.names[k], run.units[k], values);
    r.rhat = diagnostics[p].rhat;
    r.ess_bulk = diagnostics[p].ess_bulk;
    r.ess_tail = diagnostics[p].ess_tail;
    rows.push_back(r);
  }
  if (!model || model->num_parameters() != static_cast<int>(run.names.size())) return rows;
  // Derived quantities of every kept draw.
  const int np = model->num_planets();
  const bool from_k = model->options().mass_from_semi_amplitude;
  std::vector<std::vector<double>> mass(np), mass_j(np), a(np), e(np), omega(np), k_amp(np);
  std::vector<double> full(run.names.size()), free(c.num_parameters);
  std::vector<PlanetState> states;
  for (long t = first; t < c.num_draws(); ++t)
    for (int w = 0; w < c.num_walkers; ++w) {
      full = run.values;
      for (int p = 0; p < c.num_parameters; ++p) full[run.free[p]] = c.parameter(t, w, p);
      if (!model->planet_states(full.data(), states)) continue;
      double interior = full[0];
      for (int q = 0; q < np; ++q) {
        const PlanetState& s = states[q];
        mass[q].push_back(s.mass / units::kEarthMass);
        mass_j[q].push_back(s.mass / units::kJupiterMass);
        a[q].push_back(s.a);
        e[q].push_back(s.e);
        omega[q].push_back(std::remainder(s.omega, 2 * units::kPi) / units::kDegree);
        const double central = model->options().frame == ElementFrame::kJacobi ? interior : full[0];
        k_amp[q].push_back(semi_amplitude(s.mass, central, full[model->planet_parameter(q, 0)], s.e, s.inc));
        interior += s.mass;
      }
    }
  for (int q = 0; q < np && !mass[q].empty(); ++q) {
    const std::string& name = model->planets()[q];
    std::vector<SummaryRow> derived;
    if (from_k)
      derived.push_back(describe("mass_" + name, "Earth mass", mass[q]));
    else
      derived.push_back(describe("K_" + name, "m/s", k_amp[q]));
    derived.push_back(describe("mass_jupiter_" + name, "Jupiter mass", mass_j[q]));
    derived.push_back(describe("a_" + name, "AU", a[q]));
    derived.push_back(describe("e_" + name, "", e[q]));
    derived.push_back(describe("omega_" + name, "deg", omega[q]));
    for (auto& r : derived) {
      r.derived = true;
      rows.push_back(r);
    }
  }
  return rows;
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

}  // namespace swarmfit::app
