// `swarmfit fit`: DEMCMC (inference/demcmc.hpp) over the posterior of a planetary model given RV
// and transit-time data; each half-generation of every temperature is ONE batched likelihood
// call (one ensemble integration). The HDF5 run file is the result and the checkpoint.
// `swarmfit summary RUN.h5` and `swarmfit plot RUN.h5` read it back.
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <limits>
#include <map>
#include <memory>
#include <sstream>

#include "commands.hpp"
#include "config.hpp"
#include "errors.hpp"
#include "swarmfit/inference/run_file.hpp"
#include "swarmfit/integrators/registry.hpp"
#include "swarmfit/models/fit_summary.hpp"
#include "swarmfit/models/model_config.hpp"
#include "swarmfit/models/posterior.hpp"
#include "swarmfit/models/predictions.hpp"

namespace po = boost::program_options;

namespace swarmfit::app {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

volatile std::sig_atomic_t g_signal = 0;
extern "C" void on_signal(int signal) { g_signal = signal; }

struct FitSettings {
  int walkers = 0;
  long generations = 0, thin = 1, burn_in = -1, checkpoint_every = 0, optimize = 0, check_every = 100;
  double checkpoint_seconds = 60, init_scatter = 0.01, rhat_target = 1.01, ess_target = 0;
  std::string output, init;
  bool overwrite = false, progress = false;
  int predictive_draws = 50;
  DemcmcSettings sampler;
};

std::string origin_of(const ModelConfig& c, const std::string& key) {
  auto it = c.settings.find(key);
  return it == c.settings.end() ? std::string("default") : it->second.origin;
}

FitSettings read_fit_settings(const ModelConfig& c, int num_free) {
  const po::variables_map& vm = c.vm;
  FitSettings f;
  auto fail = [&](const std::string& key, const std::string& why) {
    throw InputError(origin_of(c, key) + ": key '" + key + "' " + why);
  };
  f.generations = vm["generations"].as<long>();
  if (f.generations < 1) fail("generations", "must be >= 1");
  f.thin = vm["thin"].as<long>();
  if (f.thin < 1) fail("thin", "must be >= 1");
  f.burn_in = vm["burn_in"].as<long>();
  if (f.burn_in >= f.generations) fail("burn_in", "must be below generations");
  const long seed = vm["seed"].as<long>();
  if (seed < 0) fail("seed", "must be >= 0");
  f.sampler.seed = static_cast<std::uint64_t>(seed);
  f.output = vm["output"].as<std::string>();
  if (f.output.empty()) fail("output", "is empty");
  f.overwrite = vm["overwrite"].as<bool>();
  f.checkpoint_every = vm["checkpoint_every"].as<long>();
  if (f.checkpoint_every < 0) fail("checkpoint_every", "must be >= 0");
  f.checkpoint_seconds = vm["checkpoint_seconds"].as<double>();
  if (!(f.checkpoint_seconds > 0)) fail("checkpoint_seconds", "must be > 0");
  f.init = vm["init"].as<std::string>();
  if (f.init != "guess" && f.init != "prior") fail("init", "expected guess or prior, got '" + f.init + "'");
  f.init_scatter = vm["init_scatter"].as<double>();
  if (!(f.init_scatter > 0)) fail("init_scatter", "must be > 0");
  f.optimize = vm["optimize"].as<long>();
  if (f.optimize < 0) fail("optimize", "must be >= 0");
  f.sampler.snooker.probability = vm["snooker"].as<double>();
  if (!(f.sampler.snooker.probability >= 0 && f.sampler.snooker.probability <= 1)) fail("snooker", "must be in [0, 1]");
  f.sampler.kde.probability = vm["kde"].as<double>();
  if (!(f.sampler.kde.probability >= 0 && f.sampler.kde.probability + f.sampler.snooker.probability <= 1))
    fail("kde", "must be >= 0 with snooker + kde <= 1");
  f.sampler.kde.components = vm["kde_components"].as<int>();
  if (f.sampler.kde.components < 2) fail("kde_components", "must be >= 2");
  f.sampler.kde.bandwidth = vm["kde_bandwidth"].as<double>();
  if (!(f.sampler.kde.bandwidth > 0)) fail("kde_bandwidth", "must be > 0");
  const int temperatures = vm["temperatures"].as<int>();
  if (temperatures < 1) fail("temperatures", "must be >= 1");
  const double t_max = vm["max_temperature"].as<double>();
  if (temperatures > 1 && !(t_max > 1)) fail("max_temperature", "must be > 1");
  f.sampler.temperatures.assign(1, 1.0);
  for (int k = 1; k < temperatures; ++k)  // geometric ladder (Earl & Deem 2005)
    f.sampler.temperatures.push_back(std::pow(t_max, static_cast<double>(k) / (temperatures - 1)));
  f.rhat_target = vm["rhat_target"].as<double>();
  if (!(f.rhat_target > 1)) fail("rhat_target", "must be > 1");
  f.ess_target = vm["ess_target"].as<double>();
  if (f.ess_target < 0) fail("ess_target", "must be >= 0");
  f.check_every = vm["check_every"].as<long>();
  if (f.check_every < 1) fail("check_every", "must be >= 1");
  f.predictive_draws = vm["predictive_draws"].as<int>();
  if (f.predictive_draws < 0) fail("predictive_draws", "must be >= 0");
  const std::string progress = vm["progress"].as<std::string>();
  if (progress != "auto" && progress != "on" && progress != "off") fail("progress", "expected auto, on or off");
  f.progress = progress == "on" || (progress == "auto" && isatty(STDERR_FILENO));
  const int needed = 2 * num_free + 2 + (2 * num_free + 2) % 2;
  const int needed_snooker = f.sampler.snooker.probability > 0 ? std::max(needed, 6) : needed;
  f.walkers = vm["walkers"].as<int>();
  // Default: 4 d, rounded up so each half fills whole SIMD chunks of 8 systems on 2 threads.
  if (f.walkers == 0) f.walkers = (std::max(needed_snooker, 4 * num_free) + 31) / 32 * 32;
  if (f.walkers % 2 != 0 || f.walkers < needed_snooker)
    fail("walkers", "must be even and at least " + std::to_string(needed_snooker) + " for " + std::to_string(num_free) +
                        " free parameters (2 d + 2), got " + std::to_string(f.walkers));
  return f;
}

// The convergence checks (R-hat and ESS of every kept draw) cost time in proportion to the chain,
// so they thin out as it grows: every check_every generations up to 32 check_every, then every
// 2 check_every up to 64 check_every, and so on (between 1/32 and 1/16 of the run between two
// checks, so a bounded share of the time). A function of the generation only, so --resume stops where
// an uninterrupted run would.
bool convergence_check_due(long generation, long check_every) {
  long interval = check_every;
  while (generation >= 32 * interval) interval *= 2;
  return generation % interval == 0;
}

double posterior_value(double lp, double ll) { return (lp > -kInf && ll > -kInf) ? lp + ll : -kInf; }

// Differential-evolution optimisation of the posterior (Storn & Price 1997, J. Glob. Optim. 11,
// 341: DE/rand/1/bin, F = 0.7, CR = 0.9), the whole population one batched call per
// generation. Returns the best point.
Eigen::VectorXd optimize(const Eigen::MatrixXd& start, const Posterior& f, long generations, std::uint64_t seed,
                         bool progress) {
  const CounterRandom random(seed);
  Eigen::MatrixXd x = start;
  const long d = x.rows(), n = x.cols();
  Eigen::VectorXd lp, ll, value(n);
  std::vector<int> status;
  f(x, lp, ll, status);
  for (long k = 0; k < n; ++k) value(k) = posterior_value(lp(k), ll(k));
  Eigen::MatrixXd trial(d, n);
  for (long g = 0; g < generations; ++g) {
    for (long i = 0; i < n; ++i) {
      long a = static_cast<long>(random.below(n - 1, RandomPurpose::kOptimize, i, g, 0));
      if (a >= i) ++a;
      long b = static_cast<long>(random.below(n - 2, RandomPurpose::kOptimize, i, g, 1));
      for (long skip : {std::min(a, i), std::max(a, i)})
        if (b >= skip) ++b;
      long c = static_cast<long>(random.below(n - 3, RandomPurpose::kOptimize, i, g, 2));
      long sorted[3] = {i, a, b};
      std::sort(sorted, sorted + 3);
      for (long skip : sorted)
        if (c >= skip) ++c;
      const long forced = static_cast<long>(random.below(d, RandomPurpose::kOptimize, i, g, 3));
      for (long p = 0; p < d; ++p) {
        const bool cross = p == forced || random.uniform(RandomPurpose::kOptimize, i, g, 4 + p) < 0.9;
        trial(p, i) = cross ? x(p, a) + 0.7 * (x(p, b) - x(p, c)) : x(p, i);
      }
    }
    f(trial, lp, ll, status);
    for (long i = 0; i < n; ++i) {
      const double v = posterior_value(lp(i), ll(i));
      if (v >= value(i)) {
        x.col(i) = trial.col(i);
        value(i) = v;
      }
    }
    if (progress && (g % 20 == 0 || g + 1 == generations))
      std::fprintf(stderr, "\r  optimise: generation %ld/%ld, best ln posterior %.4f   ", g + 1, generations,
                   value.maxCoeff());
  }
  if (progress) std::fprintf(stderr, "\n");
  long best = 0;
  value.maxCoeff(&best);
  return x.col(best);
}

// Initial walkers: the guess plus scatter, or prior draws, redrawn until every one has a finite
// posterior (at most 100 rounds).
Eigen::MatrixXd initial_walkers(const ParameterSpace& space, const Eigen::VectorXd& guess, const FitSettings& s,
                                const Posterior& f, bool from_prior, std::uint64_t stream) {
  const CounterRandom random(s.sampler.seed);
  const long d = space.num_free(), columns = static_cast<long>(s.walkers) * s.sampler.temperatures.size();
  Eigen::MatrixXd x(d, columns);
  std::vector<long> pending(columns);
  for (long k = 0; k < columns; ++k) pending[k] = k;
  std::vector<int> last_status(columns, 0);
  for (int round = 0; round < 100 && !pending.empty(); ++round) {
    Eigen::MatrixXd batch(d, static_cast<long>(pending.size()));
    for (std::size_t j = 0; j < pending.size(); ++j) {
      const std::uint64_t walker = static_cast<std::uint64_t>(pending[j]);
      const std::uint64_t g = stream * 1000 + round;
      for (long p = 0; p < d; ++p) {
        const Prior& prior = space.priors()[space.free_indices()[p]];
        if (from_prior)
          batch(p, j) = prior.sample(random.uniform(RandomPurpose::kInitial, walker, g, 2 * p),
                                     random.uniform(RandomPurpose::kInitial, walker, g, 2 * p + 1));
        else
          batch(p, j) = guess(p) + s.init_scatter * prior.standard_deviation() *
                                       random.normal(RandomPurpose::kInitial, walker, g, p);
      }
    }
    Eigen::VectorXd lp, ll;
    std::vector<int> status;
    f(batch, lp, ll, status);
    std::vector<long> still;
    for (std::size_t j = 0; j < pending.size(); ++j) {
      if (posterior_value(lp(j), ll(j)) > -kInf) {
        x.col(pending[j]) = batch.col(j);
      } else {
        still.push_back(pending[j]);
        last_status[pending[j]] = status[j];
      }
    }
    pending = still;
  }
  if (!pending.empty()) {
    std::map<std::string, int> reasons;
    for (long k : pending) ++reasons[status_name(last_status[k])];
    std::string list;
    for (const auto& [name, count] : reasons) list += (list.empty() ? "" : ", ") + name + " x" + std::to_string(count);
    throw InputError("init = " + s.init + ": " + std::to_string(pending.size()) +
                     " walkers found no starting point with a finite posterior in 100 tries (" + list + ")");
  }
  return x;
}

struct CommandLine {
  std::string config;
  bool resume = false, help = false;
  std::vector<std::string> overrides;
};

CommandLine parse_fit(int argc, char** argv) {
  po::options_description options("Options");
  CommandLine c;
  options.add_options()("help,h", "show this help")("config", po::value<std::string>(&c.config),
                                                    "configuration file (model, priors, data, fit keys)")(
      "resume", po::bool_switch(&c.resume), "continue the run in the output file (start it if there is none)");
  po::variables_map vm;
  parse_command_line(argc, argv, options, &c.overrides, vm);
  if (vm.count("help")) {
    std::cout << "usage: swarmfit fit --config FILE [--resume] [key=value ...]\n"
              << options << "\n"
              << fit_keys() << "\n"
              << model_keys() << "\n"
              << section_help();
    c.help = true;
    return c;
  }
  if (c.config.empty()) throw InputError("command line: --config FILE is required");
  return c;
}

std::string summary_path(const std::string& output) {
  const std::string stem =
      output.size() > 3 && output.substr(output.size() - 3) == ".h5" ? output.substr(0, output.size() - 3) : output;
  return stem + "_summary.csv";
}

// /data (always) and /predictive (at the end) groups of the run file.
void write_data(hid_t file, const ModelConfig& c, const Predictions& p) {
  const Dataset& d = c.data;
  h5::Handle data(H5Gcreate2(file, "data", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), "data");
  if (!d.rv.empty()) {
    h5::Handle g(H5Gcreate2(data, "rv", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), "data/rv");
    std::vector<double> t, v, e;
    std::vector<int> instrument;
    for (const auto& o : d.rv) {
      t.push_back(o.time);
      v.push_back(o.rv);
      e.push_back(o.error);
      instrument.push_back(o.instrument);
    }
    const hsize_t n = t.size();
    h5::write(g, "time", {n}, t.data());
    h5::write(g, "rv", {n}, v.data());
    h5::write(g, "error", {n}, e.data());
    h5::write(g, "instrument", {n}, instrument.data());
    h5::attribute(g, "instruments", d.instruments);
  }
  if (!p.transit_rows.empty()) {
    h5::Handle g(H5Gcreate2(data, "transits", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), "data/transits");
    std::vector<double> t, e, epoch, t0, period;
    for (const auto& o : p.transit_rows) {
      t.push_back(o.time);
      e.push_back(o.error);
      epoch.push_back(o.epoch);
    }
    const hsize_t n = t.size();
    h5::write(g, "time", {n}, t.data());
    h5::write(g, "error", {n}, e.data());
    h5::write(g, "epoch", {n}, epoch.data());
    h5::write(g, "planet", {n}, p.transit_planet.data());
    h5::attribute(g, "planets", c.model->planets());
    for (const auto& eph : p.ephemeris) {
      t0.push_back(eph.t0);
      period.push_back(eph.period);
    }
    h5::attribute(g, "ephemeris_t0", t0);
    h5::attribute(g, "ephemeris_period", period);
  }
}

void write_predictive(hid_t file, const Predictions& p, const std::vector<double>& params,
                      const std::vector<double>& log_posterior, long best, int num_parameters) {
  h5::Handle g(H5Gcreate2(file, "predictive", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), "predictive");
  const hsize_t n = p.count, np = num_parameters, ng = p.grid.size();
  h5::write(g, "parameters", {n, np}, params.data());
  h5::write(g, "status", {n}, p.status.data());
  h5::write(g, "log_posterior", {n}, log_posterior.data());
  h5::attribute(g, "best", best);
  h5::write(g, "rv_grid", {ng}, p.grid.data());
  h5::write(g, "rv_curve", {n, ng}, p.rv_curve.data());
  h5::write(g, "rv_model", {n, static_cast<hsize_t>(p.rv_model.size() / std::max<long>(p.count, 1))},
            p.rv_model.data());
  h5::write(g, "transit_model", {n, static_cast<hsize_t>(p.transit_rows.size())}, p.transit_model.data());
}

// Partial run files (OUTPUT.partial.PID) of writers that were killed: the process is gone.
void remove_stale_partials(const std::string& output) {
  const std::filesystem::path path(output);
  const std::filesystem::path folder = path.has_parent_path() ? path.parent_path() : std::filesystem::path(".");
  const std::string prefix = path.filename().string() + ".partial.";
  for (const auto& entry : std::filesystem::directory_iterator(folder)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind(prefix, 0) != 0) continue;
    const std::string pid = name.substr(prefix.size());
    if (pid.empty() || pid.find_first_not_of("0123456789") != std::string::npos) continue;
    if (kill(static_cast<pid_t>(std::stol(pid)), 0) != 0 && errno == ESRCH) std::filesystem::remove(entry.path());
  }
}

