// `swarmfit predict`: model RV curves and transit times (with O-C) for one or many parameter
// sets, as CSV; and `swarmfit data`: read and check the data of a configuration, and summarise.
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>

#include "commands.hpp"
#include "config.hpp"
#include "errors.hpp"
#include "output.hpp"
#include "swarmfit/integrators/registry.hpp"
#include "swarmfit/models/model_config.hpp"
#include "swarmfit/models/predictions.hpp"

namespace po = boost::program_options;

namespace swarmfit::app {

namespace {

struct CommandLine {
  std::string config, params, output = "predict";
  double grid_step = 0.0;
  std::vector<std::string> overrides;
  bool help = false, overwrite = false;
};

CommandLine parse(int argc, char** argv, bool predict) {
  po::options_description options("Options");
  CommandLine c;
  options.add_options()("help,h", "show this help")("config", po::value<std::string>(&c.config), "configuration file");
  if (predict)
    options.add_options()("params", po::value<std::string>(&c.params),
                          "CSV file: a header of parameter names, one parameter set per row (default: the "
                          "configuration's values)")(
        "output", po::value<std::string>(&c.output)->default_value("predict"), "folder for the CSV files")(
        "grid-step", po::value<double>(&c.grid_step)->default_value(0.0),
        "RV curve spacing, days (0: the shortest period / 50)")("overwrite", po::bool_switch(&c.overwrite),
                                                                "replace the CSV files if the folder has them");
  po::variables_map vm;
  parse_command_line(argc, argv, options, &c.overrides, vm);
  if (vm.count("help")) {
    std::cout << (predict ? "usage: swarmfit predict --config FILE [--params FILE] [--output DIR] [key=value ...]\n"
                          : "usage: swarmfit data --config FILE\n")
              << options << "\n"
              << key_help("Global keys (before the first [section], or key=value on the command line)", model_keys())
              << "\n"
              << section_help();
    c.help = true;
    return c;
  }
  if (c.config.empty()) throw InputError("command line: --config FILE is required");
  return c;
}

std::string fmt(double v) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.17g", v);
  return buffer;
}

}  // namespace

int data_command(int argc, char** argv) {
  const CommandLine cl = parse(argc, argv, false);
  if (cl.help) return 0;
  const ModelConfig c = load_model_config(cl.config, cl.overrides, ConfigUse::kDataOnly);
  // With a model in the file, what fit and predict check too: the data against the model (planets
  // and instruments it has, data after the reference epoch) and the integration step.
  bool has_model = false;
  for (const ConfigSection& s : c.file.sections) has_model = has_model || s.type == "planet";
  std::string step_line;
  if (has_model) step_line = load_model_config(cl.config, cl.overrides).step_check.describe();
  const Dataset& d = c.data;
  std::cout << std::fixed << std::setprecision(6);
  if (!d.rv.empty()) {
    std::cout << "RV: " << d.rv.size() << " points, BJD " << d.rv.front().time << " to " << d.rv.back().time << "\n";
    for (std::size_t j = 0; j < d.instruments.size(); ++j) {
      int n = 0;
      for (const auto& o : d.rv) n += o.instrument == static_cast<int>(j);
      std::cout << "  " << d.instruments[j] << ": " << n << " points\n";
    }
  }
  if (!d.transits.empty()) {
    std::cout << "transit times: " << d.transits.size() << "\n";
    for (std::size_t p = 0; p < d.planets.size(); ++p) {
      int n = 0;
      for (const auto& o : d.transits) n += o.planet == static_cast<int>(p);
      const LinearEphemeris e = fit_linear_ephemeris(d, static_cast<int>(p));
      std::cout << "  planet " << d.planets[p] << ": " << n << " transits, linear ephemeris T0 = " << e.t0 << " + "
                << std::setprecision(8) << e.period << std::setprecision(6) << " E\n";
    }
  }
  for (const auto& note : d.notes) std::cout << "note: " << note << "\n";
  if (has_model) std::cout << "model: the data fit its planets and instruments; integration " << step_line << "\n";
  return 0;
}

