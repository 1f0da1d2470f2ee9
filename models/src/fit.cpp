#include "swarmfit/models/fit.hpp"

#include <hdf5.h>
#include <signal.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <limits>
#include <map>

#include "swarmfit/inference/initial_walkers.hpp"
#include "swarmfit/inference/optimizer.hpp"
#include "swarmfit/inference/run_loop.hpp"
#include "swarmfit/models/fit_summary.hpp"
#include "swarmfit/models/posterior.hpp"
#include "swarmfit/models/predictions.hpp"
#include "swarmfit/observations/input_error.hpp"

namespace po = boost::program_options;

namespace swarmfit {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

std::string origin_of(const ModelConfig& c, const std::string& key) {
  auto it = c.settings.find(key);
  return it == c.settings.end() ? std::string("default") : it->second.origin;
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

// ephemeris = mean: the map's anchor in the run file (group /ephemeris), so that a resumed run
// samples the same coordinates.
void write_ephemeris(hid_t file, const EphemerisMap& e) {
  h5::Handle g(H5Gcreate2(file, "ephemeris", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), "ephemeris");
  const hsize_t m = e.planets.size(), np = e.anchor.size();
  h5::write(g, "planets", {m}, e.planets.data());
  h5::write(g, "period_index", {m}, e.period_index.data());
  h5::write(g, "tc_index", {m}, e.tc_index.data());
  h5::write(g, "reference_epoch_number", {m}, e.reference_epoch_number.data());
  h5::write(g, "anchor", {np}, e.anchor.data());
  h5::write(g, "anchor_osculating", {2 * m}, e.anchor_osc.data());
  const Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> gain = e.gain;
  h5::write(g, "gain", {2 * m, np}, gain.data());
}

std::shared_ptr<const EphemerisMap> read_ephemeris(const std::string& path, const ModelConfig& c) {
  const int num_parameters = c.model->num_parameters();
  try {
    h5::Handle file(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), path);
    if (!h5::exists(file, "ephemeris"))
      throw std::runtime_error("no /ephemeris group (the run was not ephemeris = mean)");
    h5::Handle g(H5Gopen2(file, "ephemeris", H5P_DEFAULT), "ephemeris");
    // Every array's length checked before its read allocates it (a damaged file may declare any).
    for (const char* name :
         {"planets", "period_index", "tc_index", "reference_epoch_number", "anchor", "anchor_osculating"}) {
      const std::vector<hsize_t> d = h5::dataset_dims(g, name);
      if (d.size() != 1 || d[0] > 2 * static_cast<hsize_t>(num_parameters))
        throw std::runtime_error(std::string("ephemeris/") + name + " is not a list of at most 2 x parameters values");
    }
    auto e = std::make_shared<EphemerisMap>();
    e->planets = h5::read_ints(g, "planets");
    e->period_index = h5::read_ints(g, "period_index");
    e->tc_index = h5::read_ints(g, "tc_index");
    e->reference_epoch_number = h5::read_longs(g, "reference_epoch_number");
    e->anchor = h5::read_doubles(g, "anchor");
    e->anchor_osc = h5::read_doubles(g, "anchor_osculating");
    std::vector<hsize_t> dims = h5::dataset_dims(g, "gain");  // checked before the read allocates
    if (dims.size() != 2 || dims[0] != 2 * e->planets.size() || dims[1] != static_cast<hsize_t>(num_parameters))
      throw std::runtime_error("ephemeris/gain is not [2 x planets][parameters]");
    const std::vector<double> gain = h5::read_doubles(g, "gain", &dims);
    e->gain = Eigen::Map<const Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>>(
        gain.data(), static_cast<long>(dims[0]), static_cast<long>(dims[1]));
    e->check(num_parameters);
    for (long n : e->reference_epoch_number)
      if (std::labs(n) > 1000000000L) throw std::runtime_error("ephemeris/reference_epoch_number out of range");
    // Checked against this model and data (planets, parameter indices, two epochs each) before
    // any work: a damaged map is refused here, not after the resume has started.
    LikelihoodProblem probe(c.data, *c.model, c.likelihood, c.values);
    probe.attach_ephemeris(*e);
    return e;
  } catch (const std::exception& e) {
    throw InputError("--resume: " + path + ": " + e.what());
  }
}

// A digest of the data as read (FNV-1a over every time, value and error): a run resumed on data
// that changed since it was written would mix two posteriors.
std::string data_digest(const Dataset& d) {
  std::uint64_t h = 1469598103934665603ull;
  auto mix = [&h](double v) {
    unsigned char bytes[sizeof v];
    std::memcpy(bytes, &v, sizeof v);
    for (unsigned char b : bytes) h = (h ^ b) * 1099511628211ull;
  };
  for (const auto& o : d.rv) {
    mix(o.time);
    mix(o.rv);
    mix(o.error);
    mix(o.instrument);
  }
  for (const auto& o : d.transits) {
    mix(o.time);
    mix(o.error);
    mix(static_cast<double>(o.epoch));
    mix(o.planet);
  }
  char text[20];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(h));
  return text;
}

