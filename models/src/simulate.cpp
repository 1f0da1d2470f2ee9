#include "swarmfit/models/simulate.hpp"

#include <algorithm>
#include <cmath>

#include "swarmfit/inference/random.hpp"
#include "swarmfit/models/status.hpp"
#include "swarmfit/observations/input_error.hpp"

namespace swarmfit {

SimulatedData simulate_data(const ModelConfig& c, const SimulationPlan& o) {
  const PlanetaryModel& truth_model = *c.model;
  const double t_ref = truth_model.options().reference_epoch;
  const CounterRandom random(o.seed);

  // The observing plan: RVs at uniform random times; transits at every epoch of the linear
  // ephemeris of the osculating period (the observers match model transits to these epochs).
  Dataset plan;
  if (o.rv_count > 0) {
    plan.instruments = {o.instrument};
    std::vector<double> times;
    for (int k = 0; k < o.rv_count; ++k)
      times.push_back(t_ref + o.span * random.uniform(RandomPurpose::kTest, k, 0, 0));
    std::sort(times.begin(), times.end());
    for (double t : times) plan.rv.push_back(RvObservation{t, 0.0, o.rv_error, 0, "plan"});
  }
  const std::vector<std::string> chosen = o.transit_planets.empty() ? truth_model.planets() : o.transit_planets;
  for (const std::string& name : chosen) {
    const auto& names = truth_model.planets();
    const int q = static_cast<int>(std::find(names.begin(), names.end(), name) - names.begin());
    if (q == truth_model.num_planets()) throw InputError("transit planets: no planet '" + name + "' in " + c.path);
    const double period = c.values[truth_model.planet_parameter(q, 0)];
    double tc = c.values[truth_model.planet_parameter(q, 4)];
    if (truth_model.options().phase_from_mean_anomaly)
      throw InputError(c.path + ": simulate needs phase_parameter = tc");
    while (tc < t_ref) tc += period;
    plan.planets.push_back(name);
    for (long epoch = 0; tc + epoch * period < t_ref + o.span; ++epoch)
      plan.transits.push_back(TransitObservation{static_cast<int>(plan.planets.size()) - 1, epoch, tc + epoch * period,
                                                 o.transit_error, "plan"});
  }
  if (plan.rv.empty() && plan.transits.empty()) throw InputError("nothing to simulate");

  // The truth with the simulated instrument's offset and jitter.
  SimulatedData out{PlanetaryModel(truth_model.planets(), plan.instruments, truth_model.options()), {}, {}};
  const PlanetaryModel& model = out.model;
  out.truth.assign(model.num_parameters(), 0.0);
  for (int k = 0; k < 1 + 7 * model.num_planets(); ++k) out.truth[k] = c.values[k];
  if (!plan.instruments.empty()) {
    out.truth[model.offset_parameter(0)] = o.rv_offset;
    out.truth[model.jitter_parameter(0)] = o.rv_jitter;
  }
  const LikelihoodProblem problem(plan, model, c.likelihood, out.truth);
  double lnl = 0;
  int status = 0;
  ModelCurves curves;
  problem.evaluate(out.truth.data(), 1, &lnl, &status, &curves);
  if (status != 0)
    throw InputError(c.path + ": the truth cannot be observed as planned (status " + model_status_name(status) + ")");

  // The observations: the model plus Gaussian noise of the error bar (and the jitter, for RVs).
  Dataset& data = out.data;
  data.instruments = plan.instruments;
  for (std::size_t k = 0; k < plan.rv.size(); ++k) {
    const double noise =
        std::sqrt(o.rv_error * o.rv_error + o.rv_jitter * o.rv_jitter) * random.normal(RandomPurpose::kTest, k, 1, 0);
    data.rv.push_back(RvObservation{plan.rv[k].time, curves.rv[k] + o.rv_offset + noise, o.rv_error, 0, "simulated"});
  }
  data.planets = plan.planets;
  const std::vector<TransitObservation>& rows = problem.transit_rows();
  for (std::size_t r = 0; r < rows.size(); ++r) {
    const double noise = o.transit_error * random.normal(RandomPurpose::kTest, r, 2, 0);
    const int planet = static_cast<int>(
        std::find(plan.planets.begin(), plan.planets.end(), model.planets()[problem.transit_row_planet(r)]) -
        plan.planets.begin());
    data.transits.push_back(
        TransitObservation{planet, rows[r].epoch, curves.transits[r] + noise, o.transit_error, "simulated"});
  }
  return out;
}

}  // namespace swarmfit
