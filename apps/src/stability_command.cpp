// `swarmfit stability`: every posterior draw of a run (or every parameter set of a CSV) integrated
// for a horizon with the chaos indicators and the instability monitors, on the CPU or the GPU
// (models/stability.hpp); writes one row per set and prints the survivors' posterior next to the
// whole one. `swarmfit map`: the same over a 2-D grid of two parameters of a model.
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "commands.hpp"
#include "config.hpp"
#include "errors.hpp"
#include "swarmfit/inference/hdf5_io.hpp"
#include "swarmfit/inference/run_file.hpp"
#include "swarmfit/integrators/limits.hpp"
#include "swarmfit/models/fit_summary.hpp"
#include "swarmfit/models/model_config.hpp"
#include "swarmfit/models/stability.hpp"
#include "swarmfit/models/status.hpp"

namespace po = boost::program_options;

namespace swarmfit::app {

namespace {

// The options stability and map share, checked; work_limit 0 becomes the backend's default.
void check_options(const StabilityOptions& s, double& work_limit) {
  if (!(s.horizon_orbits > 0) || !std::isfinite(s.horizon_orbits))
    throw InputError("command line: --horizon must be > 0 and finite");
  if (!(s.steps_per_orbit >= 4) || !std::isfinite(s.steps_per_orbit))
    throw InputError("command line: --steps-per-orbit must be >= 4 and finite");
  if (!(s.close_approach >= 0) || !std::isfinite(s.close_approach))
    throw InputError("command line: --close-approach must be >= 0 and finite");
  if (s.threads < 0 || s.threads > kMaxThreads)
    throw InputError("command line: --threads must be 0 (all cores) to " + std::to_string(kMaxThreads));
  if (!(work_limit >= 0)) throw InputError("command line: --work-limit must be >= 0 (0: automatic)");
  if (work_limit == 0) work_limit = s.backend == "cuda" ? 1e12 : 1e10;
}

// The work, estimated before any: steps to the horizon x parameter sets (issue 37: --horizon 1e12
// ran for ever).
void check_work(const StabilityPlan& plan, long count, double work_limit) {
  const double work = static_cast<double>(plan.steps) * static_cast<double>(count);
  if (!(work <= work_limit)) {
    char why[200];
    std::snprintf(why, sizeof why,
                  "command line: --horizon x --steps-per-orbit: %.3g steps x %ld sets = %.3g system-steps, above "
                  "--work-limit %.3g "
                  "(raise --work-limit to run it)",
                  static_cast<double>(plan.steps), count, work, work_limit);
    throw InputError(why);
  }
}

std::string fmt(double v) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.10g", v);
  return buffer;
}

// Every `thin`-th kept draw of every walker, as full parameter sets; at most `limit` (evenly spread).
std::vector<double> posterior_sets(const RunRecord& run, long burn_in, long limit, long& count) {
  const Chain& c = run.chain;
  const long first = first_kept_draw(c, burn_in);
  const long available = (c.num_draws() - first) * c.num_walkers;
  const long take = limit > 0 ? std::min(limit, available) : available;
  const std::size_t np = run.names.size();
  std::vector<double> sets;
  sets.reserve(take * np);
  for (long k = 0; k < take; ++k) {
    const long index = static_cast<long>(static_cast<double>(k) * available / take);
    const long draw = first + index / c.num_walkers;
    const int walker = static_cast<int>(index % c.num_walkers);
    std::vector<double> full = run.values;
    for (int p = 0; p < c.num_parameters; ++p) full[run.free[p]] = c.parameter(draw, walker, p);
    sets.insert(sets.end(), full.begin(), full.end());
  }
  count = take;
  return sets;
}

// The per-set results as HDF5 (read with h5py): one dataset per column, [set] or [set][planet],
// the parameter sets [set][parameter] with their names, and the run's settings as attributes.
void write_stability_h5(const std::string& path, const PlanetaryModel& model, const std::vector<double>& sets,
                        long count, const std::vector<SetStability>& r, const StabilityOptions& s,
                        const StabilityPlan& plan) {
  const int np = model.num_parameters(), planets = model.num_planets();
  const hsize_t n = static_cast<hsize_t>(count), p = static_cast<hsize_t>(planets);
  StabilityColumns c = stability_columns(r, planets);
  std::vector<std::string> names, planet_names = model.planets();
  for (const auto& info : model.parameters()) names.push_back(info.name);
  h5::AtomicFile file(path);
  {
    h5::Handle f(H5Fcreate(file.partial_path().c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT), path);
    h5::write(f, "params", {n, static_cast<hsize_t>(np)}, sets.data());
    h5::write_strings(f, "parameter_names", names);
    h5::write_strings(f, "planet_names", planet_names);
    for (auto [name, column] : c.flags()) h5::write(f, name, {n}, column->data());
    for (auto [name, column] : c.values()) h5::write(f, name, {n}, column->data());
    h5::write(f, "max_e", {n, p}, c.max_e.data());
    h5::write(f, "max_da", {n, p}, c.max_da.data());
    h5::attribute(f, "integrator", s.integrator);
    h5::attribute(f, "time_step_days", plan.time_step);
    h5::attribute(f, "horizon_days", plan.horizon);
    h5::attribute(f, "horizon_orbits", s.horizon_orbits);
    h5::attribute(f, "close_approach", s.close_approach);
    h5::attribute(f, "megno_limit", s.megno_limit);
  }
  file.commit();
}

}  // namespace