// The run file to resume, checked against what the configuration gives now.
RunRecord read_run_to_resume(const ModelConfig& c, const ParameterSpace& space, const FitSettings& s) {
  RunRecord run;
  try {
    run = read_run(s.output);
  } catch (const std::exception& e) {
    throw InputError(std::string("--resume: ") + e.what());
  }
  auto mismatch = [&](const std::string& what) {
    throw InputError("--resume: " + s.output + " was run with another " + what + " than " + c.path + " gives now");
  };
  if (run.names != space.names()) mismatch("model (parameters)");
  if (run.free != space.free_indices()) mismatch("set of free parameters");
  for (std::size_t k = 0; k < run.priors.size(); ++k)
    if (run.priors[k].text() != space.priors()[k].text()) mismatch("prior of " + run.names[k]);
  const DemcmcSettings& was = run.settings;
  if (was.seed != s.sampler.seed) mismatch("seed");
  if (was.temperatures != s.sampler.temperatures) mismatch("temperature ladder");
  if (was.snooker.probability != s.sampler.snooker.probability) mismatch("snooker probability");
  if (was.differential_evolution.gamma_scale != s.sampler.differential_evolution.gamma_scale) mismatch("de_gamma");
  if (was.kde.probability != s.sampler.kde.probability || was.kde.components != s.sampler.kde.components ||
      was.kde.bandwidth != s.sampler.kde.bandwidth)
    mismatch("KDE move settings");
  if (was.gradient.probability != s.sampler.gradient.probability || was.gradient.steps != s.sampler.gradient.steps ||
      was.gradient.step_size != s.sampler.gradient.step_size || was.gradient.whole != s.sampler.gradient.whole ||
      was.gradient.surrogate != s.sampler.gradient.surrogate)
    mismatch("gradient move settings");
  if (run.chain.num_walkers != s.walkers) mismatch("number of walkers");
  if (run.thin != s.thin) mismatch("thin");
  const auto ephemeris = run.attributes.find("ephemeris");
  if ((ephemeris != run.attributes.end() && ephemeris->second == "mean") != s.mean_ephemeris) mismatch("ephemeris");
  const auto config = run.attributes.find("config");
  if (config == run.attributes.end() || config->second != c.file.text) mismatch("configuration text");
  const auto digest = run.attributes.find("data_digest");
  if (digest != run.attributes.end() && digest->second != data_digest(c.data)) mismatch("data (a data file changed)");
  return run;
}

// The predictive draws for plots: random kept draws after the burn-in, then the best one
// (columns of every model parameter, and their log posteriors).
void predictive_draws(const Chain& ch, const ParameterSpace& space, long first, int count, std::uint64_t seed,
                      std::vector<double>& params, std::vector<double>& log_posterior, long& best_index) {
  if (ch.num_draws() <= first) return;
  const CounterRandom random(seed);
  long best_draw = first, best_walker = 0;
  for (long t = first; t < ch.num_draws(); ++t)
    for (int w = 0; w < ch.num_walkers; ++w) {
      const std::size_t k = static_cast<std::size_t>(t) * ch.num_walkers + w,
                        b = best_draw * ch.num_walkers + best_walker;
      if (log_posterior_of(ch.log_prior[k], ch.log_likelihood[k]) >
          log_posterior_of(ch.log_prior[b], ch.log_likelihood[b])) {
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
    log_posterior.push_back(log_posterior_of(ch.log_prior[k], ch.log_likelihood[k]));
  };
  const long available = (ch.num_draws() - first) * ch.num_walkers;
  for (int j = 0; j < count; ++j) {
    const long pick = static_cast<long>(random.below(available, RandomPurpose::kPredictive, j, 0, 0));
    add(first + pick / ch.num_walkers, static_cast<int>(pick % ch.num_walkers));
  }
  best_index = static_cast<long>(log_posterior.size());
  add(best_draw, static_cast<int>(best_walker));
}

}  // namespace

