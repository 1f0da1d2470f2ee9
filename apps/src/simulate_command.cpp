// `swarmfit simulate`: synthetic RV and transit-time data from a known truth
// (models/simulate.hpp), written as the data files the model configurations read.
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "commands.hpp"
#include "config.hpp"
#include "errors.hpp"
#include "swarmfit/inference/hdf5_io.hpp"
#include "swarmfit/models/model_config.hpp"
#include "swarmfit/models/simulate.hpp"

namespace po = boost::program_options;

namespace swarmfit::app {

namespace {

struct Options {
  std::string config, output, instrument = "SIM", planets;
  long seed = 1;
  int rv_count = 40;
  double rv_error = 3.0, rv_offset = 0.0, rv_jitter = 0.0, span = 0.0, transit_error = 2.0, max_steps = 1e9;
  bool overwrite = false;
  std::vector<std::string> overrides;
};

void write_file(const std::string& path, const std::string& text) {
  h5::AtomicFile file(path);
  {
    std::ofstream out(file.partial_path());
    out << text;
    out.close();
    if (!out) throw std::runtime_error(path + ": write failed");
  }
  file.commit();
}

std::string fmt(double v, const char* format = "%.17g") {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, format, v);
  return buffer;
}

}  // namespace

int simulate_command(int argc, char** argv) {
  Options o;
  po::options_description options("Options");
  options.add_options()("help,h", "show this help")("config", po::value<std::string>(&o.config),
                                                    "model configuration whose parameter values are the truth")(
      "output", po::value<std::string>(&o.output), "folder for rv.txt, transits_<planet>.txt and truth.csv")(
      "seed", po::value<long>(&o.seed)->default_value(1), "noise and RV times")(
      "span", po::value<double>(&o.span)->default_value(0.0), "days of data after the reference epoch (required)")(
      "rv-count", po::value<int>(&o.rv_count)->default_value(40), "number of RVs (0: none)")(
      "rv-error", po::value<double>(&o.rv_error)->default_value(3.0), "RV error bar, m/s")(
      "rv-jitter", po::value<double>(&o.rv_jitter)->default_value(0.0), "extra RV noise not in the error bars, m/s")(
      "rv-offset", po::value<double>(&o.rv_offset)->default_value(0.0), "instrument zero point, m/s")(
      "instrument", po::value<std::string>(&o.instrument)->default_value("SIM"), "RV instrument name")(
      "transit-planets", po::value<std::string>(&o.planets)->default_value(""),
      "comma-separated planets with transit times (default: all)")(
      "transit-error", po::value<double>(&o.transit_error)->default_value(2.0), "transit-time error bar, minutes")(
      "max-steps", po::value<double>(&o.max_steps)->default_value(1e9),
      "refuse a span that takes more integration steps than this")(
      "overwrite", po::bool_switch(&o.overwrite), "replace the files of an earlier simulation in --output");
  po::variables_map vm;
  parse_command_line(argc, argv, options, &o.overrides, vm);
  if (vm.count("help")) {
    std::cout << "usage: swarmfit simulate --config TRUTH.cfg --output DIR --span DAYS [options] [key=value ...]\n"
              << options;
    return 0;
  }
  if (o.config.empty() || o.output.empty()) throw InputError("command line: --config and --output are required");
  if (!(o.span > 0)) throw InputError("command line: --span must be > 0");
  auto finite = [](double v, const char* option, bool positive) {
    if (!std::isfinite(v) || (positive ? !(v > 0) : !(v >= 0)))
      throw InputError(std::string("command line: ") + option + " must be " + (positive ? "> 0" : ">= 0") +
                       " and finite");
  };
  if (o.rv_count < 0) throw InputError("command line: --rv-count must be >= 0");
  finite(o.rv_error, "--rv-error", true);
  finite(o.rv_jitter, "--rv-jitter", false);
  finite(o.transit_error, "--transit-error", true);
  if (!std::isfinite(o.rv_offset)) throw InputError("command line: --rv-offset must be finite");
  if (o.seed < 0) throw InputError("command line: --seed must be >= 0");
  if (o.instrument.empty() || o.instrument.find_first_of(" \t[]#;=,") != std::string::npos)
    throw InputError("command line: --instrument '" + o.instrument +
                     "': a name without blanks, brackets or # ; = , (it names a config section)");
  {
    std::stringstream names(o.planets);
    for (std::string p; std::getline(names, p, ',');)
      if (p.empty()) throw InputError("command line: --transit-planets '" + o.planets + "' has an empty name");
  }

  if (!std::isfinite(o.span)) throw InputError("command line: --span must be finite");
  const ModelConfig c = load_model_config(o.config, o.overrides, ConfigUse::kModelOnly);
  // Work and output, estimated before any: integration steps at the model's step, and lines.
  {
    double min_period = 1e300, transits = 0;
    for (int p = 0; p < c.model->num_planets(); ++p) {
      const double period = c.values[c.model->planet_parameter(p, 0)];
      min_period = std::min(min_period, period);
      transits += o.span / period;
    }
    const double step = c.likelihood.time_step > 0 ? c.likelihood.time_step
                                                   : default_step_fraction(c.likelihood.integrator) * min_period;
    const double steps = o.span / step;
    if (!(steps <= o.max_steps))
      throw InputError("command line: --span " + fmt(o.span, "%g") + " d takes ~" + fmt(steps, "%.3g") +
                       " integration steps at " + fmt(step, "%g") + " d, above --max-steps " +
                       fmt(o.max_steps, "%.3g") + " (raise --max-steps to run it)");
    if (!(transits <= 1e7))
      throw InputError("command line: --span " + fmt(o.span, "%g") + " d gives ~" + fmt(transits, "%.3g") +
                       " transit times, above the limit of 1e7");
  }
  namespace fs = std::filesystem;
  if (fs::exists(o.output) && !fs::is_directory(o.output))
    throw InputError("command line: --output " + o.output + " exists and is not a folder");
  {
    std::vector<std::string> names = {"rv.txt", "truth.csv"};
    for (const auto& planet : c.model->planets()) names.push_back("transits_" + planet + ".txt");
    for (const auto& name : names)
      if (fs::exists(fs::path(o.output) / name) && !o.overwrite)
        throw InputError("command line: --output " + o.output + " has " + name + " (add --overwrite to replace)");
  }
  h5::remove_partials_on_signals();
  SimulationPlan plan;
  plan.span = o.span;
  plan.rv_count = o.rv_count;
  plan.rv_error = o.rv_error;
  plan.rv_jitter = o.rv_jitter;
  plan.rv_offset = o.rv_offset;
  plan.instrument = o.instrument;
  std::stringstream list(o.planets);
  for (std::string p; std::getline(list, p, ',');)
    if (!p.empty()) plan.transit_planets.push_back(p);
  plan.transit_error = o.transit_error / 1440.0;
  plan.seed = static_cast<std::uint64_t>(o.seed);
  const SimulatedData sim = simulate_data(c, plan);
  const PlanetaryModel& model = sim.model;
  const std::vector<double>& truth = sim.truth;

  std::filesystem::create_directories(o.output);
  if (!sim.data.rv.empty()) {
    std::string text = "# swarmfit simulate: BJD_TDB, RV (m/s), error (m/s); instrument " + o.instrument + "\n";
    for (const RvObservation& r : sim.data.rv)
      text += fmt(r.time, "%.6f") + " " + fmt(r.rv, "%.4f") + " " + fmt(r.error, "%.4f") + "\n";
    write_file(o.output + "/rv.txt", text);
  }
  for (std::size_t p = 0; p < sim.data.planets.size(); ++p) {
    std::string text = "# swarmfit simulate: epoch, BJD_TDB, error (days); planet " + sim.data.planets[p] + "\n";
    for (const TransitObservation& t : sim.data.transits)
      if (t.planet == static_cast<int>(p))
        text += std::to_string(t.epoch) + " " + fmt(t.time, "%.8f") + " " + fmt(t.error, "%.8f") + "\n";
    write_file(o.output + "/transits_" + sim.data.planets[p] + ".txt", text);
  }
  std::string header, values;
  for (int k = 0; k < model.num_parameters(); ++k) {
    header += (k ? "," : "") + model.parameters()[k].name;
    values += (k ? "," : "") + fmt(truth[k]);
  }
  write_file(o.output + "/truth.csv", header + "\n" + values + "\n");
  std::cout << "swarmfit simulate: " << sim.data.rv.size() << " RVs, " << sim.data.transits.size()
            << " transit times over " << o.span << " d (seed " << o.seed << ") in " << o.output << "/; truth in "
            << o.output << "/truth.csv\n";
  return 0;
}

}  // namespace swarmfit::app
