// Stability of parameter sets (posterior draws, grids): every set integrated as one system of an
// ensemble for a horizon in orbits of its outermost planet, with the chaos indicators on
// (chaos.hpp) and the monitors that stop a system when it goes unstable (close encounter in mutual
// Hill radii, ejection), plus the analytic criteria (stability_criteria.hpp) of its initial orbits.
#pragma once

#include <functional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "swarmfit/inference/demcmc.hpp"
#include "swarmfit/models/chaos.hpp"
#include "swarmfit/models/planetary_model.hpp"
#include "swarmfit/models/stability_criteria.hpp"

namespace swarmfit {

struct StabilityOptions {
  std::string integrator = "whfast";
  double steps_per_orbit = 20.0;  // time step = the shortest P (1-e)^1.5 / (1+e)^0.5 over planets and sets / this
  double horizon_orbits = 1e4;    // of the outermost planet (the longest such period over the sets)
  double close_approach = 1.0;    // stop below this many mutual Hill radii (0: off)
  double eject_factor = 100.0;    // eject beyond this many outer semi-major axes from the star
  double megno_limit = 3.0;       // MEGNO above this: chaotic
  std::string backend = "cpu";
  int threads = 0;
  long batch = 65536;       // systems per integration call
  int progress_calls = 20;  // the horizon in this many calls per batch (progress, checkpoints)
  // When set: the whole state is written here (atomically, HDF5) after every call, and a run that
  // finds the file resumes from it, bitwise as if it had not stopped (a file of another run, other
  // sets or settings, is refused). Removed when the run completes.
  std::string checkpoint;
};

struct SetStability {
  int status = 0;        // 0: survived the horizon; else the monitor's (or the set-up's) code
  double time = 0.0;     // days from the epoch: the instability time, or the horizon when survived
  double orbits = 0.0;   // the same in orbits of this set's outermost planet
  bool chaotic = false;  // MEGNO > megno_limit
  ChaosIndicators chaos;
  CriteriaResult criteria;
  bool survived() const { return status == 0; }
};

struct StabilityPlan {
  double time_step = 0.0;  // days
  double horizon = 0.0;    // days
  long steps = 0;          // per system to the horizon
};

// The plan for these sets (M x num_parameters, row-major) under the options.
StabilityPlan plan_stability(const PlanetaryModel& model, const std::vector<double>& params, long count,
                             const StabilityOptions& options);

// progress(done_fraction) after each call.
std::vector<SetStability> assess_stability(const PlanetaryModel& model, const std::vector<double>& params, long count,
                                           const StabilityOptions& options,
                                           const std::function<void(double)>& progress = {});

// A fit's stability constraint (model key `stability`): none; amd or hill (the analytic criteria of
// each proposal's initial orbits); integrate (the proposal survives `horizon_orbits` orbits of its
// outermost planet) or megno (survives and its MEGNO stays below megno_limit). Proposals that
// fail get ln L = -inf and kStatusUnstable, or with penalty > 0 ln L - penalty and kStatusUnstable
// (a soft constraint: the draw may stay in the chain, marked). integrate and megno run the
// proposals whose ln L is finite as a second batched integration on the fit's backend; the fit's
// sampler calls it only for the proposals it would accept (delayed acceptance,
// inference/demcmc.hpp). In a fit on the GPU, batches of fewer than this many systems per CPU
// thread take the stability pass on the CPU (apply_stability).
constexpr long kGpuStabilityPerCpuThread = 100;

// A fit's start phase screens its optimiser's trials with the horizon capped at this many orbits:
// the optimiser only looks for the region to start in, and its trials pass one generation after
// another, so each screen's latency adds up (GJ 876 at 1e4 orbits: 96% of a short fit). The
// walkers themselves are then drawn on the full constraint.
constexpr double kStartHorizonOrbits = 1e3;
// integrate and megno passes run in calls of at most this many orbits, should_stop polled between.
constexpr double kOrbitsPerStabilityCall = 1e3;

struct StabilityConstraint {
  std::string mode = "none";
  double penalty = 0.0;
  StabilityOptions options = fit_options();  // the second pass's (integrate, megno)
  std::function<bool()> should_stop;         // polled between a pass's calls: true throws Interrupted
  bool active() const { return mode != "none"; }
  static StabilityOptions fit_options() {
    StabilityOptions o;
    o.horizon_orbits = 1e3;
    return o;
  }
};
// Applies the constraint to sets [0, count) (rows of `params`, full parameter sets) whose ln L is
// finite; returns how many failed.
long apply_stability(const PlanetaryModel& model, const StabilityConstraint& constraint, const double* params,
                     long count, double* log_likelihood, int* status);

// One axis of a stability map: a parameter of the model by name, or e_<planet> (the planet's
// eccentricity at the argument of pericentre of the base values), from lo to hi in n steps.
struct GridAxis {
  std::string name;
  double lo = 0, hi = 0;
  int n = 0;
  double value(int k) const { return n > 1 ? lo + (hi - lo) * k / (n - 1) : lo; }
};
// The parameter sets of a map: `base` with x and y set, x fastest (row y, column x). Throws
// std::invalid_argument naming an unknown axis.
std::vector<double> parameter_grid(const PlanetaryModel& model, const std::vector<double>& base, const GridAxis& x,
                                   const GridAxis& y);

// The results as columns (one entry per set; max_e and max_da [set][planet], NaN where a set has
// no orbits), for the writers of tables and arrays.
struct StabilityColumns {
  std::vector<int> status, survived, chaotic, amd_stable, hill_stable, crossing;
  std::vector<double> time, orbits, megno, megno_slope, lyapunov, closest_hill, max_e, max_da;
  // The per-set columns by the names every writer uses (CSV, HDF5, Python); max_e and max_da apart.
  std::vector<std::pair<const char*, std::vector<int>*>> flags() {
    return {{"status", &status},         {"survived", &survived},       {"chaotic", &chaotic},
            {"amd_stable", &amd_stable}, {"hill_stable", &hill_stable}, {"crossing", &crossing}};
  }
  std::vector<std::pair<const char*, std::vector<double>*>> values() {
    return {{"time_days", &time},
            {"orbits", &orbits},
            {"megno", &megno},
            {"megno_slope", &megno_slope},
            {"lyapunov_per_day", &lyapunov},
            {"closest_hill", &closest_hill}};
  }
};
StabilityColumns stability_columns(const std::vector<SetStability>& results, int planets);

// The posterior of every set next to that of the survivors: median and 16/84% quantiles of each
// parameter and of each planet's eccentricity and mass (Earth masses).
struct StabilityTableRow {
  std::string name;
  double all[3] = {0, 0, 0};       // 16%, median, 84%
  double survived[3] = {0, 0, 0};  // NaN when no set survived
};
std::vector<StabilityTableRow> stability_table(const PlanetaryModel& model, const std::vector<double>& params,
                                               long count, const std::vector<SetStability>& results);

}  // namespace swarmfit