FitSettings read_fit_settings(const ModelConfig& c) {
  const int num_free = read_priors(c).num_free();
  const po::variables_map& vm = c.vm;
  FitSettings f;
  auto fail = [&](const std::string& key, const std::string& why) {
    throw InputError(origin_of(c, key) + ": key '" + key + "' " + why);
  };
  f.generations = vm["generations"].as<long>();
  if (f.generations < 1) fail("generations", "must be >= 1");
  f.thin = vm["thin"].as<long>();
  if (f.thin < 1) fail("thin", "must be >= 1");
  if (f.thin > f.generations)
    fail("thin", "must be at most generations (" + std::to_string(f.generations) + "): no draw would be kept");
  f.burn_in = vm["burn_in"].as<long>();
  if (f.burn_in < -1) fail("burn_in", "must be -1 (automatic: the first half) or >= 0");
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
  if (!(f.init_scatter > 0) || !std::isfinite(f.init_scatter)) fail("init_scatter", "must be > 0 and finite");
  f.optimize = vm["optimize"].as<long>();
  if (f.optimize < 0) fail("optimize", "must be >= 0");
  f.least_squares = vm["least_squares"].as<long>();
  if (f.least_squares < 0) fail("least_squares", "must be >= 0");
  f.laplace_scale = vm["laplace_scale"].as<double>();
  if (!(f.laplace_scale > 0) || !(f.laplace_scale <= 10)) fail("laplace_scale", "must be > 0 and <= 10");
  if (f.laplace_scale != 1 && f.least_squares == 0)
    fail("laplace_scale", "needs least_squares > 0 (it widens the least-squares start's draws)");
  const std::string ephemeris = vm["ephemeris"].as<std::string>();
  if (ephemeris != "osculating" && ephemeris != "mean")
    fail("ephemeris", "expected osculating or mean, got '" + ephemeris + "'");
  f.mean_ephemeris = ephemeris == "mean";
  if (f.mean_ephemeris && f.least_squares == 0)
    fail("ephemeris", "mean needs least_squares > 0 (the coordinates are anchored at its optimum)");
  if (f.mean_ephemeris && c.stability.active())
    fail("ephemeris", "mean is not yet combined with a stability constraint (stability = none)");
  if (f.mean_ephemeris && c.data.transits.empty()) fail("ephemeris", "mean needs transit times");
  f.sampler.differential_evolution.gamma_scale = vm["de_gamma"].as<double>();
  if (!(f.sampler.differential_evolution.gamma_scale > 0) || !(f.sampler.differential_evolution.gamma_scale <= 10))
    fail("de_gamma", "must be > 0 and <= 10");
  f.sampler.snooker.probability = vm["snooker"].as<double>();
  if (!(f.sampler.snooker.probability >= 0 && f.sampler.snooker.probability <= 1)) fail("snooker", "must be in [0, 1]");
  f.sampler.kde.probability = vm["kde"].as<double>();
  if (!(f.sampler.kde.probability >= 0 && f.sampler.kde.probability + f.sampler.snooker.probability <= 1))
    fail("kde", "must be >= 0 with snooker + kde <= 1");
  f.sampler.kde.components = vm["kde_components"].as<int>();
  if (f.sampler.kde.components < 1) fail("kde_components", "must be >= 1");
  f.sampler.kde.bandwidth = vm["kde_bandwidth"].as<double>();
  if (!(f.sampler.kde.bandwidth > 0) || !std::isfinite(f.sampler.kde.bandwidth))
    fail("kde_bandwidth", "must be > 0 and finite");
  f.sampler.gradient.probability = vm["gradient"].as<double>();
  if (!(f.sampler.gradient.probability >= 0 && f.sampler.gradient.probability <= 1))
    fail("gradient", "must be in [0, 1]");
  f.sampler.gradient.steps = vm["gradient_steps"].as<int>();
  if (f.sampler.gradient.steps < 0 || f.sampler.gradient.steps > 1000)
    fail("gradient_steps", "must be in [0, 1000] (0: the trajectory length adapted)");
  f.sampler.gradient.step_size = vm["gradient_step"].as<double>();
  if (!(f.sampler.gradient.step_size >= 0) || !std::isfinite(f.sampler.gradient.step_size))
    fail("gradient_step", "must be >= 0 and finite (0: automatic)");
  const std::string population = vm["gradient_population"].as<std::string>();
  if (population != "halves" && population != "whole") fail("gradient_population", "must be halves or whole");
  f.sampler.gradient.whole = population == "whole";
  const std::string force = vm["gradient_force"].as<std::string>();
  if (force != "differences" && force != "surrogate") fail("gradient_force", "must be differences or surrogate");
  f.sampler.gradient.surrogate = force == "surrogate";
  if (f.sampler.gradient.surrogate && (!f.sampler.gradient.whole || f.sampler.gradient.steps < 1))
    fail("gradient_force", "surrogate needs gradient_population = whole and gradient_steps >= 1");
  if (f.sampler.gradient.surrogate && (f.burn_in == 0 || (f.burn_in < 0 && f.generations < 4)))
    fail("gradient_force", "surrogate needs a burn-in (burn_in >= 1) to build its surrogate in");
  const int temperatures = vm["temperatures"].as<int>();
  if (temperatures < 1) fail("temperatures", "must be >= 1");
  const double t_max = vm["max_temperature"].as<double>();
  if (!(t_max >= 1) || !std::isfinite(t_max) || (temperatures > 1 && !(t_max > 1)))
    fail("max_temperature", "must be finite and > 1 (>= 1 with one temperature)");
  f.sampler.temperatures.assign(1, 1.0);
  for (int k = 1; k < temperatures; ++k)  // geometric ladder (Earl & Deem 2005)
    f.sampler.temperatures.push_back(std::pow(t_max, static_cast<double>(k) / (temperatures - 1)));
  f.rhat_target = vm["rhat_target"].as<double>();
  if (!(f.rhat_target > 1)) fail("rhat_target", "must be > 1");
  f.ess_target = vm["ess_target"].as<double>();
  if (!(f.ess_target >= 0)) fail("ess_target", "must be >= 0");
  f.check_every = vm["check_every"].as<long>();
  if (f.check_every < 1) fail("check_every", "must be >= 1");
  f.predictive_draws = vm["predictive_draws"].as<int>();
  if (f.predictive_draws < 0) fail("predictive_draws", "must be >= 0");
  f.progress = vm["progress"].as<std::string>();
  if (f.progress != "auto" && f.progress != "on" && f.progress != "off") fail("progress", "expected auto, on or off");
  const int needed = 2 * num_free + 2 + (2 * num_free + 2) % 2;
  const int needed_snooker = f.sampler.snooker.probability > 0 ? std::max(needed, 6) : needed;
  f.max_run_file_gb = vm["max_run_file_gb"].as<double>();
  if (!(f.max_run_file_gb > 0)) fail("max_run_file_gb", "must be > 0");
  f.walkers = vm["walkers"].as<int>();
  // Default: 4 d, rounded up so each half fills whole SIMD chunks of 8 systems on 2 threads.
  if (f.walkers == 0) f.walkers = (std::max(needed_snooker, 4 * num_free) + 31) / 32 * 32;
  if (f.walkers % 2 != 0 || f.walkers < needed_snooker)
    fail("walkers", "must be even and at least " + std::to_string(needed_snooker) + " for " + std::to_string(num_free) +
                        " free parameters (2 d + 2), got " + std::to_string(f.walkers));
  // The run file's size, estimated before any work: the chain (kept draws x walkers x (free
  // parameters + 4 columns)) and the predictive draws' model values at the data and on the RV
  // curve's grid (predict(): the shortest period / 50, at most 2e6 points).
  {
    double min_period = 1e300;
    for (int p = 0; p < c.model->num_planets(); ++p)
      min_period = std::min(min_period, c.values[c.model->planet_parameter(p, 0)]);
    const double span = c.data.rv.empty() && c.data.transits.empty() ? 0 : c.data.last_time() - c.data.first_time();
    const double grid = std::min(2e6, 1.1 * span / (min_period / 50.0) + 2);
    const double temperatures = static_cast<double>(f.sampler.temperatures.size());
    const double chain = std::ceil(static_cast<double>(f.generations) / f.thin) * f.walkers * (num_free + 4) * 8.0;
    const double state = f.walkers * temperatures * (num_free + 4) * 8.0;
    const double data = (c.data.rv.size() + c.data.transits.size()) * 64.0;
    const double predictive =
        (f.predictive_draws + 1.0) * (c.data.rv.size() + c.data.transits.size() + grid + num_free) * 8.0;
    // With a stopping rule (ess_target > 0) generations is only a cap and the chain's length
    // unknown: its size is not held against the limit (the predictive draws' always are).
    const double counted_chain = f.ess_target > 0 ? 0.0 : chain;
    const double total = counted_chain + state + data + predictive;
    if (total > f.max_run_file_gb * 1e9) {
      char why[240];
      std::snprintf(why, sizeof why,
                    "the run file would take ~%.3g GB (chain %.3g GB, predictive draws %.3g GB), above "
                    "max_run_file_gb = %g: ",
                    total / 1e9, chain / 1e9, predictive / 1e9, f.max_run_file_gb);
      if (predictive > chain) fail("predictive_draws", std::string(why) + "lower predictive_draws");
      fail("generations", std::string(why) + "raise thin or lower generations");
    }
  }
  return f;
}