std::string format_duration(double seconds) {
  char buffer[64];
  if (seconds < 60)
    std::snprintf(buffer, sizeof buffer, "%.0fs", seconds);
  else if (seconds < 3600)
    std::snprintf(buffer, sizeof buffer, "%dm%02ds", static_cast<int>(seconds) / 60, static_cast<int>(seconds) % 60);
  else
    std::snprintf(buffer, sizeof buffer, "%dh%02dm", static_cast<int>(seconds) / 3600,
                  (static_cast<int>(seconds) % 3600) / 60);
  return buffer;
}

}  // namespace

int fit_command(int argc, char** argv) {
  const CommandLine cl = parse_fit(argc, argv);
  if (cl.help) return 0;
  // Everything is read and checked before any work or any file.
  const ModelConfig c = load_model_config(cl.config, cl.overrides);
  const ParameterSpace space = read_priors(c);
  FitSettings s = read_fit_settings(c, space.num_free());
  Eigen::VectorXd guess(space.num_free());
  space.contract(space.values().data(), guess.data());
  for (int j = 0; j < space.num_free(); ++j) {
    const int k = space.free_indices()[j];
    if (s.init == "guess" && !(space.priors()[k].log_density(guess(j)) > -kInf))
      throw InputError(c.priors->origin + ": [priors]: the configuration's value of " + space.names()[k] + " (" +
                       std::to_string(guess(j)) + ") is outside its prior " + space.priors()[k].text());
  }
  const std::filesystem::path output(s.output);
  const std::filesystem::path folder = output.has_parent_path() ? output.parent_path() : std::filesystem::path(".");
  if (!std::filesystem::is_directory(folder))
    throw InputError(origin_of(c, "output") + ": key 'output': folder '" + folder.string() + "' does not exist");
  const bool exists = std::filesystem::exists(output);
  if (exists && !cl.resume && !s.overwrite)
    throw InputError(origin_of(c, "output") + ": key 'output': " + s.output +
                     " exists (use --resume to continue it, or overwrite=true)");
  RunRecord run;
  if (cl.resume && exists) {
    try {
      run = read_run(s.output);
    } catch (const std::exception& e) {
      throw InputError(std::string("--resume: ") + e.what());
    }
    auto mismatch = [&](const std::string& what) {
      throw InputError("--resume: " + s.output + " was run with another " + what + " than " + cl.config + " gives now");
    };
    if (run.names != space.names()) mismatch("model (parameters)");
    if (run.free != space.free_indices()) mismatch("set of free parameters");
    for (std::size_t k = 0; k < run.priors.size(); ++k)
      if (run.priors[k].text() != space.priors()[k].text()) mismatch("prior of " + run.names[k]);
    if (run.settings.seed != s.sampler.seed) mismatch("seed");
    if (run.settings.temperatures != s.sampler.temperatures) mismatch("temperature ladder");
    if (run.settings.snooker.probability != s.sampler.snooker.probability) mismatch("snooker probability");
    if (run.settings.kde.probability != s.sampler.kde.probability ||
        run.settings.kde.components != s.sampler.kde.components ||
        run.settings.kde.bandwidth != s.sampler.kde.bandwidth)
      mismatch("KDE move settings");
    if (run.chain.num_walkers != s.walkers) mismatch("number of walkers");
    if (run.thin != s.thin) mismatch("thin");
    if (run.attributes["config"] != c.file.text) mismatch("configuration text");
  }

  remove_stale_partials(s.output);
  const LikelihoodProblem problem(c.data, *c.model, c.likelihood, c.values);
  const Posterior posterior(space, problem);
  run.names = space.names();
  run.units.clear();
  for (const auto& p : c.model->parameters()) run.units.push_back(p.unit);
  run.priors = space.priors();
  run.values = space.values();
  run.free = space.free_indices();
  run.settings = s.sampler;
  run.thin = s.thin;
  run.attributes["config"] = c.file.text;
  run.attributes["swarmfit_version"] = SWARMFIT_VERSION;
  unsigned h5_major = 0, h5_minor = 0, h5_release = 0;
  H5get_libversion(&h5_major, &h5_minor, &h5_release);
  run.attributes["versions"] = "hdf5 " + std::to_string(h5_major) + "." + std::to_string(h5_minor) + "." +
                               std::to_string(h5_release) + ", eigen " + std::to_string(EIGEN_WORLD_VERSION) + "." +
                               std::to_string(EIGEN_MAJOR_VERSION) + "." + std::to_string(EIGEN_MINOR_VERSION) +
                               ", compiler " + __VERSION__;
  run.attributes["integrator"] = c.likelihood.integrator;
  run.attributes["backend"] = c.likelihood.backend;
  describe_model(*c.model, run.attributes);
  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);

  std::cout << "swarmfit fit: " << space.num_free() << " free parameters, " << s.walkers << " walkers x "
            << s.sampler.temperatures.size() << " temperature(s), " << c.data.rv.size() << " RVs, "
            << c.data.transits.size() << " transit times, integrator " << c.likelihood.integrator << " step "
            << problem.time_step() << " d, backend " << c.likelihood.backend << std::endl;
  const auto start = std::chrono::steady_clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };

  std::unique_ptr<Demcmc> sampler;
  if (run.chain.num_draws() > 0 || run.state.generation > 0) {
    sampler = std::make_unique<Demcmc>(run.state, posterior, s.sampler);
    std::cout << "  resumed at generation " << run.state.generation << " (" << run.chain.num_draws() << " draws kept)"
              << std::endl;
  } else {
    if (cl.resume) std::cout << "  --resume: no " << s.output << " yet, starting" << std::endl;
    Eigen::MatrixXd x0;
    if (s.optimize > 0) {
      // Optimise from a population drawn as init says, then start the walkers around the best.
      FitSettings population = s;
      population.sampler.temperatures.assign(1, 1.0);
      const Eigen::MatrixXd p0 = initial_walkers(space, guess, population, posterior, s.init == "prior", 1);
      guess = optimize(p0, posterior, s.optimize, s.sampler.seed, s.progress);
      x0 = initial_walkers(space, guess, s, posterior, false, 2);
    } else {
      x0 = initial_walkers(space, guess, s, posterior, s.init == "prior", 0);
    }
    sampler = std::make_unique<Demcmc>(x0, posterior, s.sampler);
  }

  // The transit rows (data order of the observers) for /data, without integrating anything.
  Predictions layout;
  set_transit_layout(problem, layout);

  auto checkpoint = [&](const Predictions* predictions, const std::vector<double>* params,
                        const std::vector<double>* log_posterior, long best) {
    run.state = sampler->state();
    write_run(s.output, run, [&](hid_t file) {
      write_data(file, c, predictions ? *predictions : layout);
      h5::attribute(file, "burn_in_draws", first_kept_draw(run.chain, s.burn_in));
      if (predictions) write_predictive(file, *predictions, *params, *log_posterior, best, space.num_parameters());
    });
  };
  double last_checkpoint = elapsed(), last_progress = -1, worst_rhat = kInf, worst_ess = 0;
  const long first_generation = sampler->generation();
  bool converged = false;
  int interrupted = 0;
  long walkers_reset = 0;
  const long reset_until = s.burn_in >= 0 ? s.burn_in : s.generations / 4;
  double check_seconds = 0, checkpoint_seconds = 0, loop_start = elapsed();
  const Posterior::Time time_before = posterior.time();
  while (sampler->generation() < s.generations) {
    sampler->step();
    const long g = sampler->generation();
    if (g % s.thin == 0) run.chain.append(*sampler);
    // Outlier walkers stuck in poor regions are moved onto good ones during the burn-in (DREAM's
    // rule, chain.hpp), at the checks, deterministically (resume-safe).
    if (g % s.check_every == 0 && g <= reset_until) {
      const std::vector<int> outliers = run.chain.outliers(s.check_every / s.thin + 1);
      std::vector<int> good;
      for (int w = 0; w < s.walkers; ++w)
        if (std::find(outliers.begin(), outliers.end(), w) == outliers.end()) good.push_back(w);
      const CounterRandom random(s.sampler.seed);
      for (std::size_t j = 0; j < outliers.size() && !good.empty(); ++j)
        sampler->replace_walker(good[random.below(good.size(), RandomPurpose::kOutlier, outliers[j], g, 0)],
                                outliers[j]);
      walkers_reset += static_cast<long>(outliers.size());
    }
    if (convergence_check_due(g, s.check_every)) {
      const double check_start = elapsed();
      const long first = first_kept_draw(run.chain, s.burn_in);
      if (run.chain.num_draws() - first >= 4) {
        worst_rhat = 0;
        worst_ess = kInf;
        for (const auto& d : run.chain.diagnostics(first)) {
          worst_rhat = std::max(worst_rhat, d.rhat);
          worst_ess = std::min(worst_ess, d.ess_bulk);
        }
        converged = s.ess_target > 0 && worst_rhat < s.rhat_target && worst_ess >= s.ess_target;
      }
      check_seconds += elapsed() - check_start;
    }
    if (s.progress && (elapsed() - last_progress > 0.5 || g == s.generations)) {
      last_progress = elapsed();
      const double rate = (g - first_generation) / std::max(elapsed(), 1e-9);
      std::fprintf(stderr, "\r  generation %ld/%ld  acceptance %.3f  worst R-hat %.4f  min ESS %.0f  ETA %s   ", g,
                   s.generations, sampler->acceptance_fraction(), worst_rhat, worst_ess,
                   format_duration((s.generations - g) / std::max(rate, 1e-9)).c_str());
    }
    if (g_signal) {
      interrupted = g_signal;
      break;
    }
    if (converged) break;
    if ((s.checkpoint_every > 0 && g % s.checkpoint_every == 0) || elapsed() - last_checkpoint > s.checkpoint_seconds) {
      const double checkpoint_start = elapsed();
      checkpoint(nullptr, nullptr, nullptr, 0);
      last_checkpoint = elapsed();
      checkpoint_seconds += last_checkpoint - checkpoint_start;
    }
  }
  const double loop_seconds = elapsed() - loop_start;
  if (s.progress) std::fprintf(stderr, "\n");
  if (interrupted) {
    checkpoint(nullptr, nullptr, nullptr, 0);
    std::cout << "  interrupted (signal " << interrupted << ") at generation " << sampler->generation()
              << "; state saved in " << s.output << ": continue with --resume\n";
    return 128 + interrupted;
  }

  // Predictive draws for plots: random kept draws after the burn-in, and the best one.
  const long first = first_kept_draw(run.chain, s.burn_in);
  std::vector<double> params, log_posterior;
  long best_index = 0;
  if (run.chain.num_draws() > first) {
    const Chain& ch = run.chain;
    const CounterRandom random(s.sampler.seed);
    long best_draw = first, best_walker = 0;
    for (long t = first; t < ch.num_draws(); ++t)
      for (int w = 0; w < ch.num_walkers; ++w) {
        const std::size_t k = static_cast<std::size_t>(t) * ch.num_walkers + w,
                          b = best_draw * ch.num_walkers + best_walker;
        if (posterior_value(ch.log_prior[k], ch.log_likelihood[k]) >
            posterior_value(ch.log_prior[b], ch.log_likelihood[b])) {
          best_draw = t;
          best_walker = w;
        }
      }
    std::vector<double> full(space.num_parameters()), free(space.num_free());
    auto add = [&](long t, int w) {
      for (int p = 0; p < space.num_free(); ++p) free[p] = ch.parameter(t, w, p);
      space.expand(free.data(), full.data());
      params.insert(params.end(), full.begin(), full.end());
      const std::size_t k = static_cast<std::size_t>(t) * ch.num_walkers + w;
      log_posterior.push_back(posterior_value(ch.log_prior[k], ch.log_likelihood[k]));
    };
    const long available = (ch.num_draws() - first) * ch.num_walkers;
    for (int j = 0; j < s.predictive_draws; ++j) {
      const long pick = static_cast<long>(random.below(available, RandomPurpose::kPredictive, j, 0, 0));
      add(first + pick / ch.num_walkers, static_cast<int>(pick % ch.num_walkers));
    }
    best_index = static_cast<long>(log_posterior.size());
    add(best_draw, static_cast<int>(best_walker));
  }
  const long count = static_cast<long>(log_posterior.size());
  const Predictions predictions = count > 0 ? predict(c, params, count, 0.0) : layout;
  checkpoint(&predictions, &params, &log_posterior, best_index);

  std::cout << "  " << sampler->generation() << " generations in " << format_duration(elapsed()) << ", acceptance "
            << sampler->acceptance_fraction();
  for (int k = 0; k + 1 < sampler->num_temperatures(); ++k)
    std::cout << ", swaps " << k << "-" << k + 1 << " " << sampler->swap_fraction(k);
  if (walkers_reset > 0) std::cout << ", " << walkers_reset << " outlier walkers reset in the burn-in";
  std::cout << (converged ? ", converged" : "") << "\n";
  {  // where the sampling loop's time went
    const Posterior::Time& t = posterior.time();
    const double likelihood = t.seconds - time_before.seconds;
    std::cout << "  sampling " << std::setprecision(4) << loop_seconds << " s: likelihood calls " << likelihood << " s";
    if (t.device_ms > time_before.device_ms)
      std::cout << " (GPU kernels " << 1e-3 * (t.kernel_ms - time_before.kernel_ms) << " s, device total "
                << 1e-3 * (t.device_ms - time_before.device_ms) << " s)";
    std::cout << ", convergence checks " << check_seconds << " s, checkpoints " << checkpoint_seconds
              << " s, sampler and the rest " << loop_seconds - likelihood - check_seconds - checkpoint_seconds << " s\n"
              << std::setprecision(6);
  }
  if (run.chain.num_draws() - first >= 4) {
    const std::vector<SummaryRow> rows = summarize_fit(run, c.model.get(), first);
    std::cout << "  posterior (" << run.chain.num_draws() - first << " draws x " << run.chain.num_walkers
              << " walkers after the burn-in):\n";
    print_summary(std::cout, rows);
    write_summary_csv(summary_path(s.output), rows);
    std::cout << "  wrote " << s.output << " and " << summary_path(s.output) << "; plots: swarmfit plot " << s.output
              << "\n";
  } else {
    std::cout << "  wrote " << s.output << " (too few draws after the burn-in for a summary)\n";
  }
  return 0;
}

