#include "swarmfit/models/fit_summary.hpp"

#include <cmath>
#include <cstdio>
#include <sstream>

#include "swarmfit/models/units.hpp"

namespace swarmfit {

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

std::vector<SummaryRow> derived_quantities(const RunRecord& run, const PlanetaryModel& model, long first) {
  const Chain& c = run.chain;
  std::vector<SummaryRow> rows;
  const int np = model.num_planets();
  const bool from_k = model.options().mass_from_semi_amplitude;
  std::vector<std::vector<double>> mass(np), mass_j(np), a(np), e(np), omega(np), k_amp(np);
  std::vector<double> full(run.names.size());
  std::vector<PlanetState> states;
  for (long t = first; t < c.num_draws(); ++t)
    for (int w = 0; w < c.num_walkers; ++w) {
      full = run.values;
      for (int p = 0; p < c.num_parameters; ++p) full[run.free[p]] = c.parameter(t, w, p);
      if (!model.planet_states(full.data(), states)) continue;
      double interior = full[0];
      for (int q = 0; q < np; ++q) {
        const PlanetState& s = states[q];
        mass[q].push_back(s.mass / units::kEarthMass);
        mass_j[q].push_back(s.mass / units::kJupiterMass);
        a[q].push_back(s.a);
        e[q].push_back(s.e);
        omega[q].push_back(std::remainder(s.omega, 2 * units::kPi) / units::kDegree);
        const double central = model.options().frame == ElementFrame::kJacobi ? interior : full[0];
        k_amp[q].push_back(semi_amplitude(s.mass, central, full[model.planet_parameter(q, 0)], s.e, s.inc));
        interior += s.mass;
      }
    }
  for (int q = 0; q < np && !mass[q].empty(); ++q) {
    const std::string& name = model.planets()[q];
    std::vector<SummaryRow> derived;
    if (from_k)
      derived.push_back(summarize_values("mass_" + name, "Earth mass", mass[q]));
    else
      derived.push_back(summarize_values("K_" + name, "m/s", k_amp[q]));
    derived.push_back(summarize_values("mass_jupiter_" + name, "Jupiter mass", mass_j[q]));
    derived.push_back(summarize_values("a_" + name, "AU", a[q]));
    derived.push_back(summarize_values("e_" + name, "", e[q]));
    derived.push_back(summarize_values("omega_" + name, "deg", omega[q]));
    for (auto& r : derived) {
      r.derived = true;
      rows.push_back(r);
    }
  }
  return rows;
}

std::vector<SummaryRow> summarize_fit(const RunRecord& run, const PlanetaryModel* model, long first) {
  std::vector<SummaryRow> rows = summarize_chain(run, first);
  if (!model || model->num_parameters() != static_cast<int>(run.names.size())) return rows;
  for (SummaryRow& r : derived_quantities(run, *model, first)) rows.push_back(std::move(r));
  return rows;
}

}  // namespace swarmfit