std::string summary_path(const std::string& output) {
  const std::string stem =
      output.size() > 3 && output.substr(output.size() - 3) == ".h5" ? output.substr(0, output.size() - 3) : output;
  return stem + "_summary.csv";
}

FitResult run_fit(const ModelConfig& c, const FitSettings& s, const FitCallbacks& callbacks) {
  // Everything is checked before any work or any file: here what read_fit_settings() checks as it
  // reads the keys, for settings made in code.
  const ParameterSpace space = read_priors(c);
  if (s.generations < 1 || s.thin < 1 || s.check_every < 1 || s.burn_in >= s.generations || s.output.empty() ||
      (s.init != "guess" && s.init != "prior"))
    throw InputError(
        "fit settings: generations, thin and check_every must be >= 1, burn_in below generations, "
        "output not empty and init guess or prior");
  try {
    Demcmc::check_settings(s.sampler, space.num_free(), s.walkers);
  } catch (const std::invalid_argument& e) {
    throw InputError(std::string("fit settings: ") + e.what());
  }
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
  if (exists && !s.resume && !s.overwrite)
    throw InputError(origin_of(c, "output") + ": key 'output': " + s.output +
                     " exists (use --resume to continue it, or overwrite=true)");
  FitResult result;
  RunRecord& run = result.run;
  if (s.resume && exists) run = read_run_to_resume(c, space, s);
  // ephemeris = mean: a resumed run's map, read and checked before any work.
  std::shared_ptr<const EphemerisMap> ephemeris;
  if (s.mean_ephemeris && (run.chain.num_draws() > 0 || run.state.generation > 0))
    ephemeris = read_ephemeris(s.output, c);

  // A run killed while it wrote its run file or its summary leaves NAME.partial.PID behind.
  h5::remove_stale_partials(s.output);
  h5::remove_stale_partials(summary_path(s.output));
  const LikelihoodProblem problem(c.data, *c.model, c.likelihood, c.values);
  // The constraint polls should_stop between its calls, so that a signal during a long stability
  // pass is honoured within one call (Interrupted: the sampler keeps its last whole generation); the start phase's
  // optimiser screens at a horizon capped at kStartHorizonOrbits (stability.hpp).
  StabilityConstraint stability = c.stability, start_stability = c.stability;
  stability.should_stop = start_stability.should_stop = callbacks.should_stop;
  start_stability.options.horizon_orbits = std::min(stability.options.horizon_orbits, kStartHorizonOrbits);
  const Posterior posterior(space, problem, &stability, &s.sharing);
  const Posterior start_posterior(space, problem, &start_stability, &s.sharing);
  // gradient_force = surrogate: a resumed run's surrogates expand the model's residual rows (the
  // sampler checks it again; here before any work).
  for (const QuadraticSurrogate& q : run.state.gradient_surrogate) {
    const long rows = static_cast<long>(posterior.least_squares().row_nu.size());
    if (!q.empty() && q.residuals.size() != rows)
      throw InputError("--resume: " + s.output + ": the saved gradient surrogate has " +
                       std::to_string(q.residuals.size()) + " residual rows, the model " + std::to_string(rows));
  }
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
  run.attributes["integration_check"] = c.step_check.describe();
  run.attributes["data_digest"] = data_digest(c.data);
  {
    // What the command line changed (the config attribute is the file's text, as resume compares).
    std::string changed;
    for (const auto& [key, setting] : c.settings)
      if (setting.origin == "command line") changed += key + " = " + setting.value + "\n";
    for (const ConfigSection& section : c.file.sections)
      for (const ConfigEntry& e : section.entries)
        if (e.origin.rfind("command line", 0) == 0)
          changed += "[" + section.type + " " + section.name + "] " + e.key + " = " + e.value + "\n";
    run.attributes["command_line_settings"] = changed;
  }
  if (s.mean_ephemeris) run.attributes["ephemeris"] = "mean";
  run.attributes["integrator"] = c.likelihood.integrator;
  run.attributes["backend"] = c.likelihood.backend;
  describe_model(*c.model, run.attributes);

  const bool resumed = run.chain.num_draws() > 0 || run.state.generation > 0;
  if (callbacks.started) {
    FitStart start;
    start.free_parameters = space.num_free();
    start.walkers = s.walkers;
    start.temperatures = static_cast<int>(s.sampler.temperatures.size());
    start.rv_points = static_cast<long>(c.data.rv.size());
    start.transit_times = static_cast<long>(c.data.transits.size());
    start.integrator = c.likelihood.integrator;
    start.backend = c.likelihood.backend;
    start.time_step = problem.time_step();
    start.step_check = c.step_check;
    start.resumed = resumed;
    start.generation = run.state.generation;
    start.draws = run.chain.num_draws();
    callbacks.started(start);
  }
  const auto started = std::chrono::steady_clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count(); };

  // The stability constraint, if any, by delayed acceptance: integrated for the proposals the
  // likelihood alone would accept (the same chain, at a fraction of the cost; demcmc.hpp).
  BatchedScreen screen, start_screen;
  if (posterior.has_stability()) {
    screen = [&posterior](const Eigen::MatrixXd& x, const std::vector<char>& candidates, Eigen::VectorXd& ll,
                          std::vector<int>& status) { posterior.screen(x, candidates, ll, status); };
    start_screen = [&start_posterior](const Eigen::MatrixXd& x, const std::vector<char>& candidates,
                                      Eigen::VectorXd& ll,
                                      std::vector<int>& status) { start_posterior.screen(x, candidates, ll, status); };
  }
  const BatchedLogDensity start_density(start_posterior);
  BatchedLogDensity density =
      posterior.has_stability() ? BatchedLogDensity(posterior.without_stability()) : BatchedLogDensity(posterior);
  // ephemeris = mean: the sampler's problem and posterior in mean-ephemeris coordinates (the start's
  // optimiser works in the osculating ones; no stability constraint: read_fit_settings).
  std::unique_ptr<LikelihoodProblem> mapped_problem;
  std::unique_ptr<Posterior> mapped_posterior;
  auto map_coordinates = [&] {
    LikelihoodSettings settings = c.likelihood;
    settings.time_step = problem.time_step();
    settings.ephemeris = ephemeris;
    mapped_problem = std::make_unique<LikelihoodProblem>(c.data, *c.model, settings, c.values);
    mapped_posterior = std::make_unique<Posterior>(space, *mapped_problem, nullptr, &s.sharing);
    density = BatchedLogDensity(*mapped_posterior);
  };
  if (ephemeris) map_coordinates();
  // The gradient move's step adapts in the burn-in (the given one, or the outlier resets' first
  // quarter of the run), as the DEMCMC settings of this sitting; not part of the run's identity.
  DemcmcSettings sampler_settings = s.sampler;
  sampler_settings.gradient.adapt_until = s.burn_in >= 0 ? s.burn_in : s.generations / 4;
  // Log-uniform (scale) parameters are moved in ln x (demcmc.hpp, log_coordinates): a function of
  // the priors, which a resumed run shares.
  sampler_settings.log_coordinates = space.log_coordinates();
  std::unique_ptr<Demcmc> sampler;
  if (resumed) {
    sampler = std::make_unique<Demcmc>(run.state, density, sampler_settings, screen);
  } else {
    StartSettings start;
    start.walkers = s.walkers;
    start.temperatures = static_cast<long>(s.sampler.temperatures.size());
    start.from_prior = s.init == "prior";
    start.scatter = s.init_scatter;
    start.optimize = s.optimize;
    start.least_squares = s.least_squares;
    start.laplace_scale = s.laplace_scale;
    start.seed = s.sampler.seed;
    const LeastSquaresProblem least_squares = posterior.least_squares();
    // A signal in the start phase stops its optimisers at their next progress report (at most every
    // 0.5 s, or every generation: a slow target's optimiser may run for an hour). Not under MPI,
    // whose should_stop is collective and the reports' timing each rank's own: there the start
    // phase runs to its end.
    ProgressCallback start_progress = callbacks.progress;
    if (s.sharing.size <= 1 && callbacks.should_stop)
      start_progress = [&callbacks](const RunProgress& report) {
        if (callbacks.should_stop()) throw Interrupted("interrupted in the start phase");
        if (callbacks.progress) callbacks.progress(report);
      };
    Eigen::MatrixXd x0;
    try {
      x0 = starting_walkers(space, guess, start, posterior, start_progress, 0.5, &density, start_screen, &start_density,
                            &least_squares, &result.least_squares);
      result.least_squares_ran = s.least_squares > 0;
      if (result.least_squares_ran) {
        char text[200];
        std::snprintf(text, sizeof text, "%s after %ld steps (%ld likelihoods), ln posterior %.6g",
                      result.least_squares.stopped.c_str(), result.least_squares.iterations,
                      result.least_squares.evaluations, result.least_squares.log_posterior);
        run.attributes["least_squares"] = text;
      }
    } catch (const Interrupted&) {
      result.interrupted = true;  // nothing written: a run started again gives the same chain
      result.state_saved = false;
      result.timing.total = elapsed();
      return result;
    } catch (const NoFiniteStart& e) {
      std::map<std::string, int> reasons;
      for (int status : e.last_status) ++reasons[model_status_name(status)];
      std::string list;
      for (const auto& [name, count] : reasons)
        list += (list.empty() ? "" : ", ") + name + " x" + std::to_string(count);
      throw InputError("init = " + s.init + ": " + e.what() + " (" + list + ")");
    }
    if (s.mean_ephemeris) {
      // Anchored at the least-squares optimum, dF/dx by central differences of 1/20 of its
      // Laplace standard deviations; the walkers moved to their own mean ephemeris F(x).
      const int np = space.num_parameters(), d = space.num_free();
      std::vector<double> anchor(np), step(d);
      space.expand(result.least_squares.best.data(), anchor.data());
      for (int j = 0; j < d; ++j) {
        const double sd = std::sqrt(result.least_squares.covariance(j, j));
        step[j] =
            std::isfinite(sd) && sd > 0 ? 0.05 * sd : 1e-6 * std::max(1.0, std::abs(anchor[space.free_indices()[j]]));
      }
      // On the CPU backend (bitwise the same on every process and machine): every MPI rank
      // computes the same map and starting walkers without exchanging them.
      LikelihoodSettings cpu = c.likelihood;
      cpu.backend = "cpu";
      cpu.packer = nullptr;
      cpu.time_step = problem.time_step();
      const LikelihoodProblem cpu_problem(c.data, *c.model, cpu, c.values);
      ephemeris = anchor_ephemeris(cpu_problem, space.free_indices(), c.values, anchor, step);
      std::vector<double> full(static_cast<std::size_t>(x0.cols()) * np);
      for (long k = 0; k < x0.cols(); ++k) space.expand(x0.col(k).data(), full.data() + k * np);
      std::vector<int> status;  // a walker whose integration fails keeps its values (its density decides)
      to_mean_ephemeris(cpu_problem, *ephemeris, full.data(), x0.cols(), status);
      for (long k = 0; k < x0.cols(); ++k)
        for (int j = 0; j < d; ++j) x0(j, k) = full[k * np + space.free_indices()[j]];
      map_coordinates();
    }
    sampler = std::make_unique<Demcmc>(x0, density, sampler_settings, screen);
    result.timing.start = elapsed();
  }
  if (s.sampler.gradient.surrogate) {  // the residuals of the coordinates sampled (the map's, with one)
    const LeastSquaresProblem residuals = (mapped_posterior ? *mapped_posterior : posterior).least_squares();
    sampler->use_residuals({residuals.residuals, residuals.row_nu, residuals.likelihood_rows});
  }

  // The transit rows (data order of the observers) for /data, without integrating anything.
  Predictions layout;
  set_transit_layout(problem, layout);
  auto write = [&](const Predictions* predictions, const std::vector<double>* params,
                   const std::vector<double>* log_posterior, long best) {
    run.state = sampler->state();
    if (s.sharing.rank != 0) return;  // one writer: the processes hold the same run
    write_run(s.output, run, [&](hid_t file) {
      write_data(file, c, predictions ? *predictions : layout);
      h5::attribute(file, "burn_in_draws", first_kept_draw(run.chain, s.burn_in));
      if (predictions) write_predictive(file, *predictions, *params, *log_posterior, best, space.num_parameters());
      if (ephemeris) write_ephemeris(file, *ephemeris);
    });
  };

  RunLoopSettings loop;
  loop.generations = s.generations;
  loop.thin = s.thin;
  loop.burn_in = s.burn_in;
  loop.check_every = s.check_every;
  loop.rhat_target = s.rhat_target;
  loop.ess_target = s.ess_target;
  loop.checkpoint_every = s.checkpoint_every;
  loop.checkpoint_seconds = s.checkpoint_seconds;
  RunLoopCallbacks loop_callbacks;
  loop_callbacks.checkpoint = [&](const Demcmc&, const Chain&) { write(nullptr, nullptr, nullptr, 0); };
  loop_callbacks.progress = callbacks.progress;
  loop_callbacks.should_stop = callbacks.should_stop;
  const Posterior& sampled = mapped_posterior ? *mapped_posterior : posterior;
  const Posterior::Time before = sampled.time();
  const RunLoopResult done = run_loop(*sampler, run.chain, loop, loop_callbacks);
  const Posterior::Time& after = sampled.time();
  result.interrupted = done.interrupted;
  result.converged = done.converged;
  result.walkers_reset = done.walkers_reset;
  result.generation = sampler->generation();
  result.acceptance = sampler->acceptance_fraction();
  for (int k = 0; k + 1 < sampler->num_temperatures(); ++k) result.swap_fractions.push_back(sampler->swap_fraction(k));
  FitTiming& t = result.timing;
  t.sampling = done.seconds;
  t.likelihood = after.seconds - before.seconds;
  t.gpu_kernels = 1e-3 * (after.kernel_ms - before.kernel_ms);
  t.gpu_device = 1e-3 * (after.device_ms - before.device_ms);
  t.checks = done.check_seconds;
  t.checkpoints = done.checkpoint_seconds;
  result.first_draw = first_kept_draw(run.chain, s.burn_in);
  if (done.interrupted) {
    write(nullptr, nullptr, nullptr, 0);
    t.total = elapsed();
    return result;
  }

  std::vector<double> params, log_posterior;
  long best_index = 0;
  predictive_draws(run.chain, space, result.first_draw, s.predictive_draws, s.sampler.seed, params, log_posterior,
                   best_index);
  const long count = static_cast<long>(log_posterior.size());
  const Predictions predictions =
      count > 0 && s.sharing.rank == 0
          ? predict(c, params, count, 0.0, mapped_problem ? &mapped_problem->settings() : nullptr)
          : layout;
  // The stopping rule and the integration-error check at the best draw, in the run file and the
  // result (the command warns): an answer that may be wrong says so.
  char rule[200];
  // Without a rule (ess_target = 0) the run is judged by R-hat alone, at its last check.
  const bool has_rule = s.ess_target > 0;
  result.converged_enough = has_rule ? done.converged : done.worst_rhat < s.rhat_target;
  if (has_rule)
    std::snprintf(rule, sizeof rule, "%s: worst R-hat %.4g (target %.4g), min ESS %.4g (target %.4g)",
                  done.converged ? "met" : "NOT met", done.worst_rhat, s.rhat_target, done.min_ess, s.ess_target);
  else
    std::snprintf(rule, sizeof rule, "none (ess_target = 0): worst R-hat %.4g (target %.4g)%s, min ESS %.4g",
                  done.worst_rhat, s.rhat_target,
                  std::isfinite(done.worst_rhat) ? "" : " (no convergence check: too few generations)", done.min_ess);
  result.stopping_rule = rule;
  run.attributes["stopping_rule"] = rule;
  if (count > 0 && s.sharing.rank == 0) {
    const int np = space.num_parameters();
    const std::vector<double> best(params.begin() + best_index * np, params.begin() + (best_index + 1) * np);
    LikelihoodSettings used = mapped_problem ? mapped_problem->settings() : c.likelihood;
    used.time_step = problem.time_step();  // the run's step (the best draw's periods would give another)
    result.best_step_check = check_time_step(c.data, *c.model, used, best);
    run.attributes["integration_check_best"] = result.best_step_check.describe();
  }
  write(&predictions, &params, &log_posterior, best_index);
  t.total = elapsed();
  if (run.chain.num_draws() - result.first_draw >= 4) {
    result.summary = summarize_fit(run, c.model.get(), result.first_draw);
    result.summary_csv = summary_path(s.output);
    if (s.sharing.rank == 0) write_summary_csv(result.summary_csv, result.summary);
  }
  return result;
}

}  // namespace swarmfit