int predict_command(int argc, char** argv) {
  const CommandLine cl = parse(argc, argv, true);
  if (cl.help) return 0;
  const ModelConfig c = load_model_config(cl.config, cl.overrides);
  // A fit's mean-ephemeris coordinates are anchored by that fit (models/ephemeris.hpp): parameter
  // sets in them are not osculating elements, which is what predict integrates.
  if (c.vm.count("ephemeris") && c.vm["ephemeris"].as<std::string>() == "mean")
    throw InputError(cl.config +
                     ": ephemeris = mean: predict integrates osculating elements; a fit's draws in "
                     "mean-ephemeris coordinates are not (its run file's predictive draws hold their curves)");
  const PlanetaryModel& model = *c.model;
  long count = 1;
  std::vector<double> params = c.values;
  if (!cl.params.empty()) params = read_parameter_sets(cl.params, c, count);
  if (!(cl.grid_step >= 0) || !std::isfinite(cl.grid_step))
    throw InputError("command line: --grid-step must be >= 0 and finite");
  namespace fs = std::filesystem;
  if (cl.output.empty()) throw InputError("command line: --output is empty");
  if (fs::exists(cl.output) && !fs::is_directory(cl.output))
    throw InputError("command line: --output " + cl.output + " exists and is not a folder");
  for (const char* name : {"rv_data.csv", "rv_curve.csv", "transits.csv"})
    if (fs::exists(fs::path(cl.output) / name) && !cl.overwrite)
      throw InputError("command line: --output " + cl.output + " has " + name + " (add --overwrite to replace)");
  remove_partials_on_signals();

  const Predictions pr = predict(c, params, count, cl.grid_step);
  std::filesystem::create_directories(cl.output);
  const Dataset& d = c.data;
  const int nrv = static_cast<int>(d.rv.size()), ni = static_cast<int>(d.instruments.size());
  const int ntr = static_cast<int>(pr.transit_rows.size());
  {
    AtomicFile file(cl.output + "/rv_data.csv");
    std::ofstream out(file.partial_path());
    out << "set,instrument,time,rv,error,model,offset,residual\n";
    for (long s = 0; s < count && nrv > 0; ++s) {
      for (int k = 0; k < nrv; ++k) {
        const auto& o = d.rv[k];
        const double m = pr.rv_model[s * nrv + k];
        out << s << "," << d.instruments[o.instrument] << "," << fmt(o.time) << "," << fmt(o.rv) << "," << fmt(o.error)
            << "," << fmt(m) << "," << fmt(pr.offsets[s * ni + o.instrument]) << "," << fmt(o.rv - m) << "\n";
      }
    }
    out.close();
    if (!out) throw std::runtime_error(cl.output + "/rv_data.csv: write failed");
    file.commit();
  }
  {
    AtomicFile file(cl.output + "/rv_curve.csv");
    std::ofstream out(file.partial_path());
    out << "set,time,rv\n";
    const std::size_t ng = pr.grid.size();
    for (long s = 0; s < count; ++s)
      for (std::size_t k = 0; k < ng; ++k)
        out << s << "," << fmt(pr.grid[k]) << "," << fmt(pr.rv_curve[s * ng + k]) << "\n";
    out.close();
    if (!out) throw std::runtime_error(cl.output + "/rv_curve.csv: write failed");
    file.commit();
  }
  {
    AtomicFile file(cl.output + "/transits.csv");
    std::ofstream out(file.partial_path());
    out << "set,planet,epoch,time_observed,error,time_model,residual_minutes,oc_observed_minutes,oc_model_minutes\n";
    for (long s = 0; s < count; ++s)
      for (int r = 0; r < ntr; ++r) {
        const auto& o = pr.transit_rows[r];
        const int planet = pr.transit_planet[r];
        const double linear = pr.transit_linear[r];
        const double m = pr.transit_model[s * ntr + r];
        out << s << "," << model.planets()[planet] << "," << o.epoch << "," << fmt(o.time) << "," << fmt(o.error) << ","
            << fmt(m) << "," << fmt((o.time - m) * 1440) << "," << fmt((o.time - linear) * 1440) << ","
            << fmt((m - linear) * 1440) << "\n";
      }
    out.close();
    if (!out) throw std::runtime_error(cl.output + "/transits.csv: write failed");
    file.commit();
  }
  std::cout << "swarmfit predict: " << count << " parameter set(s), integrator " << c.likelihood.integrator << ", step "
            << pr.time_step << " d, " << nrv << " RVs, " << ntr << " transit times\n";
  std::cout << "  set          ln L  status           RV rms (m/s)  transit rms (min)\n";
  for (long s = 0; s < std::min<long>(count, 20); ++s) {
    char line[200];
    std::snprintf(line, sizeof line, "  %3ld %13.4f  %-16s %13.4f %18.5f\n", s, pr.log_likelihood[s],
                  model_status_name(pr.status[s]), pr.rv_rms[s], pr.transit_rms[s] * 1440);
    std::cout << line;
  }
  std::cout << "  integration  " << c.step_check.describe() << "\n";
  if (!c.step_check.passed())
    std::cerr << "swarmfit: warning: the step is too large for these data (" << c.step_check.describe()
              << "): set a smaller time_step\n";
  for (const auto& note : c.data.notes) std::cout << "  note: " << note << "\n";
  std::cout << "  wrote " << cl.output << "/rv_data.csv, rv_curve.csv, transits.csv\n";
  return 0;
}

}  // namespace swarmfit::app
