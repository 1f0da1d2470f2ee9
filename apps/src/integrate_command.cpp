// `swarmfit integrate`: Swarm-NG-style configuration -> ensemble -> backend -> output files,
// with a summary (energy errors, throughput) and the Swarm-NG test mode (--reference).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
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
int compare_with_reference(const Ensemble& e, const Ensemble* ref, const std::string& path, double pos_threshold,
                           double vel_threshold, double time_threshold) {
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
  LoadedKeys loaded = load_keys(args, overrides, keys);
  const KeyOrigins& o = loaded.origins;
  const po::variables_map& vm = loaded.vm;
  const std::string& config_text = loaded.text;

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
    check_memory(static_cast<double>(g.num_systems), g.num_bodies, "nsys", o);
    g.planet_mass = positive<double>(vm, o, "planet_mass", true);
    g.spacing_factor = vm["spacing_factor"].as<double>();
    if (!(g.spacing_factor > 0 && std::isfinite(g.spacing_factor))) bad_value(o, "spacing_factor", "must be positive");
    g.G = request.step.G;
    if (o.settings.count("seed") && o.settings.at("seed").value.find('-') != std::string::npos)
      bad_value(o, "seed", "must be a whole number >= 0");
    g.seed = vm["seed"].as<std::uint64_t>();
    ensemble = generate_swarm_ensemble(g);
    ic_origin = "generated initial conditions";
  }
  check_initial_conditions(*ensemble, ic_origin, destination, o);
  // The reference is read (and its shape checked) before the work, as every input.
  std::unique_ptr<Ensemble> reference;
  if (args.count("reference")) {
    const std::string path = args["reference"].as<std::string>();
    reference = read_initial_conditions(path);
    if (reference->num_systems() != ensemble->num_systems() || reference->num_bodies() != ensemble->num_bodies())
      throw InputError(path + ": reference has " + std::to_string(reference->num_systems()) + " systems of " +
                       std::to_string(reference->num_bodies()) + " bodies; the run has " +
                       std::to_string(ensemble->num_systems()) + " of " + std::to_string(ensemble->num_bodies()));
  }
  const double work_limit = positive<double>(vm, o, "work_limit");
  const double limit_gb = vm["output_limit_gb"].as<double>();
  if (!(limit_gb > 0)) bad_value(o, "output_limit_gb", "must be positive");
  const WorkPlan plan = plan_work(*ensemble, request, work_limit, o);
  const double energy_tolerance = positive<double>(vm, o, "energy_tolerance");
  if (snapshot_interval > 0) {
    const double snapshots = std::ceil((destination - ensemble->time(0)) / snapshot_interval) + 1;
    const double bytes = snapshots * static_cast<double>(ensemble->num_systems()) *
                         (ensemble->num_bodies() * 6.0 * sizeof(double) + sizeof(int) + sizeof(double));
    if (!(bytes <= limit_gb * 1e9)) {
      char text[200];
      std::snprintf(text, sizeof text, "%.4g snapshots would take %.4g GB, above output_limit_gb = %g", snapshots,
                    bytes / 1e9, limit_gb);
      bad_value(o, "snapshot_interval", text);
    }
  }
  const bool overwrite = vm["overwrite"].as<bool>();
  for (const char* key : {"output", "output_csv"})
    if (vm.count(key) && std::filesystem::exists(vm[key].as<std::string>()) && !overwrite)
      bad_value(o, key, vm[key].as<std::string>() + " exists (add overwrite=true to replace it)");
  // A signal mid-run removes the partial outputs (nothing half-written is left).
  h5::remove_partials_on_signals();
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
  long energy_flagged = 0;
  for (long s = 0; s < m; ++s)
    if (ensemble->status(s) == kStatusOk && !(std::abs(summary.energy_error[s]) <= energy_tolerance)) {
      ensemble->set_status(s, kStatusEnergyError);
      ++energy_flagged;
    }
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
    status_line << (status_line.tellp() > 0 ? ", " : "") << integrate_status_name(code) << " " << count;
  std::cout << std::setprecision(3);
  std::cout << "swarmfit integrate: " << integrator_name << " on " << backend << ", " << m << " systems x "
            << ensemble->num_bodies() << " bodies, t = " << start_time << " -> " << destination << "\n"
            << "  steps          " << total_steps << " system-steps (" << total_steps / m << " per system)\n"
            << "  wall time      " << wall << " s";
  if (backend == "cuda") std::cout << " (kernel " << kernel_ms << " ms)";
  std::cout << "\n  throughput     " << total_steps / wall << " system-steps/s\n"
            << "  |dE/E|         worst " << spread.worst << ", median " << spread.median << "\n"
            << "  status         " << status_line.str() << "\n";
  if (plan.automatic_max_steps > 0)
    std::cout << "  step budget    " << plan.automatic_max_steps << " steps per system (automatic; max_steps)\n";
  if (energy_flagged > 0)
    std::cerr << "swarmfit: warning: " << energy_flagged << " of " << m
              << " systems end with |dE/E| above energy_tolerance = " << energy_tolerance
              << " (status energy_error): their states are not to be trusted; use a smaller time_step\n";
  if (args.count("reference"))
    return compare_with_reference(*ensemble, reference.get(), args["reference"].as<std::string>(), pos_threshold,
                                  vel_threshold, time_threshold);
  return 0;
}

}  // namespace swarmfit::app
