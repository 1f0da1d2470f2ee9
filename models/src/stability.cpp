#include "swarmfit/models/stability.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <stdexcept>

#include "swarmfit/inference/hdf5_io.hpp"
#include "swarmfit/models/status.hpp"
#include "swarmfit/models/system_setup.hpp"
#include "swarmfit/models/units.hpp"

namespace swarmfit {

namespace {

struct SetOrbits {
  bool ok = false;
  double inner_period = 0.0, outer_period = 0.0, outer_a = 0.0;
  // 2 pi / (angular velocity at pericentre) = P (1 - e)^3/2 (1 + e)^-1/2, shortest over the
  // planets: the period for circular orbits, 0.38 P at e = 0.41.
  double pericentre_time = 0.0;
  CriteriaResult criteria;
};

SetOrbits orbits_of(const PlanetaryModel& model, const double* p) {
  SetOrbits o;
  std::vector<PlanetState> states;
  if (!model.planet_states(p, states)) return o;
  std::vector<PlanetOrbit> orbits;
  o.inner_period = o.pericentre_time = 1e300;
  for (int k = 0; k < model.num_planets(); ++k) {
    const double period = p[model.planet_parameter(k, 0)];
    o.inner_period = std::min(o.inner_period, period);
    const double e = states[k].e;
    o.pericentre_time = std::min(o.pericentre_time, period * std::pow(1.0 - e, 1.5) / std::sqrt(1.0 + e));
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
  double fastest = 1e300, outer = 0;
  for (long s = 0; s < count; ++s) {
    const SetOrbits o = orbits_of(model, params.data() + s * np);
    if (!o.ok) continue;
    fastest = std::min(fastest, o.pericentre_time);
    outer = std::max(outer, o.outer_period);
  }
  StabilityPlan plan;
  if (outer == 0) return plan;
  // The step resolves the fastest angular motion, at the pericentre of the most eccentric orbit
  // (the Wisdom-Holman splitting error grows with it, Wisdom & Holman 1991): a step that does not
  // shows chaos in MEGNO that is not in the dynamics.
  plan.time_step = fastest / options.steps_per_orbit;
  plan.horizon = outer * options.horizon_orbits;
  // Clamped so that an absurd horizon is a large count (refused by the caller), not an overflow.
  plan.steps = static_cast<long>(std::min(std::ceil(plan.horizon / plan.time_step), 4e18));
  return plan;
}

namespace {

// A stability run's checkpoint (StabilityOptions::checkpoint): the settings and sets it belongs
// to, the indicators of the sets finished so far, and the whole state of the batch under way.
struct Checkpoint {
  long next_first = 0;  // the batch under way
  int next_call = 1;    // its next call
  std::vector<int> status;
  std::vector<double> time, indicators;  // per finished set: megno, slope, lyapunov, closest_hill, steps, max e, max da
  std::vector<double> bodies, clocks, chaos;
};

int indicator_width(int planets) { return 5 + 2 * planets; }

void write_checkpoint(const std::string& path, const std::vector<double>& params, const StabilityPlan& plan,
                      const StabilityOptions& o, long count, const Checkpoint& c) {
  h5::AtomicFile file(path);
  {
    h5::Handle f(H5Fcreate(file.partial_path().c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT), path);
    h5::attribute(f, "count", count);
    h5::attribute(f, "integrator", o.integrator);
    h5::attribute(f, "time_step", plan.time_step);
    h5::attribute(f, "horizon", plan.horizon);
    h5::attribute(f, "batch", o.batch);
    h5::attribute(f, "calls", static_cast<long>(o.progress_calls));
    h5::attribute(f, "close_approach", o.close_approach);
    h5::attribute(f, "next_first", c.next_first);
    h5::attribute(f, "next_call", static_cast<long>(c.next_call));
    h5::write(f, "params", {params.size()}, params.data());
    h5::write(f, "status", {c.status.size()}, c.status.data());
    h5::write(f, "time", {c.time.size()}, c.time.data());
    h5::write(f, "indicators", {c.indicators.size()}, c.indicators.data());
    h5::write(f, "bodies", {c.bodies.size()}, c.bodies.data());
    h5::write(f, "clocks", {c.clocks.size()}, c.clocks.data());
    h5::write(f, "chaos", {c.chaos.size()}, c.chaos.data());
  }
  file.commit();
}

Checkpoint read_checkpoint(const std::string& path, const std::vector<double>& params, const StabilityPlan& plan,
                           const StabilityOptions& o, long count) {
  h5::Handle f(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), path);
  const bool same =
      h5::read_long_attribute(f, "count") == count && h5::read_string_attribute(f, "integrator") == o.integrator &&
      h5::read_double_attribute(f, "time_step") == plan.time_step &&
      h5::read_double_attribute(f, "horizon") == plan.horizon && h5::read_long_attribute(f, "batch") == o.batch &&
      h5::read_long_attribute(f, "calls") == o.progress_calls &&
      h5::read_double_attribute(f, "close_approach") == o.close_approach && h5::read_doubles(f, "params") == params;
  if (!same) throw std::invalid_argument(path + ": a checkpoint of another stability run (other sets or settings)");
  Checkpoint c;
  c.next_first = h5::read_long_attribute(f, "next_first");
  c.next_call = static_cast<int>(h5::read_long_attribute(f, "next_call"));
  c.status = h5::read_ints(f, "status");
  c.time = h5::read_doubles(f, "time");
  c.indicators = h5::read_doubles(f, "indicators");
  c.bodies = h5::read_doubles(f, "bodies");
  c.clocks = h5::read_doubles(f, "clocks");
  c.chaos = h5::read_doubles(f, "chaos");
  return c;
}

}  // namespace

std::vector<SetStability> assess_stability(const PlanetaryModel& model, const std::vector<double>& params, long count,
                                           const StabilityOptions& options,
                                           const std::function<void(double)>& progress) {
  const IntegratorInfo* integrator = find_integrator(options.integrator);
  if (!integrator) throw std::invalid_argument("stability: unknown integrator " + options.integrator);
  if (integrator->adaptive)
    throw std::invalid_argument("stability: take a fixed-step integrator (" + options.integrator + " adapts its step)");
  const int np = model.num_parameters(), nb = model.num_bodies(), planets = model.num_planets();
  if (static_cast<long>(params.size()) < count * np) throw std::invalid_argument("stability: too few parameters");
  const std::vector<double> sets(params.begin(), params.begin() + count * np);
  const StabilityPlan plan = plan_stability(model, sets, count, options);
  std::vector<SetStability> out(count);
  std::vector<SetOrbits> orbits(count);
  double outer_a = 0;
  for (long s = 0; s < count; ++s) {
    orbits[s] = orbits_of(model, sets.data() + s * np);
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
  const int width = indicator_width(planets);
  Checkpoint c;
  const bool checkpointing = !options.checkpoint.empty();
  if (checkpointing && std::filesystem::exists(options.checkpoint))
    c = read_checkpoint(options.checkpoint, sets, plan, options, count);
  // The sets finished before the checkpoint: their indicators as it kept them.
  for (long s = 0; s < c.next_first; ++s) {
    SetStability& r = out[s];
    r.status = c.status[s];
    r.time = c.time[s];
    const double* x = c.indicators.data() + s * width;
    r.chaos.megno = x[0];
    r.chaos.megno_slope = x[1];
    r.chaos.lyapunov = x[2];
    r.chaos.closest_hill = x[3];
    r.chaos.steps = static_cast<long>(x[4]);
    r.chaos.max_e.assign(x + 5, x + 5 + planets);
    r.chaos.max_da.assign(x + 5 + planets, x + 5 + 2 * planets);
  }
  for (long first = c.next_first; first < count; first += batch) {
    const long m = std::min(batch, count - first);
    Ensemble e(m, nb);
    std::vector<int> invalid;
    set_up_systems(model, sets.data() + first * np, m, e, invalid, options.threads);
    ChaosState chaos(e);
    int k0 = 1;
    if (first == c.next_first && c.next_call > 1) {  // the batch the checkpoint was taken in
      e.body_data().assign(c.bodies.begin(), c.bodies.end());
      e.clock_data().assign(c.clocks.begin(), c.clocks.end());
      chaos.data() = c.chaos;
      k0 = c.next_call;
    }
    for (int k = k0; k <= calls; ++k) {
      request.destination_time = plan.horizon * k / calls;
      integrate_chaos(e, chaos, request, options.backend);
      if (progress) progress((first + m * static_cast<double>(k) / calls) / count);
      if (checkpointing && k < calls) {
        c.next_first = first;
        c.next_call = k + 1;
        c.bodies.assign(e.body_data().begin(), e.body_data().end());
        c.clocks.assign(e.clock_data().begin(), e.clock_data().end());
        c.chaos = chaos.data();
        write_checkpoint(options.checkpoint, sets, plan, options, count, c);
      }
    }
    c.status.resize(first + m);
    c.time.resize(first + m);
    c.indicators.resize((first + m) * width);
    for (long s = 0; s < m; ++s) {
      SetStability& r = out[first + s];
      r.status = e.status(s);
      r.time = e.time(s);
      if (orbits[first + s].ok) r.chaos = chaos.indicators(s);
      c.status[first + s] = r.status;
      c.time[first + s] = r.time;
      double* x = c.indicators.data() + (first + s) * width;
      x[0] = r.chaos.megno;
      x[1] = r.chaos.megno_slope;
      x[2] = r.chaos.lyapunov;
      x[3] = r.chaos.closest_hill;
      x[4] = static_cast<double>(r.chaos.steps);
      for (int q = 0; q < planets; ++q) {
        x[5 + q] = q < static_cast<int>(r.chaos.max_e.size()) ? r.chaos.max_e[q] : 0.0;
        x[5 + planets + q] = q < static_cast<int>(r.chaos.max_da.size()) ? r.chaos.max_da[q] : 0.0;
      }
    }
    if (checkpointing && first + m < count) {  // the next batch starts from scratch
      c.next_first = first + m;
      c.next_call = 1;
      c.bodies.clear();
      c.clocks.clear();
      c.chaos.clear();
      write_checkpoint(options.checkpoint, sets, plan, options, count, c);
    }
  }
  if (checkpointing) std::filesystem::remove(options.checkpoint);  // done: nothing to resume
  for (long s = 0; s < count; ++s) {
    SetStability& r = out[s];
    r.criteria = orbits[s].criteria;
    if (orbits[s].ok) {
      r.orbits = r.time / orbits[s].outer_period;
      r.chaotic = r.chaos.megno > options.megno_limit;
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
    // A small batch runs on the CPU's threads even in a GPU fit: a GPU thread carries one system
    // through its steps far more slowly than a CPU core does, so the GPU pays only when the batch
    // fills it.
    StabilityOptions options = c.options;
    options.progress_calls =
        static_cast<int>(std::min(1e4, std::max(1.0, std::ceil(options.horizon_orbits / kOrbitsPerStabilityCall))));
    const long threads = options.threads > 0 ? options.threads : omp_get_max_threads();
    if (options.backend == "cuda" && static_cast<long>(candidates.size()) < kGpuStabilityPerCpuThread * threads)
      options.backend = "cpu";
    std::function<void(double)> poll;
    if (c.should_stop)
      poll = [&c](double) {
        if (c.should_stop()) throw Interrupted("interrupted during a stability pass");
      };
    const std::vector<SetStability> r =
        assess_stability(model, sets, static_cast<long>(candidates.size()), options, poll);
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
    // Soft or hard, the status marks the failure, so a run file's chain says which draws failed.
    log_likelihood[s] = c.penalty > 0 ? log_likelihood[s] - c.penalty : -std::numeric_limits<double>::infinity();
    status[s] = kStatusUnstable;
  }
  return failed;
}

std::vector<double> parameter_grid(const PlanetaryModel& model, const std::vector<double>& base, const GridAxis& x,
                                   const GridAxis& y) {
  const int np = model.num_parameters();
  // Sets one axis's value in a parameter set.
  auto setter = [&](const GridAxis& axis) -> std::function<void(double*, double)> {
    const int index = model.index(axis.name);
    if (index >= 0) return [index](double* p, double v) { p[index] = v; };
    for (int k = 0; k < model.num_planets(); ++k)
      if (axis.name == "e_" + model.planets()[k]) {
        const int c = model.planet_parameter(k, 2), s = model.planet_parameter(k, 3);
        const double omega = std::atan2(base[s], base[c]);
        const bool plain = model.options().plain_eccentricity_vector;
        return [=](double* p, double e) {
          const double r = plain ? e : std::sqrt(std::max(e, 0.0));
          p[c] = r * std::cos(omega);
          p[s] = r * std::sin(omega);
        };
      }
    throw std::invalid_argument("map: '" + axis.name + "' is neither a parameter of the model nor e_<planet>");
  };
  if (x.n < 1 || y.n < 1) throw std::invalid_argument("map: each axis needs at least one step");
  const auto set_x = setter(x), set_y = setter(y);
  std::vector<double> sets;
  sets.reserve(static_cast<std::size_t>(x.n) * y.n * np);
  for (int j = 0; j < y.n; ++j)
    for (int i = 0; i < x.n; ++i) {
      sets.insert(sets.end(), base.begin(), base.end());
      double* p = sets.data() + sets.size() - np;
      set_x(p, x.value(i));
      set_y(p, y.value(j));
    }
  return sets;
}

StabilityColumns stability_columns(const std::vector<SetStability>& r, int planets) {
  StabilityColumns c;
  const std::size_t n = r.size();
  c.max_e.assign(n * planets, std::nan(""));
  c.max_da.assign(n * planets, std::nan(""));
  for (std::size_t k = 0; k < n; ++k) {
    c.status.push_back(r[k].status);
    c.survived.push_back(r[k].survived());
    c.chaotic.push_back(r[k].chaotic);
    c.amd_stable.push_back(r[k].criteria.amd_stable);
    c.hill_stable.push_back(r[k].criteria.hill_stable);
    c.crossing.push_back(r[k].criteria.crossing);
    c.time.push_back(r[k].time);
    c.orbits.push_back(r[k].orbits);
    c.megno.push_back(r[k].chaos.megno);
    c.megno_slope.push_back(r[k].chaos.megno_slope);
    c.lyapunov.push_back(r[k].chaos.lyapunov);
    c.closest_hill.push_back(r[k].chaos.closest_hill);
    for (int q = 0; q < planets && q < static_cast<int>(r[k].chaos.max_e.size()); ++q) {
      c.max_e[k * planets + q] = r[k].chaos.max_e[q];
      c.max_da[k * planets + q] = r[k].chaos.max_da[q];
    }
  }
  return c;
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