int stability_command(int argc, char** argv) {
  po::options_description options("Options");
  std::string run_path, config, params_path, output = "stability.csv", png;
  double work_limit = 0;
  long burn_in = -1, draws = 0;
  bool resume = false;
  StabilityOptions s;
  options.add_options()("help,h", "show this help")("run", po::value<std::string>(&run_path),
                                                    "run file of a fit (HDF5)")(
      "config", po::value<std::string>(&config), "a model configuration instead of a run (with --params)")(
      "params", po::value<std::string>(&params_path), "CSV of parameter sets (header: parameter names)")(
      "burn-in", po::value<long>(&burn_in)->default_value(-1),
      "generations of the run to discard (-1: the first half)")(
      "draws", po::value<long>(&draws)->default_value(0), "at most this many posterior draws, evenly spread (0: all)")(
      "horizon", po::value<double>(&s.horizon_orbits)->default_value(1e4), "orbits of the outermost planet")(
      "steps-per-orbit", po::value<double>(&s.steps_per_orbit)->default_value(20.0),
      "time step = the shortest pericentre passage time P (1-e)^1.5/(1+e)^0.5 (the period of a circular orbit) / this")(
      "integrator", po::value<std::string>(&s.integrator)->default_value("whfast"),
      ("fixed-step integrator (" + integrator_names() + ")").c_str())(
      "close-approach", po::value<double>(&s.close_approach)->default_value(1.0),
      "unstable below this many mutual Hill radii (0: off)")(
      "megno-limit", po::value<double>(&s.megno_limit)->default_value(3.0), "chaotic above this MEGNO")(
      "backend", po::value<std::string>(&s.backend)->default_value("cpu"), "cpu or cuda")(
      "threads", po::value<int>(&s.threads)->default_value(0), "CPU threads (0: all)")(
      "work-limit", po::value<double>(&work_limit)->default_value(0),
      "refuse runs estimated to take more system-steps (steps x sets) than this (0: 1e10 on the cpu backend, "
      "hours there; 1e12 on cuda)")("output", po::value<std::string>(&output)->default_value("stability.csv"),
                                    "CSV file of the per-set results (and the same as HDF5 next to it, .h5)")(
      "png", po::value<std::string>(&png),
      "also plot MEGNO and the orbits survived against the eccentricities and period ratios here")(
      "resume", po::bool_switch(&resume),
      "continue a stopped run from its checkpoint (OUTPUT.checkpoint.h5, written as the run goes)");
  po::variables_map vm;
  parse_command_line_with_file(argc, argv, options, "run", vm);
  if (vm.count("help")) {
    std::cout << "usage: swarmfit stability RUN.h5 [options]\n"
                 "       swarmfit stability --config FILE --params FILE.csv [options]\n"
              << options;
    return 0;
  }
  if (run_path.empty() == config.empty())
    throw InputError("command line: give a run file (swarmfit stability RUN.h5) or --config with --params");
  check_options(s, work_limit);
  if (draws < 0) throw InputError("command line: --draws must be >= 0 (0: all)");
  if (burn_in < -1) throw InputError("command line: --burn-in must be -1 (the first half) or >= 0");
  if (!(s.megno_limit > 2)) throw InputError("command line: --megno-limit must be > 2 (MEGNO tends to 2 when regular)");
  if (s.backend != "cpu" && s.backend != "cuda") throw InputError("command line: --backend must be cpu or cuda");
  if (s.backend == "cuda" && !cuda_available())
    throw InputError("command line: --backend cuda requested but " + cuda_device_name());
  const IntegratorInfo* info = find_integrator(s.integrator);
  if (!info) throw InputError("command line: --integrator: unknown (" + integrator_names() + ")");
  if (info->adaptive)
    throw InputError("command line: --integrator: " + s.integrator + " adapts its step; take a fixed-step one");
  check_output_path(output, "--output");
  if (!png.empty()) check_output_path(png, "--png");
  if (std::filesystem::exists(output)) throw InputError(output + ": exists (remove it or choose another --output)");
  const std::string h5_path =
      (output.size() > 4 && output.compare(output.size() - 4, 4, ".csv") == 0 ? output.substr(0, output.size() - 4)
                                                                              : output) +
      ".h5";
  if (std::filesystem::exists(h5_path)) throw InputError(h5_path + ": exists (remove it or choose another --output)");
  if (!png.empty() && std::filesystem::exists(png)) throw InputError(png + ": exists (remove it or choose another)");
  s.checkpoint = output + ".checkpoint.h5";
  if (std::filesystem::exists(s.checkpoint) && !resume)
    throw InputError(s.checkpoint + ": a stopped run's checkpoint (--resume continues it, or remove it)");
  if (std::filesystem::exists(s.checkpoint) && H5Fis_hdf5(s.checkpoint.c_str()) <= 0)
    throw InputError(s.checkpoint + ": not an HDF5 file (a damaged checkpoint: remove it to start again)");

  std::unique_ptr<PlanetaryModel> owned;
  ModelConfig model_config;
  const PlanetaryModel* model = nullptr;
  std::vector<double> sets;
  long count = 0;
  if (!run_path.empty()) {
    RunRecord run;
    try {
      run = read_run(run_path);
    } catch (const std::exception& e) {
      throw InputError(e.what());
    }
    const auto ephemeris = run.attributes.find("ephemeris");
    if (ephemeris != run.attributes.end() && ephemeris->second == "mean")
      throw InputError(run_path +
                       ": the run's periods and tc are mean ephemerides (ephemeris = mean): not yet "
                       "supported by swarmfit stability");
    owned = model_from_attributes(run.attributes);
    if (!owned) throw InputError(run_path + ": the run file does not describe a planetary model");
    model = owned.get();
    sets = posterior_sets(run, burn_in, draws, count);
  } else {
    if (params_path.empty()) throw InputError("command line: --config needs --params FILE.csv");
    model_config = load_model_config(config, {});
    model = model_config.model.get();
    sets = read_parameter_sets(params_path, model_config, count);
  }
  if (count == 0)
    throw InputError(run_path.empty() ? params_path + ": no parameter sets to assess"
                                      : "command line: --burn-in " + std::to_string(burn_in) + " leaves no draws of " +
                                            run_path + " to assess");
  if (model->num_bodies() > kMaxChaosBodies)
    throw InputError("the model has " + std::to_string(model->num_planets()) + " planets; stability takes at most " +
                     std::to_string(kMaxChaosBodies - 1));

  const StabilityPlan plan = plan_stability(*model, sets, count, s);
  check_work(plan, count, work_limit);
  std::cout << "swarmfit stability: " << count << " parameter sets, " << s.integrator << " at " << fmt(plan.time_step)
            << " d for " << fmt(plan.horizon / 365.25) << " yr (" << fmt(s.horizon_orbits) << " outer orbits, "
            << fmt(static_cast<double>(plan.steps)) << " steps), backend " << s.backend << "\n";
  const bool terminal = isatty(fileno(stdout));
  if (resume && std::filesystem::exists(s.checkpoint)) std::cout << "  resuming from " << s.checkpoint << "\n";
  // What a run killed mid-write left half-written (its process gone): removed before this one writes.
  for (const std::string& path : {s.checkpoint, output, h5_path}) h5::remove_stale_partials(path);
  std::vector<SetStability> results;
  try {
    results = assess_stability(*model, sets, count, s, [&](double done) {
      if (terminal) std::printf("\r  %5.1f%%", 100 * done), std::fflush(stdout);
    });
  } catch (const std::invalid_argument& e) {
    throw InputError(e.what());
  }
  if (terminal) std::printf("\r");

  {
    h5::AtomicFile file(output);
    std::ofstream out(file.partial_path());
    out << "set";
    for (const auto& p : model->parameters()) out << "," << p.name;
    out << ",status,survived,time_days,orbits,megno,megno_slope,lyapunov_per_day,closest_hill,chaotic";
    for (const auto& planet : model->planets()) out << ",max_e_" << planet << ",max_da_" << planet;
    out << ",amd_stable,hill_stable,crossing\n";
    const int np = model->num_parameters();
    for (long k = 0; k < count; ++k) {
      const SetStability& r = results[k];
      out << k;
      for (int p = 0; p < np; ++p) out << "," << fmt(sets[k * np + p]);
      out << "," << model_status_name(r.status) << "," << r.survived() << "," << fmt(r.time) << "," << fmt(r.orbits)
          << "," << fmt(r.chaos.megno) << "," << fmt(r.chaos.megno_slope) << "," << fmt(r.chaos.lyapunov) << ","
          << fmt(r.chaos.closest_hill) << "," << r.chaotic;
      for (int q = 0; q < model->num_planets(); ++q)
        out << "," << fmt(q < static_cast<int>(r.chaos.max_e.size()) ? r.chaos.max_e[q] : NAN) << ","
            << fmt(q < static_cast<int>(r.chaos.max_da.size()) ? r.chaos.max_da[q] : NAN);
      out << "," << r.criteria.amd_stable << "," << r.criteria.hill_stable << "," << r.criteria.crossing << "\n";
    }
    out.close();
    if (!out) throw std::runtime_error(output + ": write failed");
    file.commit();
  }

  write_stability_h5(h5_path, *model, sets, count, results, s, plan);

  long survived = 0, chaotic = 0, amd = 0, hill = 0;
  for (const SetStability& r : results) {
    survived += r.survived();
    chaotic += r.survived() && r.chaotic;
    amd += r.criteria.amd_stable;
    hill += r.criteria.hill_stable;
  }
  auto pct = [&](long n) { return fmt(100.0 * n / count) + "%"; };
  std::cout << "  survived the horizon: " << survived << " of " << count << " (" << pct(survived)
            << "); of them chaotic (MEGNO > " << fmt(s.megno_limit) << "): " << chaotic << "\n"
            << "  AMD-stable: " << amd << " (" << pct(amd) << "), Hill-stable pairs: " << hill << " (" << pct(hill)
            << ")\n";
  std::cout << "  parameter                      all: median [16%, 84%]             survivors: median [16%, 84%]\n";
  for (const StabilityTableRow& row : stability_table(*model, sets, count, results)) {
    char line[256];
    std::snprintf(line, sizeof line, "  %-22s %12.6g [%12.6g, %12.6g]  %12.6g [%12.6g, %12.6g]\n", row.name.c_str(),
                  row.all[1], row.all[0], row.all[2], row.survived[1], row.survived[0], row.survived[2]);
    std::cout << line;
  }
  std::cout << "  wrote " << output << " and " << h5_path << "\n";
  if (!png.empty()) {
    const std::string command =
        "python3 " SWARMFIT_PYTHON_DIR "/swarmfit_stability_plot.py '" + h5_path + "' '" + png + "'";
    if (std::system(command.c_str()) != 0) throw std::runtime_error("the PNG could not be made (" + command + ")");
    std::cout << "  wrote " << png << "\n";
  }
  return 0;
}

