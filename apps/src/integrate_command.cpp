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
#include "integrate_settings.hpp"
#include "output.hpp"
#include "swarmfit/integrators/ensemble_checks.hpp"

namespace po = boost::program_options;

namespace swarmfit::app {

namespace {

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
  KeyOrigins o;
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

  const IntegrateSettings settings = read_integrate_settings(vm, o);
  RunRequest request = settings.request;
  const std::string& integrator_name = request.integrator->name;
  const std::string& backend = settings.backend;
  const double destination = request.destination_time;
  const double snapshot_interval = positive<double>(vm, o, "snapshot_interval", true);
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
  check_initial_conditions(*ensemble, ic_origin, destination, o);
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
