// `swarmfit simulate`: synthetic RV and transit-time data from a known truth (the parameter values
// of a model configuration), by the same integration and observers as the likelihood: RVs at
// random times, every transit of the chosen planets, Gaussian noise from a seeded counter-based
// stream. For the bundled demo, recovery tests and calibration checks.
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
#include "swarmfit/inference/random.hpp"
#include "swarmfit/models/model_config.hpp"
#include "swarmfit/models/units.hpp"

namespace po = boost::program_options;

namespace swarmfit::app {

namespace {

struct Options {
  std::string config, output, instrument = "SIM", planets;
  long seed = 1;
  int rv_count = 40;
  double rv_error = 3.0, rv_offset = 0.0, rv_jitter = 0.0, span = 0.0, transit_error = 2.0;
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
      "transit-error", po::value<double>(&o.transit_error)->default_value(2.0), "transit-time error bar, minutes");
  po::variables_map vm;
  parse_command_line(argc, argv, options, &o.overrides, vm);
  if (vm.count("help")) {
    std::cout << "usage: swarmfit simulate --config TRUTH.cfg --output DIR --span DAYS [options] [key=value ...]\n"
              << options;
    return 0;
  }
  if (o.config.empty() || o.output.empty()) throw InputError("command line: --config and --output are required");
  if (!(o.span > 0)) throw InputError("command line: --span must be > 0");
  if (o.rv_count < 0 || !(o.rv_error > 0) || o.rv_jitter < 0 || !(o.transit_error > 0))
    throw InputError("command line: --rv-count >= 0, --rv-error > 0, --rv-jitter >= 0, --transit-error > 0");

  const ModelConfig c = load_model_config(o.config, o.overrides, ConfigUse::kModelOnly);
  const PlanetaryModel& truth_model = *c.model;
  const double t_ref = truth_model.options().reference_epoch;
  const CounterRandom random(static_cast<std::uint64_t>(o.seed));

  // The observing plan: RVs at uniform random times; transits at every epoch of the linear
  // ephemeris of the osculating period (the observers match model transits to these epochs).
  Dataset plan;
  if (o.rv_count > 0) {
    plan.instruments = {o.instrument};
    std::vector<double> times;
    for (int k = 0; k < o.rv_count; ++k)
      times.push_back(t_ref + o.span * random.uniform(RandomPurpose::kTest, k, 0, 0));
    std::sort(times.begin(), times.end());
    for (double t : times) plan.rv.push_back(RvObservation{t, 0.0, o.rv_error, 0, "plan"});
  }
  std::vector<std::string> chosen;
  std::stringstream list(o.planets);
  for (std::string p; std::getline(list, p, ',');)
    if (!p.empty()) chosen.push_back(p);
  if (chosen.empty()) chosen = truth_model.planets();
  for (const std::string& name : chosen) {
    int q = -1;
    for (int k = 0; k < truth_model.num_planets(); ++k)
      if (truth_model.planets()[k] == name) q = k;
    if (q < 0) throw InputError("command line: --transit-planets: no planet '" + name + "' in " + o.config);
    const double period = c.values[truth_model.planet_parameter(q, 0)];
    double tc = c.values[truth_model.planet_parameter(q, 4)];
    if (truth_model.options().phase_from_mean_anomaly)
      throw InputError(o.config + ": simulate needs phase_parameter = tc");
    while (tc < t_ref) tc += period;
    plan.planets.push_back(name);
    for (long epoch = 0; tc + epoch * period < t_ref + o.span; ++epoch)
      plan.transits.push_back(TransitObservation{static_cast<int>(plan.planets.size()) - 1, epoch, tc + epoch * period,
                                                 o.transit_error / 1440.0, "plan"});
  }
  if (plan.rv.empty() && plan.transits.empty()) throw InputError("command line: nothing to simulate");

  // The truth with the simulated instrument's offset and jitter.
  const PlanetaryModel model(truth_model.planets(), plan.instruments, truth_model.options());
  std::vector<double> truth(model.num_parameters());
  for (int k = 0; k < 1 + 7 * model.num_planets(); ++k) truth[k] = c.values[k];
  if (!plan.instruments.empty()) {
    truth[model.offset_parameter(0)] = o.rv_offset;
    truth[model.jitter_parameter(0)] = o.rv_jitter;
  }
  const LikelihoodProblem problem(plan, model, c.likelihood, truth);
  double lnl = 0;
  int status = 0;
  ModelCurves curves;
  problem.evaluate(truth.data(), 1, &lnl, &status, &curves);
  if (status != 0)
    throw InputError(o.config + ": the truth cannot be observed as planned (status " + model_status_name(status) + ")");

  std::filesystem::create_directories(o.output);
  const double jitter = o.rv_jitter;
  if (!plan.rv.empty()) {
    std::string text = "# swarmfit simulate: BJD_TDB, RV (m/s), error (m/s); instrument " + o.instrument + "\n";
    for (std::size_t k = 0; k < plan.rv.size(); ++k) {
      const double noise =
          std::sqrt(o.rv_error * o.rv_error + jitter * jitter) * random.normal(RandomPurpose::kTest, k, 1, 0);
      text += fmt(plan.rv[k].time, "%.6f") + " " + fmt(curves.rv[k] + o.rv_offset + noise, "%.4f") + " " +
              fmt(o.rv_error, "%.4f") + "\n";
    }
    write_file(o.output + "/rv.txt", text);
  }
  const std::vector<TransitObservation>& rows = problem.transit_rows();
  for (std::size_t p = 0; p < plan.planets.size(); ++p) {
    std::string text = "# swarmfit simulate: epoch, BJD_TDB, error (days); planet " + plan.planets[p] + "\n";
    for (std::size_t r = 0; r < rows.size(); ++r) {
      if (model.planets()[problem.transit_row_planet(static_cast<int>(r))] != plan.planets[p]) continue;
      const double noise = o.transit_error / 1440.0 * random.normal(RandomPurpose::kTest, r, 2, 0);
      text += std::to_string(rows[r].epoch) + " " + fmt(curves.transits[r] + noise, "%.8f") + " " +
              fmt(o.transit_error / 1440.0, "%.8f") + "\n";
    }
    write_file(o.output + "/transits_" + plan.planets[p] + ".txt", text);
  }
  std::string header, values;
  for (int k = 0; k < model.num_parameters(); ++k) {
    header += (k ? "," : "") + model.parameters()[k].name;
    values += (k ? "," : "") + fmt(truth[k]);
  }
  write_file(o.output + "/truth.csv", header + "\n" + values + "\n");
  std::cout << "swarmfit simulate: " << plan.rv.size() << " RVs, " << rows.size() << " transit times over " << o.span
            << " d (seed " << o.seed << ") in " << o.output << "/; truth in " << o.output << "/truth.csv\n";
  return 0;
}

}  // namespace swarmfit::app