namespace {

GridAxis parse_axis(const std::string& flag, const std::string& text) {
  // NAME:LO:HI:N
  std::vector<std::string> parts;
  std::stringstream in(text);
  for (std::string part; std::getline(in, part, ':');) parts.push_back(part);
  GridAxis a;
  try {
    if (parts.size() != 4) throw std::invalid_argument("");
    std::size_t used = 0;
    a.name = parts[0];
    a.lo = std::stod(parts[1], &used);
    if (used != parts[1].size()) throw std::invalid_argument("");
    a.hi = std::stod(parts[2], &used);
    if (used != parts[2].size()) throw std::invalid_argument("");
    a.n = std::stoi(parts[3], &used);
    if (used != parts[3].size()) throw std::invalid_argument("");
  } catch (const std::exception&) {
    throw InputError("command line: " + flag + " expects NAME:LO:HI:N, got '" + text + "'");
  }
  if (!(a.n >= 1 && a.n <= 100000) || !std::isfinite(a.lo) || !std::isfinite(a.hi))
    throw InputError("command line: " + flag + ": N must be 1 to 100000 and LO, HI finite");
  if (!(a.lo < a.hi) && !(a.n == 1 && a.lo == a.hi))
    throw InputError("command line: " + flag + ": LO must be below HI, got '" + text + "'");
  return a;
}

}  // namespace

