// `swarmfit integrate`: Swarm-NG-style configuration -> ensemble -> backend -> output files,
// with a summary (energy errors, throughput) and the Swarm-NG test mode (--reference).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <map>
#include <memory>
#include <sstream>

#include "config.hpp"
#include "errors.hpp"
#include "initial_conditions.hpp"
#include "output.hpp"
#include "swarmfit/integrators/backend.hpp"
#include "swarmfit/integrators/ensemble_checks.hpp"

namespace po = boost::program_options;

namespace swarmfit::app {

namespace {

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

struct Origins {
  std::map<std::string, Setting> settings;
  std::string of(const std::string& key) const {
    auto it = settings.find(key);
    return it == settings.end() ? "default" : it->second.origin;
  }
};

[[noreturn]] void bad_value(const Origins& o, const std::string& key, const std::string& why) {
  throw InputError(o.of(key) + ": key '" + key + "': " + why);
}

template <class T>
T positive(const po::variables_map& vm, const Origins& o, const std::string& key, bool allow_zero = false) {
  const T v = vm[key].as<T>();
  if (!std::isfinite(static_cast<double>(v))) bad_value(o, key, "must be finite");
  if (allow_zero ? v < 0 : v <= 0) bad_value(o, key, allow_zero ? "must not be negative" : "must be positive");
  return v;
}

void validate_ensemble(const Ensemble& e, const std::string& origin) {
  for (long s = 0; s < e.num_systems(); ++s) {
    const std::string problem = initial_state_problem(e, s);
    if (!problem.empty()) throw InputError(origin + ": system " + std::to_string(s) + ": " + problem);
  }
}

// Swarm-NG test mode (Dindar et al. 2013, sec. 5.2.1): compare with a reference file.
int compare_with_reference(const Ensemble& e, const std::string& path, double pos_threshold, double vel_threshold,
                           double time_threshold) {
  std::unique_ptr<Ensemble> ref = read_initial_conditions(path);
  if (ref->num_systems() != e.num_systems() || ref->num_bodies() != e.num_bodies())
    throw InputError(path + ": reference has " + std::to_string(ref->num_systems()) + " systems of " +
                     std::to_string(ref->num_bodies()) + " bodies; the run has " + std::to_string(e.num_systems()) +
                     " of " + std::to_string(e.num_bodies()));
  long worst_system = -1;
  double worst = -1, worst_pos = 0, worst_vel = 0, worst_time = 0;
  long failures = 0;
  for (long s = 0; s < e.num_systems(); ++s) {
    const StateDifference diff = state_difference(e, *ref, s);
    const double rp = diff.position, rv = diff.velocity, rt = diff.time;
    const bool fail = !(rp <= pos_threshold && rv <= vel_threshold && rt <= time_threshold);
    failures += fail;
    const double badness = std::max({rp / pos_threshold, rv / vel_threshold, rt / time_threshold});
    if (!(badness <= worst)) {
      worst = badness;
      worst_system = s;
      worst_pos = rp;
      worst_vel = rv;
      worst_time = rt;
    }
  }
  std::cout << "reference " << path << ": " << (failures ? "MISMATCH" : "match") << " (" << failures << " of "
            << e.num_systems() << " systems outside the thresholds); worst system " << worst_system << ": position "
            << worst_pos << ", velocity " << worst_vel << ", time " << worst_time << " (relative)\n";
  return failures ? kExitMismatch : 0;
}

}  // namespace

int integrate_command(int argc, char** argv) {
  po::options_description flags("swarmfit integrate options");
  flags.add_options()("help,h", "list every key and its meaning")("config,c", po::value<std::string>(),
                                                                  "configuration file")(
      "reference", po::value<std::string>(), "compare the final states with this CSV file (Swarm-NG test mode)")(
      "quiet,q", "print only the summary line");
  po::variables_map args;
  std::vector<std::string> overrides;
  const po::options_description keys = integrate_keys();
  parse_command_line(argc, argv, flags, &overrides, args);
  if (args.count("help")) {
    std::cout << "usage: swarmfit integrate --config FILE [key=value ...] [--reference FILE]\n\n"
              << flags << "\n"
              << keys << "\n";
    std::cout << "Integrators:\n";
    for (const auto& info : integrator_registry())
      std::cout << "  " << std::left << std::setw(18) << info.name << info.description << " (order " << info.order
                << ")\n"
                << std::setw(20) << "" << info.citation << "\n";
    return 0;
  }

  // ---- read and validate everything before any work starts
  Origins o;
  std::string config_text;
  if (args.count("config")) {
    const std::string path = args["config"].as<std::string>();
    o.settings = read_config_file(path, keys);
    std::ifstream in(path);
    config_text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  apply_overrides(o.settings, overrides, keys);
  po::variables_map vm;
  store_settings(o.settings, keys, vm);

  RunRequest request;
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
  const double destination = vm["destination_time"].as<double>();
  if (!std::isfinite(destination)) bad_value(o, "destination_time", "must be finite");
  const double snapshot_interval = positive<double>(vm, o, "snapshot_interval", true);
  const std::string backend = vm["backend"].as<std::string>();
  if (backend != "cpu" && backend != "cuda") bad_value(o, "backend", "must be cpu or cuda");
  if (backend == "cuda" && !cuda_available()) bad_value(o, "backend", "cuda requested but " + cuda_device_name());
  if (snapshot_interval > 0 && !vm.count("output"))
    bad_value(o, "snapshot_interval", "snapshots need an HDF5 'output' file");
  const double pos_threshold = positive<double>(vm, o, "pos_threshold");
  const double vel_threshold = positive<double>(vm, o, "vel_threshold");
  const double time_threshold = positive<double>(vm, o, "time_threshold");

  std::unique_ptr<Ensemble> ensemble;
  std::string ic_origin;
  if (vm.count("initial_conditions")) {
    for (const char* key : {"nsys", "nbod", "planet_mass", "spacing_factor", "seed"})
      if (o.settings.count(key)) bad_value(o, key, "conflicts with 'initial_conditions' (the file sets the systems)");
    ic_origin = vm["initial_conditions"].as<std::string>();
    ensemble = read_initial_conditions(ic_origin);
  } else {
    GeneratorSettings g;
    g.num_systems = positive<long>(vm, o, "nsys");
    g.num_bodies = vm["nbod"].as<int>();
    if (g.num_bodies < kMinBodies || g.num_bodies > kMaxBodies) bad_value(o, "nbod", "must be between 2 and 16");
    g.planet_mass = positive<double>(vm, o, "planet_mass", true);
    g.spacing_factor = vm["spacing_factor"].as<double>();
    if (!(g.spacing_factor > 0 && std::isfinite(g.spacing_factor))) bad_value(o, "spacing_factor", "must be positive");
    g.G = request.step.G;
    g.seed = vm["seed"].as<std::uint64_t>();
    ensemble = generate_swarm_ensemble(g);
    ic_origin = "generated initial conditions";
  }
  validate_ensemble(*ensemble, ic_origin);
  for (long s = 0; s < ensemble->num_systems(); ++s)
    if (!(ensemble->time(s) < destination))
      bad_value(o, "destination_time", "not after the start time of system " + std::to_string(s));
  // Create the outputs now, so an unwritable path fails before the work.
  std::unique_ptr<Hdf5Writer> hdf5;
  if (vm.count("output")) {
    try {
      hdf5 = std::make_unique<Hdf5Writer>(vm["output"].as<std::string>(), *ensemble);
    } catch (const std::exception& e) {
      bad_value(o, "output", e.what());
    }
  }
  std::unique_ptr<AtomicFile> csv_probe;
  if (vm.count("output_csv")) {
    const std::string path = vm["output_csv"].as<std::string>();
    std::ofstream probe(path + ".probe");
    if (!probe) bad_value(o, "output_csv", "cannot write " + path);
    probe.close();
    std::remove((path + ".probe").c_str());
  }

  // ---- the work
  const long m = ensemble->num_systems();
  const std::vector<double> energy0 = system_energies(*ensemble, request.step.G);
  if (hdf5) {
    hdf5->set_attribute("integrator", integrator_name);
    hdf5->set_attribute("backend", backend);
    hdf5->set_attribute("G", request.step.G);
    hdf5->set_attribute("time_step", request.step.time_step);
    hdf5->set_attribute("destination_time", destination);
    hdf5->set_attribute("config", config_text);
    hdf5->set_attribute("swarmfit_version", SWARMFIT_VERSION);
    if (snapshot_interval > 0) hdf5->append_snapshot(*ensemble, ensemble->time(0));
  }
  const double start_time = ensemble->time(0);
  const auto wall0 = std::chrono::steady_clock::now();
  double kernel_ms = 0;
  auto run_to = [&](double t) {
    request.destination_time = t;
    if (backend == "cuda") {
      kernel_ms += integrate_cuda(*ensemble, request).kernel_ms;
    } else {
      integrate_cpu(*ensemble, request);
    }
  };
  if (snapshot_interval > 0) {
    for (long k = 1;; ++k) {
      const double t = std::min(destination, start_time + k * snapshot_interval);
      run_to(t);
      hdf5->append_snapshot(*ensemble, t);
      if (t >= destination) break;
    }
  } else {
    run_to(destination);
  }
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();

  // ---- summary and outputs
  RunSummary summary;
  summary.energy_error = relative_energy_errors(energy0, *ensemble, request.step.G);
  std::map<int, long> by_status;
  double total_steps = 0;
  for (long s = 0; s < m; ++s) {
    by_status[ensemble->status(s)]++;
    total_steps += ensemble->steps(s);
  }
  if (hdf5) {
    hdf5->write_final(*ensemble, summary);
    hdf5->commit();
  }
  if (vm.count("output_csv")) write_states_csv(vm["output_csv"].as<std::string>(), *ensemble);

  const ErrorSpread spread = error_spread(summary.energy_error);
  std::ostringstream status_line;
  for (const auto& [code, count] : by_status)
    status_line << (status_line.tellp() > 0 ? ", " : "") << status_name(code) << " " << count;
  std::cout << std::setprecision(3);
  std::cout << "swarmfit integrate: " << integrator_name << " on " << backend << ", " << m << " systems x "
            << ensemble->num_bodies() << " bodies, t = " << start_time << " -> " << destination << "\n"
            << "  steps          " << total_steps << " system-steps (" << total_steps / m << " per system)\n"
            << "  wall time      " << wall << " s";
  if (backend == "cuda") std::cout << " (kernel " << kernel_ms << " ms)";
  std::cout << "\n  throughput     " << total_steps / wall << " system-steps/s\n"
            << "  |dE/E|         worst " << spread.worst << ", median " << spread.median << "\n"
            << "  status         " << status_line.str() << "\n";
  if (args.count("reference"))
    return compare_with_reference(*ensemble, args["reference"].as<std::string>(), pos_threshold, vel_threshold,
                                  time_threshold);
  return 0;
}

}  // namespace swarmfit::app
