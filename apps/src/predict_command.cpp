// `swarmfit predict`: model RV curves and transit times (with O-C) for one or many parameter
// sets, as CSV; and `swarmfit data`: read and check the data of a configuration, and summarise.
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>

#include "commands.hpp"
#include "errors.hpp"
#include "model_config.hpp"
#include "output.hpp"
#include "swarmfit/integrators/registry.hpp"

namespace po = boost::program_options;

namespace swarmfit::app {

namespace {

struct CommandLine {
  std::string config, params, output = "predict";
  double grid_step = 0.0;
  std::vector<std::string> overrides;
  bool help = false;
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
        "RV curve spacing, days (0: the shortest period / 50)");
  po::options_description hidden;
  hidden.add_options()("override", po::value<std::vector<std::string>>(&c.overrides));
  po::options_description all;
  all.add(options).add(hidden);
  po::positional_options_description positional;
  positional.add("override", -1);
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(argc, argv).options(all).positional(positional).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    throw InputError(std::string("command line: ") + e.what());
  }
  if (vm.count("help")) {
    std::cout << (predict ? "usage: swarmfit predict --config FILE [--params FILE] [--output DIR] [key=value ...]\n"
                          : "usage: swarmfit data --config FILE\n")
              << options << "\n"
              << model_keys() << "\n"
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
  const ModelConfig c = load_model_config(cl.config, cl.overrides, true);
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
  return 0;
}

int predict_command(int argc, char** argv) {
  const CommandLine cl = parse(argc, argv, true);
  if (cl.help) return 0;
  const ModelConfig c = load_model_config(cl.config, cl.overrides);
  const PlanetaryModel& model = *c.model;
  long count = 1;
  std::vector<double> params = c.values;
  if (!cl.params.empty()) params = read_parameter_sets(cl.params, c, count);
  if (cl.grid_step < 0) throw InputError("command line: --grid-step must be >= 0");

  double min_period = 1e300;
  for (int p = 0; p < model.num_planets(); ++p)
    min_period = std::min(min_period, c.values[model.planet_parameter(p, 0)]);
  const double grid_step = cl.grid_step > 0 ? cl.grid_step : min_period / 50.0;
  const double t0 = c.data.first_time() - 0.05 * (c.data.last_time() - c.data.first_time());
  const double start = std::max(c.model->options().reference_epoch + grid_step, t0);
  const double stop = c.data.last_time() + 0.05 * (c.data.last_time() - c.data.first_time()) + grid_step;
  std::vector<double> grid;
  for (double t = start; t <= stop && grid.size() < 2000000; t += grid_step) grid.push_back(t);

  LikelihoodSettings settings = c.likelihood;
  settings.extra_time = stop - c.data.last_time();
  const LikelihoodProblem problem(c.data, model, settings, c.values);
  std::vector<double> lnl(count);
  std::vector<int> status(count);
  ModelCurves curves;
  problem.evaluate(params.data(), count, lnl.data(), status.data(), &curves);
  std::vector<double> rv_grid;
  std::vector<int> grid_status;
  problem.rv_curve(params.data(), count, grid, rv_grid, grid_status);

  std::filesystem::create_directories(cl.output);
  const int np = model.num_parameters();
  const Dataset& d = problem.data();
  const int nrv = static_cast<int>(d.rv.size());
  const auto& rows = problem.transit_rows();
  const int ntr = static_cast<int>(rows.size());
  std::vector<double> rv_rms(count, 0.0), transit_rms(count, 0.0);
  {
    AtomicFile file(cl.output + "/rv_data.csv");
    std::ofstream out(file.partial_path());
    out << "set,instrument,time,rv,error,model,offset,residual\n";
    for (long s = 0; s < count && nrv > 0; ++s) {
      // Offsets: the parameters, or (marginalised) the weighted mean residual per instrument.
      std::vector<double> offset(d.instruments.size());
      for (std::size_t j = 0; j < d.instruments.size(); ++j) {
        offset[j] = params[s * np + model.offset_parameter(static_cast<int>(j))];
        if (settings.marginalize_offsets) {
          double sw = 0, swr = 0;
          const double jitter = params[s * np + model.jitter_parameter(static_cast<int>(j))];
          for (int k = 0; k < nrv; ++k)
            if (d.rv[k].instrument == static_cast<int>(j)) {
              const double w = 1 / (d.rv[k].error * d.rv[k].error + jitter * jitter);
              sw += w;
              swr += w * (d.rv[k].rv - curves.rv[s * nrv + k]);
            }
          offset[j] = swr / sw;
        }
      }
      for (int k = 0; k < nrv; ++k) {
        const auto& o = d.rv[k];
        const double m = curves.rv[s * nrv + k] + offset[o.instrument];
        out << s << "," << d.instruments[o.instrument] << "," << fmt(o.time) << "," << fmt(o.rv) << "," << fmt(o.error)
            << "," << fmt(m) << "," << fmt(offset[o.instrument]) << "," << fmt(o.rv - m) << "\n";
        rv_rms[s] += (o.rv - m) * (o.rv - m) / nrv;
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
    for (long s = 0; s < count; ++s)
      for (std::size_t k = 0; k < grid.size(); ++k)
        out << s << "," << fmt(grid[k]) << "," << fmt(rv_grid[s * grid.size() + k]) << "\n";
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
        const auto& o = rows[r];
        const int planet = problem.transit_row_planet(r);
        const LinearEphemeris e = problem.ephemeris(planet);
        const double linear = e.t0 + e.period * o.epoch;
        const double m = curves.transits[s * ntr + r];
        out << s << "," << model.planets()[planet] << "," << o.epoch << "," << fmt(o.time) << "," << fmt(o.error) << ","
            << fmt(m) << "," << fmt((o.time - m) * 1440) << "," << fmt((o.time - linear) * 1440) << ","
            << fmt((m - linear) * 1440) << "\n";
        if (std::isfinite(m)) transit_rms[s] += (o.time - m) * (o.time - m) / ntr;
      }
    out.close();
    if (!out) throw std::runtime_error(cl.output + "/transits.csv: write failed");
    file.commit();
  }
  std::cout << "swarmfit predict: " << count << " parameter set(s), integrator " << settings.integrator << ", step "
            << problem.time_step() << " d, " << nrv << " RVs, " << ntr << " transit times\n";
  std::cout << "  set          ln L  status           RV rms (m/s)  transit rms (min)\n";
  for (long s = 0; s < std::min<long>(count, 20); ++s) {
    char line[200];
    std::snprintf(line, sizeof line, "  %3ld %13.4f  %-16s %13.4f %18.5f\n", s, lnl[s], status_name(status[s]),
                  std::sqrt(rv_rms[s]), std::sqrt(transit_rms[s]) * 1440);
    std::cout << line;
  }
  for (const auto& note : c.data.notes) std::cout << "  note: " << note << "\n";
  std::cout << "  wrote " << cl.output << "/rv_data.csv, rv_curve.csv, transits.csv\n";
  return 0;
}

}  // namespace swarmfit::app