int map_command(int argc, char** argv) {
  po::options_description options("Options");
  std::string config, x_text, y_text, output = "map.csv", png;
  double work_limit = 0;
  StabilityOptions s;
  s.horizon_orbits = 1e3;
  options.add_options()("help,h", "show this help")("config", po::value<std::string>(&config), "model configuration")(
      "x", po::value<std::string>(&x_text), "NAME:LO:HI:N, NAME a parameter of the model or e_<planet>")(
      "y", po::value<std::string>(&y_text), "NAME:LO:HI:N")(
      "horizon", po::value<double>(&s.horizon_orbits)->default_value(1e3), "orbits of the outermost planet")(
      "steps-per-orbit", po::value<double>(&s.steps_per_orbit)->default_value(20.0),
      "time step = the shortest pericentre passage time P (1-e)^1.5/(1+e)^0.5 (the period of a circular orbit) / this")(
      "integrator", po::value<std::string>(&s.integrator)->default_value("whfast"), "fixed-step integrator")(
      "close-approach", po::value<double>(&s.close_approach)->default_value(1.0),
      "unstable below this many mutual Hill radii (0: off)")(
      "backend", po::value<std::string>(&s.backend)->default_value("cpu"), "cpu or cuda")(
      "threads", po::value<int>(&s.threads)->default_value(0), "CPU threads (0: all)")(
      "work-limit", po::value<double>(&work_limit)->default_value(0),
      "refuse runs estimated to take more system-steps (steps x sets) than this (0: 1e10 on the cpu backend, "
      "hours there; 1e12 on cuda)")("output", po::value<std::string>(&output)->default_value("map.csv"),
                                    "CSV file of the grid")(
      "png", po::value<std::string>(&png), "also plot MEGNO and the survival time here (python3, matplotlib)");
  po::variables_map vm;
  parse_command_line(argc, argv, options, nullptr, vm);
  if (vm.count("help")) {
    std::cout << "usage: swarmfit map --config FILE --x NAME:LO:HI:N --y NAME:LO:HI:N [options]\n" << options;
    return 0;
  }
  if (config.empty() || x_text.empty() || y_text.empty())
    throw InputError("command line: --config, --x and --y are required (swarmfit map --help)");
  const GridAxis x = parse_axis("--x", x_text), y = parse_axis("--y", y_text);
  if (x.name == y.name) throw InputError("command line: --x and --y vary the same parameter '" + x.name + "'");
  if (static_cast<long>(x.n) * y.n > 10000000) throw InputError("command line: more than 1e7 grid cells");
  check_options(s, work_limit);
  if (s.backend != "cpu" && s.backend != "cuda") throw InputError("command line: --backend must be cpu or cuda");
  if (s.backend == "cuda" && !cuda_available())
    throw InputError("command line: --backend cuda requested but " + cuda_device_name());
  const IntegratorInfo* info = find_integrator(s.integrator);
  if (!info || info->adaptive) throw InputError("command line: --integrator: take a fixed-step integrator");
  check_output_path(output, "--output");
  if (!png.empty()) check_output_path(png, "--png");
  for (const std::string& path : {output, png})
    if (!path.empty() && std::filesystem::exists(path))
      throw InputError(path + ": exists (remove it or choose another)");
  const ModelConfig c = load_model_config(config, {});
  if (c.model->num_bodies() > kMaxChaosBodies) throw InputError("map: too many planets for the chaos indicators");
  std::vector<double> sets;
  try {
    sets = parameter_grid(*c.model, c.values, x, y);
  } catch (const std::invalid_argument& e) {
    throw InputError(std::string("command line: ") + e.what());
  }
  const long count = static_cast<long>(x.n) * y.n;
  // Every cell a valid orbit (a period > 0, e < 1, ...), or the axis that leaves it is named.
  for (long k = 0; k < count; ++k) {
    std::string reason;
    std::vector<PlanetState> states;
    const int np = c.model->num_parameters();
    if (!c.model->planet_states(sets.data() + k * np, states, &reason))
      throw InputError("command line: --x " + x_text + " --y " + y_text + ": cell " + std::to_string(k % x.n) + "," +
                       std::to_string(k / x.n) + " is no valid system (" + reason + ")");
  }
  const StabilityPlan plan = plan_stability(*c.model, sets, count, s);
  check_work(plan, count, work_limit);
  std::cout << "swarmfit map: " << x.n << " x " << y.n << " cells, " << s.integrator << " at " << fmt(plan.time_step)
            << " d for " << fmt(s.horizon_orbits) << " outer orbits (" << fmt(static_cast<double>(plan.steps))
            << " steps), backend " << s.backend << "\n";
  const std::vector<SetStability> r = assess_stability(*c.model, sets, count, s);
  {
    h5::AtomicFile file(output);
    std::ofstream out(file.partial_path());
    out << x.name << "," << y.name << ",status,survived,orbits,megno,lyapunov_per_day,closest_hill\n";
    for (long k = 0; k < count; ++k)
      out << fmt(x.value(static_cast<int>(k % x.n))) << "," << fmt(y.value(static_cast<int>(k / x.n))) << ","
          << model_status_name(r[k].status) << "," << r[k].survived() << "," << fmt(r[k].orbits) << ","
          << fmt(r[k].chaos.megno) << "," << fmt(r[k].chaos.lyapunov) << "," << fmt(r[k].chaos.closest_hill) << "\n";
    out.close();
    if (!out) throw std::runtime_error(output + ": write failed");
    file.commit();
  }
  long survived = 0;
  for (const SetStability& q : r) survived += q.survived();
  std::cout << "  survived: " << survived << " of " << count << " cells; wrote " << output << "\n";
  if (!png.empty()) {
    const std::string command =
        "python3 " SWARMFIT_PYTHON_DIR "/swarmfit_map.py '" + output + "' '" + png + "' " + fmt(s.horizon_orbits);
    if (std::system(command.c_str()) != 0) throw std::runtime_error("the PNG could not be made (" + command + ")");
    std::cout << "  wrote " << png << "\n";
  }
  return 0;
}

}  // namespace swarmfit::app
