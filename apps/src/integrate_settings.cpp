#include "integrate_settings.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iterator>

#include "swarmfit/integrators/ensemble_checks.hpp"
#include "swarmfit/integrators/limits.hpp"
#include "swarmfit/integrators/registry.hpp"

namespace po = boost::program_options;

namespace swarmfit::app {

po::options_description integrate_keys() {
  po::options_description keys(
      "Configuration keys (in the --config file as 'key = value', or on the command line as key=value)");
  std::string integrators;
  for (const auto& info : integrator_registry()) integrators += (integrators.empty() ? "" : ", ") + info.name;
  keys.add_options()("integrator", po::value<std::string>()->default_value("hermite"),
                     ("integration scheme: " + integrators).c_str())(
      "time_step", po::value<double>()->default_value(1e-3),
      "step size (fixed-step schemes; first step of rkck_adaptive)")(
      "destination_time", po::value<double>()->default_value(1.0), "integrate every system up to this time")(
      "nsys", po::value<long>()->default_value(16), "number of systems of the generated ensemble")(
      "nbod", po::value<int>()->default_value(3), "bodies per generated system, star included (2..16)")(
      "planet_mass", po::value<double>()->default_value(1e-3), "planet mass of the generated systems (star mass 1)")(
      "spacing_factor", po::value<double>()->default_value(0.4),
      "generated planets at a_i = (1 + spacing_factor)^(i-1)")("seed", po::value<std::uint64_t>()->default_value(1),
                                                               "seed of the generated orbital phases")(
      "G", po::value<double>()->default_value(1.0),
      "constant of gravitation (1 for Swarm-NG units; 2.959122082855911e-4 for AU, day, solar mass)")(
      "initial_conditions", po::value<std::string>(),
      "CSV file: system,body,mass,x,y,z,vx,vy,vz[,radius][,time] (instead of the generator)")(
      "error_tolerance", po::value<double>()->default_value(1e-10), "rkck_adaptive: relative error allowed per step")(
      "time_step_factor", po::value<double>()->default_value(1.7e-2), "hermite_adaptive: tau of Swarm-NG eq. 5")(
      "min_time_step", po::value<double>()->default_value(0.0), "adaptive schemes: smallest step")(
      "max_time_step", po::value<double>()->default_value(1e300), "adaptive schemes: largest step")(
      "mvs_coordinates", po::value<std::string>()->default_value("democratic_heliocentric"),
      "mvs: democratic_heliocentric or jacobi")("mvs_splitting",
                                                po::value<std::string>()->default_value("jump_kick_kepler"),
                                                "mvs operator order: jump_kick_kepler (drift-kick-Kepler-kick-drift), "
                                                "kick_jump_kepler (SyMBA) or kepler_jump_kick (REBOUND WHFast)")(
      "rmax", po::value<double>()->default_value(0.0),
      "monitor: stop a system when a body is farther than rmax from the star (0: off)")(
      "stop_on_unbound", po::value<bool>()->default_value(false),
      "monitor: stop a system when a planet is on an outgoing unbound orbit")(
      "close_approach", po::value<double>()->default_value(0.0),
      "monitor: stop when two planets are closer than this many mutual Hill radii (0: off)")(
      "collisions", po::value<bool>()->default_value(false),
      "monitor: stop when two bodies touch (radius column of the initial conditions)")(
      "max_steps", po::value<double>()->default_value(0.0),
      "monitor: stop a system after this many steps (0: unlimited for fixed steps; adaptive schemes: 1000 times "
      "the estimate, at least 1e6)")(
      "work_limit", po::value<double>()->default_value(1e12),
      "refuse runs estimated to take more system-steps (steps x systems) than this; raise it to run them")(
      "energy_tolerance", po::value<double>()->default_value(1e-3),
      "a system that ends with |dE/E| above this gets status energy_error (32) instead of ok")(
      "overwrite", po::value<bool>()->default_value(false), "replace existing output files")(
      "output_limit_gb", po::value<double>()->default_value(10.0),
      "refuse runs whose snapshots would take more than this many GB")(
      "backend", po::value<std::string>()->default_value("cpu"), "cpu (OpenMP + SIMD) or cuda")(
      "threads", po::value<int>()->default_value(0), "cpu backend: OpenMP threads (0: all cores)")(
      "cuda_layout", po::value<std::string>()->default_value("auto"),
      "cuda backend: system (one thread per system), body (a thread per body), "
      "auto (body from 9 bodies on, 6 for rkck; never for likelihoods)")(
      "reproducible", po::value<bool>()->default_value(false),
      "cuda backend: kernels with the CPU's arithmetic (no FMA contraction, IEEE 1/sqrt), bitwise the "
      "cpu backend's results, somewhat slower; the cpu backend always computes this way")(
      "output", po::value<std::string>(), "HDF5 file for the final states (and snapshots)")(
      "output_csv", po::value<std::string>(), "CSV file for the final states")(
      "snapshot_interval", po::value<double>()->default_value(0.0),
      "also store the states every this much time in the HDF5 file (0: off)")(
      "pos_threshold", po::value<double>()->default_value(1e-10), "--reference: largest relative position difference")(
      "vel_threshold", po::value<double>()->default_value(1e-10), "--reference: largest relative velocity difference")(
      "time_threshold", po::value<double>()->default_value(1e-10), "--reference: largest relative time difference");
  return keys;
}

LoadedKeys load_keys(const po::variables_map& args, const std::vector<std::string>& overrides,
                     const po::options_description& keys) {
  LoadedKeys k;
  if (args.count("config")) {
    const std::string path = args["config"].as<std::string>();
    k.origins.settings = read_config_file(path, keys);
    std::ifstream in(path);
    k.text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  apply_overrides(k.origins.settings, overrides, keys);
  store_settings(k.origins.settings, keys, k.vm);
  for (const auto& o : overrides) k.text += "\n" + o;
  return k;
}

IntegrateSettings read_integrate_settings(const po::variables_map& vm, const KeyOrigins& o) {
  IntegrateSettings settings;
  RunRequest& request = settings.request;
  const std::string integrator_name = vm["integrator"].as<std::string>();
  request.integrator = find_integrator(integrator_name);
  if (!request.integrator) {
    std::string names;
    for (const auto& info : integrator_registry()) names += " " + info.name;
    bad_value(o, "integrator", "unknown integrator '" + integrator_name + "' (known:" + names + ")");
  }
  request.step.G = positive<double>(vm, o, "G");
  request.step.time_step = positive<double>(vm, o, "time_step");
  request.step.error_tolerance = positive<double>(vm, o, "error_tolerance");
  request.step.time_step_factor = positive<double>(vm, o, "time_step_factor");
  request.step.min_time_step = positive<double>(vm, o, "min_time_step", true);
  request.step.max_time_step = positive<double>(vm, o, "max_time_step");
  if (request.step.min_time_step > request.step.max_time_step) bad_value(o, "min_time_step", "exceeds max_time_step");
  const std::string coordinates = vm["mvs_coordinates"].as<std::string>();
  if (coordinates == "democratic_heliocentric") {
    request.step.mvs_coordinates = MvsCoordinates::kDemocraticHeliocentric;
  } else if (coordinates == "jacobi") {
    request.step.mvs_coordinates = MvsCoordinates::kJacobi;
  } else {
    bad_value(o, "mvs_coordinates", "must be democratic_heliocentric or jacobi");
  }
  const std::string splitting = vm["mvs_splitting"].as<std::string>();
  if (splitting == "jump_kick_kepler") {
    request.step.mvs_splitting = MvsSplitting::kJumpKickKepler;
  } else if (splitting == "kick_jump_kepler") {
    request.step.mvs_splitting = MvsSplitting::kKickJumpKepler;
  } else if (splitting == "kepler_jump_kick") {
    request.step.mvs_splitting = MvsSplitting::kKeplerJumpKick;
  } else {
    bad_value(o, "mvs_splitting", "must be jump_kick_kepler, kick_jump_kepler or kepler_jump_kick");
  }
  request.monitors.rmax = positive<double>(vm, o, "rmax", true);
  request.monitors.stop_on_unbound = vm["stop_on_unbound"].as<bool>();
  request.monitors.close_approach = positive<double>(vm, o, "close_approach", true);
  request.monitors.collisions = vm["collisions"].as<bool>();
  request.monitors.max_steps = positive<double>(vm, o, "max_steps", true);
  request.threads = positive<int>(vm, o, "threads", true);
  if (request.threads > kMaxThreads) bad_value(o, "threads", "must be 0 (all cores) to " + std::to_string(kMaxThreads));
  const std::string layout = vm["cuda_layout"].as<std::string>();
  if (layout == "auto") {
    request.cuda_layout = CudaLayout::kAuto;
  } else if (layout == "system") {
    request.cuda_layout = CudaLayout::kThreadPerSystem;
  } else if (layout == "body") {
    request.cuda_layout = CudaLayout::kThreadPerBody;
  } else {
    bad_value(o, "cuda_layout", "must be auto, system or body");
  }
  request.reproducible = vm["reproducible"].as<bool>();
  request.destination_time = vm["destination_time"].as<double>();
  if (!std::isfinite(request.destination_time)) bad_value(o, "destination_time", "must be finite");
  settings.backend = vm["backend"].as<std::string>();
  if (settings.backend != "cpu" && settings.backend != "cuda") bad_value(o, "backend", "must be cpu or cuda");
  if (settings.backend == "cuda" && !cuda_available())
    bad_value(o, "backend", "cuda requested but " + cuda_device_name());
  return settings;
}

const char* integrate_status_name(int code) { return code == kStatusEnergyError ? "energy_error" : status_name(code); }

namespace {
std::string sci(double v) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.3g", v);
  return buffer;
}
}  // namespace

WorkPlan plan_work(const Ensemble& e, RunRequest& request, double work_limit, const KeyOrigins& o) {
  const IntegratorInfo& info = *request.integrator;
  const StepParams& p = request.step;
  WorkPlan plan;
  double worst = 0;
  long worst_system = 0;
  int bi = 0, bj = 0;
  double worst_tau = 0, worst_r = 0;
  bool by_bodies = false;
  for (long s = 0; s < e.num_systems(); ++s) {
    const double span = request.destination_time - e.time(s);
    double steps = 0;
    if (!info.adaptive) {
      steps = std::ceil(span / p.time_step);
    } else {
      double tau = 1e300;
      int ti = 0, tj = 0;
      double tr = 0;
      for (int i = 0; i < e.num_bodies(); ++i)
        for (int j = i + 1; j < e.num_bodies(); ++j) {
          const double gm = p.G * (e.mass(s, i) + e.mass(s, j));
          if (!(gm > 0)) continue;
          double r2 = 0;
          for (int d = 0; d < 3; ++d) r2 += std::pow(e.position(s, i, d) - e.position(s, j, d), 2);
          const double t = std::sqrt(r2 * std::sqrt(r2) / gm);
          if (t < tau) {
            tau = t;
            ti = i;
            tj = j;
            tr = std::sqrt(r2);
          }
        }
      const double by_max = span / p.max_time_step, by_tau = span / (0.01 * tau);
      steps = std::max(by_max, by_tau);
      if (steps > worst) {
        by_bodies = by_tau > by_max;
        bi = ti;
        bj = tj;
        worst_tau = tau;
        worst_r = tr;
      }
    }
    if (steps > worst) {
      worst = steps;
      worst_system = s;
    }
    plan.system_steps += steps;
  }
  if (!(plan.system_steps <= work_limit)) {
    const std::string total = "~" + sci(worst) + " steps for system " + std::to_string(worst_system) + ", " +
                              sci(plan.system_steps) + " system-steps in all, above work_limit = " + sci(work_limit) +
                              " (raise work_limit to run it anyway)";
    if (!info.adaptive) bad_value(o, "time_step", total);
    if (!by_bodies) bad_value(o, "max_time_step", total);
    throw InputError("initial conditions: system " + std::to_string(worst_system) + ": bodies " + std::to_string(bi) +
                     " and " + std::to_string(bj) + " are " + sci(worst_r) + " apart (dynamical time " +
                     sci(worst_tau) + "): " + total);
  }
  if (info.adaptive && request.monitors.max_steps == 0) {
    const double cap = std::max(1000.0 * worst, 1e6);
    request.monitors.max_steps = std::ceil(cap);
    plan.automatic_max_steps = request.monitors.max_steps;
  }
  return plan;
}

void check_memory(double systems, double bodies, const std::string& key, const KeyOrigins& o) {
  // Positions, velocities, masses, radii and a scheme's work arrays: at most ~32 doubles a body.
  const double bytes = systems * bodies * 32 * 8 + systems * 64;
  const double physical = static_cast<double>(sysconf(_SC_PHYS_PAGES)) * static_cast<double>(sysconf(_SC_PAGE_SIZE));
  if (physical > 0 && bytes > 0.8 * physical)
    bad_value(o, key,
              "the ensemble would need ~" + sci(bytes / 1e9) + " GB; this machine has " + sci(physical / 1e9) + " GB");
}

void check_initial_conditions(const Ensemble& e, const std::string& origin, double destination_time,
                              const KeyOrigins& o) {
  for (long s = 0; s < e.num_systems(); ++s) {
    const std::string problem = initial_state_problem(e, s);
    if (!problem.empty()) throw InputError(origin + ": system " + std::to_string(s) + " " + problem);
  }
  for (long s = 0; s < e.num_systems(); ++s)
    if (!(e.time(s) < destination_time))
      bad_value(o, "destination_time", "not after the start time of system " + std::to_string(s));
}

}  // namespace swarmfit::app