int summary_command(int argc, char** argv) {
  po::options_description options("Options");
  std::string path, csv;
  long burn_in = -1;
  options.add_options()("help,h", "show this help")("run", po::value<std::string>(&path), "run file (HDF5)")(
      "burn-in", po::value<long>(&burn_in)->default_value(-1), "generations to discard (-1: the first half)")(
      "csv", po::value<std::string>(&csv), "also write the table as CSV here");
  po::positional_options_description positional;
  positional.add("run", 1);
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(argc, argv).options(options).positional(positional).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    throw InputError(std::string("command line: ") + e.what());
  }
  if (vm.count("help")) {
    std::cout << "usage: swarmfit summary RUN.h5 [--burn-in G] [--csv FILE]\n" << options;
    return 0;
  }
  if (path.empty()) throw InputError("command line: the run file is required (swarmfit summary RUN.h5)");
  RunRecord run;
  try {
    run = read_run(path);
  } catch (const std::exception& e) {
    throw InputError(e.what());
  }
  const long first = first_kept_draw(run.chain, burn_in);
  const std::unique_ptr<PlanetaryModel> model = model_from_attributes(run.attributes);
  std::cout << path << ": " << run.chain.num_draws() << " draws x " << run.chain.num_walkers << " walkers, generation "
            << run.state.generation << ", seed " << run.settings.seed << "; summary of draws " << first << " to "
            << run.chain.num_draws() - 1 << "\n";
  const std::vector<SummaryRow> rows = summarize_fit(run, model.get(), first);
  print_summary(std::cout, rows);
  const std::vector<double> acceptance = run.chain.acceptance(first);
  double mean = 0, lowest = 1;
  for (double a : acceptance) {
    mean += a / acceptance.size();
    lowest = std::min(lowest, a);
  }
  std::cout << "  acceptance after the burn-in: mean " << mean << ", lowest walker " << lowest << "\n";
  if (!csv.empty()) write_summary_csv(csv, rows);
  return 0;
}

int plot_command(int argc, char** argv) {
  std::vector<std::string> args = {"python3", SWARMFIT_PYTHON_DIR "/swarmfit_plot.py"};
  for (int k = 1; k < argc; ++k) args.push_back(argv[k]);
  std::vector<char*> raw;
  for (auto& a : args) raw.push_back(a.data());
  raw.push_back(nullptr);
  execvp(raw[0], raw.data());
  throw std::runtime_error("cannot run python3 (needed by swarmfit plot)");
}

}  // namespace swarmfit::app
