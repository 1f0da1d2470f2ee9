#include "swarmfit/models/stability.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "swarmfit/models/status.hpp"
#include "swarmfit/models/system_setup.hpp"
#include "swarmfit/models/units.hpp"

namespace swarmfit {

namespace {

struct SetOrbits {
  bool ok = false;
  double inner_period = 0.0, outer_period = 0.0, outer_a = 0.0;
  CriteriaResult criteria;
};

SetOrbits orbits_of(const PlanetaryModel& model, const double* p) {
  SetOrbits o;
  std::vector<PlanetState> states;
  if (!model.planet_states(p, states)) return o;
  std::vector<PlanetOrbit> orbits;
  o.inner_period = 1e300;
  for (int k = 0; k < model.num_planets(); ++k) {
    const double period = p[model.planet_parameter(k, 0)];
    o.inner_period = std::min(o.inner_period, period);
    o.outer_period = std::max(o.outer_period, period);
    o.outer_a = std::max(o.outer_a, states[k].a);
    orbits.push_back({states[k].mass, states[k].a, states[k].e, states[k].inc, states[k].node});
  }
  o.criteria = stability_criteria(p[0], orbits);
  o.ok = true;
  return o;
}

}  // namespace

StabilityPlan plan_stability(const PlanetaryModel& model, const std::vector<double>& params, long count,
                             const StabilityOptions& options) {
  if (!(options.steps_per_orbit > 0) || !(options.horizon_orbits > 0))
    throw std::invalid_argument("stability: steps_per_orbit and horizon_orbits must be positive");
  const int np = model.num_parameters();
  double inner = 1e300, outer = 0;
  for (long s = 0; s < count; ++s) {
    const SetOrbits o = orbits_of(model, params.data() + s * np);
    if (!o.ok) continue;
    inner = std::min(inner, o.inner_period);
    outer = std::max(outer, o.outer_period);
  }
  StabilityPlan plan;
  if (outer == 0) return plan;
  plan.time_step = inner / options.steps_per_orbit;
  plan.horizon = outer * options.horizon_orbits;
  plan.steps = static_cast<long>(std::ceil(plan.horizon / plan.time_step));
  return plan;
}

std::vector<SetStability> assess_stability(const PlanetaryModel& model, const std::vector<double>& params, long count,
                                           const StabilityOptions& options,
                                           const std::function<void(double)>& progress) {
  const IntegratorInfo* integrator = find_integrator(options.integrator);
  if (!integrator) throw std::invalid_argument("stability: unknown integrator " + options.integrator);
  if (integrator->adaptive)
    throw std::invalid_argument("stability: take a fixed-step integrator (" + options.integrator + " adapts its step)");
  const int np = model.num_parameters(), nb = model.num_bodies();
  if (static_cast<long>(params.size()) < count * np) throw std::invalid_argument("stability: too few parameters");
  const StabilityPlan plan = plan_stability(model, params, count, options);
  std::vector<SetStability> out(count);
  std::vector<SetOrbits> orbits(count);
  double outer_a = 0;
  for (long s = 0; s < count; ++s) {
    orbits[s] = orbits_of(model, params.data() + s * np);
    outer_a = std::max(outer_a, orbits[s].outer_a);
  }
  RunRequest request;
  request.integrator = integrator;
  request.step.G = units::kG;
  request.step.time_step = plan.time_step;
  request.step.mvs_coordinates = MvsCoordinates::kJacobi;
  request.monitors.close_approach = options.close_approach;
  request.monitors.rmax = options.eject_factor * outer_a;
  request.monitors.stop_on_unbound = true;
  request.threads = options.threads;
  const long batch = std::max(1L, options.batch);
  const int calls = std::max(1, options.progress_calls);
  for (long first = 0; first < count; first += batch) {
    const long m = std::min(batch, count - first);
    Ensemble e(m, nb);
    std::vector<int> invalid;
    set_up_systems(model, params.data() + first * np, m, e, invalid, options.threads);
    ChaosState chaos(e);
    for (int k = 1; k <= calls; ++k) {
      request.destination_time = plan.horizon * k / calls;
      integrate_chaos(e, chaos, request, options.backend);
      if (progress) progress((first + m * static_cast<double>(k) / calls) / count);
    }
    for (long s = 0; s < m; ++s) {
      SetStability& r = out[first + s];
      r.status = e.status(s);
      r.time = e.time(s);
      r.criteria = orbits[first + s].criteria;
      if (orbits[first + s].ok) {
        r.orbits = r.time / orbits[first + s].outer_period;
        r.chaos = chaos.indicators(s);
        r.chaotic = r.chaos.megno > options.megno_limit;
      }
    }
  }
  return out;
}

long apply_stability(const PlanetaryModel& model, const StabilityConstraint& c, const double* params, long count,
                     double* log_likelihood, int* status) {
  if (!c.active()) return 0;
  const int np = model.num_parameters();
  std::vector<long> candidates;
  for (long s = 0; s < count; ++s)
    if (std::isfinite(log_likelihood[s])) candidates.push_back(s);
  std::vector<char> fails(candidates.size(), 0);
  if (c.mode == "amd" || c.mode == "hill") {
    for (std::size_t k = 0; k < candidates.size(); ++k) {
      const SetOrbits o = orbits_of(model, params + candidates[k] * np);
      fails[k] = !o.ok || (c.mode == "amd" ? !o.criteria.amd_stable : !o.criteria.hill_stable);
    }
  } else if (c.mode == "integrate" || c.mode == "megno") {
    std::vector<double> sets;
    sets.reserve(candidates.size() * np);
    for (long s : candidates) sets.insert(sets.end(), params + s * np, params + (s + 1) * np);
    StabilityOptions o;
    o.integrator = c.integrator;
    o.steps_per_orbit = c.steps_per_orbit;
    o.horizon_orbits = c.horizon_orbits;
    o.close_approach = c.close_approach;
    o.megno_limit = c.megno_limit;
    o.backend = c.backend;
    o.threads = c.threads;
    o.progress_calls = 1;
    const std::vector<SetStability> r = assess_stability(model, sets, static_cast<long>(candidates.size()), o);
    for (std::size_t k = 0; k < candidates.size(); ++k)
      fails[k] = !r[k].survived() || (c.mode == "megno" && r[k].chaotic);
  } else {
    throw std::invalid_argument("stability: mode must be none, amd, hill, integrate or megno");
  }
  long failed = 0;
  for (std::size_t k = 0; k < candidates.size(); ++k) {
    if (!fails[k]) continue;
    ++failed;
    const long s = candidates[k];
    if (c.penalty > 0) {
      log_likelihood[s] -= c.penalty;
    } else {
      log_likelihood[s] = -std::numeric_limits<double>::infinity();
      status[s] = kStatusUnstable;
    }
  }
  return failed;
}

namespace {

void quantiles(std::vector<double> x, double (&q)[3]) {
  if (x.empty()) {
    q[0] = q[1] = q[2] = std::nan("");
    return;
  }
  std::sort(x.begin(), x.end());
  const double f[3] = {0.16, 0.5, 0.84};
  for (int k = 0; k < 3; ++k) {
    const double pos = f[k] * (x.size() - 1);
    const std::size_t i = static_cast<std::size_t>(pos);
    const double w = pos - i;
    q[k] = i + 1 < x.size() ? (1 - w) * x[i] + w * x[i + 1] : x[i];
  }
}

}  // namespace

std::vector<StabilityTableRow> stability_table(const PlanetaryModel& model, const std::vector<double>& params,
                                               long count, const std::vector<SetStability>& results) {
  const int np = model.num_parameters(), planets = model.num_planets();
  const int columns = np + 2 * planets;
  std::vector<std::vector<double>> all(columns), kept(columns);
  std::vector<PlanetState> states;
  for (long s = 0; s < count; ++s) {
    const double* p = params.data() + s * np;
    if (!model.planet_states(p, states)) continue;
    std::vector<double> row(p, p + np);
    for (int k = 0; k < planets; ++k) {
      row.push_back(states[k].e);
      row.push_back(states[k].mass / units::kEarthMass);
    }
    for (int c = 0; c < columns; ++c) {
      all[c].push_back(row[c]);
      if (results[s].survived()) kept[c].push_back(row[c]);
    }
  }
  std::vector<StabilityTableRow> table(columns);
  for (int c = 0; c < columns; ++c) {
    if (c < np) {
      table[c].name = model.parameters()[c].name;
    } else {
      const int k = (c - np) / 2;
      table[c].name = ((c - np) % 2 == 0 ? "e_" : "mass_earth_") + model.planets()[k];
    }
    quantiles(all[c], table[c].all);
    quantiles(kept[c], table[c].survived);
  }
  return table;
}

}  // namespace swarmfit
