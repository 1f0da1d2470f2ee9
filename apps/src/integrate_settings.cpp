#include "integrate_settings.hpp"

#include "swarmfit/integrators/ensemble_checks.hpp"
#include "swarmfit/integrators/limits.hpp"

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
      "monitor: stop a system after this many steps (0: unlimited)")(
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
