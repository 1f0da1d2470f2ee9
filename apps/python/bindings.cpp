// swarmfit._core: the Python package's bindings over the libraries the command uses (models,
// inference, integrators, observations, and apps' integrate keys). They only convert and call:
// numpy arrays in and out, the GIL released while C++ works, and InputError raised as
// swarmfit.InputError (a ValueError) with the command's one-line message. The Python API, its
// checks of shapes and its documentation are in apps/python/swarmfit/.
#include <hdf5.h>
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/map.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/unique_ptr.h>
#include <nanobind/stl/vector.h>

#include <cmath>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "integrate_settings.hpp"
#include "swarmfit/inference/hdf5_io.hpp"
#include "swarmfit/inference/optimizer.hpp"
#include "swarmfit/integrators/ensemble_checks.hpp"
#include "swarmfit/models/catalog.hpp"
#include "swarmfit/models/fit.hpp"
#include "swarmfit/models/fit_summary.hpp"
#include "swarmfit/models/posterior.hpp"
#include "swarmfit/models/stability.hpp"
#include "swarmfit/models/status.hpp"

namespace nb = nanobind;
using namespace nb::literals;

namespace swarmfit::python {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// Arrays in: C-contiguous float64 on the host (the Python layer converts and checks shapes).
using Vector = nb::ndarray<const double, nb::ndim<1>, nb::c_contig, nb::device::cpu>;
using Matrix = nb::ndarray<const double, nb::ndim<2>, nb::c_contig, nb::device::cpu>;
using Cube = nb::ndarray<const double, nb::ndim<3>, nb::c_contig, nb::device::cpu>;

// Arrays out: numpy arrays that own the vector they view.
template <class T>
nb::ndarray<nb::numpy, T> to_numpy(std::vector<T> values, const std::vector<std::size_t>& shape) {
  auto* owned = new std::vector<T>(std::move(values));
  nb::capsule owner(owned, [](void* p) noexcept { delete static_cast<std::vector<T>*>(p); });
  return nb::ndarray<nb::numpy, T>(owned->data(), shape.size(), shape.data(), owner);
}
template <class T>
nb::ndarray<nb::numpy, T> to_numpy(std::vector<T> values) {
  const std::size_t n = values.size();
  return to_numpy(std::move(values), {n});
}

std::size_t size(long n) { return static_cast<std::size_t>(n); }

// A model configuration loaded as the command loads it (load_model_config: file and key=value
// overrides), its priors where it has a [priors] section, and its batched likelihood.
class Model {
 public:
  Model(const std::string& path, const std::vector<std::string>& overrides) {
    {
      nb::gil_scoped_release release;
      config_ = std::make_unique<ModelConfig>(load_model_config(path, overrides));
      if (config_->priors) space_ = std::make_unique<ParameterSpace>(read_priors(*config_));
      problem_ =
          std::make_unique<LikelihoodProblem>(config_->data, *config_->model, config_->likelihood, config_->values);
    }
    if (space_) {
      free_ = space_->free_indices();
    } else {
      for (int k = 0; k < num_parameters(); ++k) free_.push_back(k);
    }
  }

  int num_parameters() const { return config_->model->num_parameters(); }
  const ModelConfig& config() const { return *config_; }
  const LikelihoodProblem& problem() const { return *problem_; }
  const std::vector<int>& free() const { return free_; }
  bool has_priors() const { return space_ != nullptr; }
  // The priors; without a [priors] section, read_priors' InputError (the message `swarmfit fit` gives).
  const ParameterSpace& space() const {
    if (!space_) read_priors(*config_);
    return *space_;
  }

  // Rows of free parameters -> columns of every model parameter (fixed ones from the configuration).
  std::vector<double> expand(const Matrix& theta) const {
    const long n = static_cast<long>(theta.shape(0)), d = static_cast<long>(theta.shape(1));
    if (d != static_cast<long>(free_.size()))
      throw InputError("theta: expected rows of " + std::to_string(free_.size()) + " free parameters, got " +
                       std::to_string(d));
    const int np = num_parameters();
    std::vector<double> full(size(n) * np);
    for (long k = 0; k < n; ++k) {
      if (space_) {
        space_->expand(theta.data() + k * d, full.data() + k * np);
      } else {
        std::copy(theta.data() + k * d, theta.data() + (k + 1) * d, full.data() + k * np);
      }
    }
    return full;
  }

 private:
  std::unique_ptr<ModelConfig> config_;
  std::unique_ptr<ParameterSpace> space_;
  std::unique_ptr<LikelihoodProblem> problem_;
  std::vector<int> free_;
};

// ln L of n parameter sets in one batched call (one ensemble integration), with status codes.
nb::tuple log_likelihood(const Model& model, const Matrix& theta) {
  const std::vector<double> full = model.expand(theta);
  const long n = static_cast<long>(theta.shape(0));
  std::vector<double> lnl(size(n));
  std::vector<int> status(size(n));
  if (n > 0) {
    nb::gil_scoped_release release;
    model.problem().evaluate(full.data(), n, lnl.data(), status.data());
  }
  for (double& v : lnl)
    if (std::isnan(v)) v = -kInf;  // never NaN (as the posterior the sampler sees)
  return nb::make_tuple(to_numpy(std::move(lnl)), to_numpy(std::move(status)));
}

nb::ndarray<nb::numpy, double> log_prior(const Model& model, const Matrix& theta) {
  const ParameterSpace& space = model.space();
  model.expand(theta);  // checks the shape
  const long n = static_cast<long>(theta.shape(0)), d = static_cast<long>(theta.shape(1));
  std::vector<double> lp(size(n));
  for (long k = 0; k < n; ++k) lp[k] = space.log_prior(theta.data() + k * d);
  return to_numpy(std::move(lp));
}

// The posterior as the sampler sees it (models/posterior.hpp): rows outside the prior are not
// integrated (status kStatusOutsidePrior).
nb::tuple log_posterior(const Model& model, const Matrix& theta) {
  const ParameterSpace& space = model.space();
  model.expand(theta);  // checks the shape
  const long n = static_cast<long>(theta.shape(0)), d = static_cast<long>(theta.shape(1));
  std::vector<double> total(size(n)), lp(size(n)), ll(size(n));
  std::vector<int> status(size(n));
  if (n > 0) {
    nb::gil_scoped_release release;
    const Eigen::MatrixXd x = Eigen::Map<const Eigen::MatrixXd>(theta.data(), d, n);
    Eigen::VectorXd prior, likelihood;
    std::vector<int> codes;
    const Posterior posterior(space, model.problem(), &model.config().stability);
    posterior(x, prior, likelihood, codes);
    for (long k = 0; k < n; ++k) {
      lp[k] = prior(k);
      ll[k] = likelihood(k);
      total[k] = log_posterior_of(prior(k), likelihood(k));
      status[k] = codes[k];
    }
  }
  return nb::make_tuple(to_numpy(std::move(total)), to_numpy(std::move(lp)), to_numpy(std::move(ll)),
                        to_numpy(std::move(status)));
}

// The star's RV (m/s, barycentric, no offsets) at sorted times after the reference epoch.
nb::tuple rv_curve(const Model& model, const Matrix& theta, const Vector& times) {
  const std::vector<double> full = model.expand(theta);
  const long n = static_cast<long>(theta.shape(0));
  const std::vector<double> t(times.data(), times.data() + times.shape(0));
  std::vector<double> rv;
  std::vector<int> status;
  {
    nb::gil_scoped_release release;
    model.problem().rv_curve(full.data(), n, t, rv, status);
  }
  return nb::make_tuple(to_numpy(std::move(rv), {size(n), t.size()}), to_numpy(std::move(status)));
}

// The model's transit times of the observed rows (LikelihoodProblem::transit_rows()) and its RVs at
// the data times (no offsets), with ln L and the status codes.
nb::dict curves(const Model& model, const Matrix& theta) {
  const std::vector<double> full = model.expand(theta);
  const long n = static_cast<long>(theta.shape(0));
  std::vector<double> lnl(size(n));
  std::vector<int> status(size(n));
  ModelCurves c;
  if (n > 0) {
    nb::gil_scoped_release release;
    model.problem().evaluate(full.data(), n, lnl.data(), status.data(), &c);
  }
  const std::size_t rows = model.problem().transit_rows().size(), rv = model.problem().data().rv.size();
  c.transits.resize(size(n) * rows);
  c.rv.resize(size(n) * rv);
  nb::dict out;
  out["transits"] = to_numpy(std::move(c.transits), {size(n), rows});
  out["rv"] = to_numpy(std::move(c.rv), {size(n), rv});
  out["log_likelihood"] = to_numpy(std::move(lnl));
  out["status"] = to_numpy(std::move(status));
  return out;
}

// Stability of each row (models/stability.hpp, as `swarmfit stability`): survival to the horizon,
// the chaos indicators and the analytic criteria, column by column.
nb::dict stability(const Model& model, const Matrix& theta, double horizon_orbits, const std::string& integrator,
                   double steps_per_orbit, double close_approach, double megno_limit, const std::string& backend,
                   int threads) {
  const std::vector<double> full = model.expand(theta);
  const long n = static_cast<long>(theta.shape(0));
  const PlanetaryModel& pm = *model.config().model;
  const int planets = pm.num_planets();
  StabilityOptions o;
  o.horizon_orbits = horizon_orbits;
  o.integrator = integrator;
  o.steps_per_orbit = steps_per_orbit;
  o.close_approach = close_approach;
  o.megno_limit = megno_limit;
  o.backend = backend;
  o.threads = threads;
  if (!(horizon_orbits > 0) || !(steps_per_orbit >= 4) || close_approach < 0)
    throw InputError("stability: horizon_orbits > 0, steps_per_orbit >= 4 and close_approach >= 0 are required");
  if (backend != "cpu" && backend != "cuda") throw InputError("stability: backend must be cpu or cuda");
  if (backend == "cuda" && !cuda_available())
    throw InputError("stability: backend cuda requested but " + cuda_device_name());
  if (pm.num_bodies() > kMaxChaosBodies) throw InputError("stability: too many planets for the chaos indicators");
  std::vector<SetStability> r;
  {
    nb::gil_scoped_release release;
    try {
      r = assess_stability(pm, full, n, o);
    } catch (const std::invalid_argument& e) {
      throw InputError(e.what());
    }
  }
  StabilityColumns c = stability_columns(r, planets);
  const std::size_t rows = size(n), cols = static_cast<std::size_t>(planets);
  nb::dict out;
  for (auto [name, column] : c.flags()) out[name] = to_numpy(std::move(*column));
  for (auto [name, column] : c.values()) out[name] = to_numpy(std::move(*column));
  out["max_e"] = to_numpy(std::move(c.max_e), {rows, cols});
  out["max_da"] = to_numpy(std::move(c.max_da), {rows, cols});
  return out;
}

nb::dict rv_data(const Model& model) {
  std::vector<double> time, rv, error;
  std::vector<int> instrument;
  for (const RvObservation& o : model.problem().data().rv) {
    time.push_back(o.time);
    rv.push_back(o.rv);
    error.push_back(o.error);
    instrument.push_back(o.instrument);
  }
  nb::dict out;
  out["time"] = to_numpy(std::move(time));
  out["rv"] = to_numpy(std::move(rv));
  out["error"] = to_numpy(std::move(error));
  out["instrument"] = to_numpy(std::move(instrument));
  out["instruments"] = model.problem().data().instruments;
  return out;
}

nb::dict transit_rows(const Model& model) {
  const LikelihoodProblem& problem = model.problem();
  std::vector<double> time, error;
  std::vector<long> epoch;
  std::vector<int> planet;
  for (std::size_t r = 0; r < problem.transit_rows().size(); ++r) {
    const TransitObservation& o = problem.transit_rows()[r];
    time.push_back(o.time);
    error.push_back(o.error);
    epoch.push_back(o.epoch);
    planet.push_back(problem.transit_row_planet(static_cast<int>(r)));
  }
  nb::dict out;
  out["time"] = to_numpy(std::move(time));
  out["error"] = to_numpy(std::move(error));
  out["epoch"] = to_numpy(std::move(epoch));
  out["planet"] = to_numpy(std::move(planet));
  out["planets"] = model.config().model->planets();
  return out;
}

// ---- run files and fits

// A run: the record as in the run file (inference/run_file.hpp), the first draw after the burn-in,
// and what a fit reports about itself.
struct Run {
  RunRecord record;
  std::string path;
  long first_draw = 0;  // the run's burn-in (the file's burn_in_draws)
  nb::dict fit;         // run_fit's report (empty for a file opened)
};

nb::dict chain_arrays(const Run& run) {
  const Chain& c = run.record.chain;
  const std::size_t draws = size(c.num_draws()), walkers = size(c.num_walkers), d = size(c.num_parameters);
  std::vector<double> log_posterior(c.log_prior.size());
  for (std::size_t k = 0; k < log_posterior.size(); ++k)
    log_posterior[k] = log_posterior_of(c.log_prior[k], c.log_likelihood[k]);
  nb::dict out;
  out["parameters"] = to_numpy(c.parameters, {draws, walkers, d});
  out["log_prior"] = to_numpy(c.log_prior, {draws, walkers});
  out["log_likelihood"] = to_numpy(c.log_likelihood, {draws, walkers});
  out["log_posterior"] = to_numpy(std::move(log_posterior), {draws, walkers});
  out["status"] = to_numpy(c.status, {draws, walkers});
  out["accepted"] = to_numpy(c.accepted, {draws, walkers});
  out["generation"] = to_numpy(c.generation, {draws});
  return out;
}

// The posterior table (models/fit_summary.hpp), as columns; first_draw < 0: the run's burn-in.
nb::dict summary(const Run& run, long first_draw) {
  std::vector<SummaryRow> rows;
  {
    nb::gil_scoped_release release;
    const std::unique_ptr<PlanetaryModel> model = model_from_attributes(run.record.attributes);
    rows = summarize_fit(run.record, model.get(), first_draw < 0 ? run.first_draw : first_draw);
  }
  std::vector<std::string> name, unit;
  std::vector<double> median, lower, upper, lower95, upper95, mean, sd, rhat, ess_bulk, ess_tail;
  std::vector<int> derived;
  for (const SummaryRow& r : rows) {
    name.push_back(r.name);
    unit.push_back(r.unit);
    median.push_back(r.median);
    lower.push_back(r.lower);
    upper.push_back(r.upper);
    lower95.push_back(r.lower95);
    upper95.push_back(r.upper95);
    mean.push_back(r.mean);
    sd.push_back(r.sd);
    rhat.push_back(r.rhat);
    ess_bulk.push_back(r.ess_bulk);
    ess_tail.push_back(r.ess_tail);
    derived.push_back(r.derived);
  }
  // The columns of OUTPUT_summary.csv (inference/summary.hpp's write_summary_csv).
  nb::dict out;
  out["parameter"] = name;
  out["unit"] = unit;
  out["median"] = to_numpy(std::move(median));
  out["lower_16"] = to_numpy(std::move(lower));
  out["upper_84"] = to_numpy(std::move(upper));
  out["lower_2.5"] = to_numpy(std::move(lower95));
  out["upper_97.5"] = to_numpy(std::move(upper95));
  out["mean"] = to_numpy(std::move(mean));
  out["sd"] = to_numpy(std::move(sd));
  out["rhat"] = to_numpy(std::move(rhat));
  out["ess_bulk"] = to_numpy(std::move(ess_bulk));
  out["ess_tail"] = to_numpy(std::move(ess_tail));
  out["derived"] = to_numpy(std::move(derived));
  return out;
}

// A run file, read as `swarmfit summary` reads it (a file it cannot read is bad input).
std::unique_ptr<Run> open_run(const std::string& path) {
  auto run = std::make_unique<Run>();
  run->path = path;
  nb::gil_scoped_release release;
  try {
    run->record = read_run(path);
    h5::Handle file(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), path);
    run->first_draw = H5Aexists(file, "burn_in_draws") > 0 ? h5::read_long_attribute(file, "burn_in_draws")
                                                           : first_kept_draw(run->record.chain, -1);
  } catch (const std::exception& e) {
    throw InputError(e.what());
  }
  return run;
}

nb::dict describe(const RunProgress& p) {
  nb::dict d;
  d["phase"] = p.phase == RunProgress::Phase::kOptimize ? "optimize" : "sample";
  d["generation"] = p.generation;
  d["generations"] = p.generations;
  d["finished"] = p.finished;
  d["best_log_posterior"] = p.best_log_posterior;
  d["acceptance"] = p.acceptance;
  d["worst_rhat"] = p.worst_rhat;
  d["min_ess"] = p.min_ess;
  d["eta_seconds"] = p.eta_seconds;
  return d;
}

// run_fit (models/fit.hpp) on a configuration and key=value overrides, as `swarmfit fit` runs it.
// report(kind, info) is called (with the GIL) at the start ("started") and with the progress
// ("progress"); a KeyboardInterrupt (SIGINT) stops the fit as the command's SIGINT does: the state
// is saved in the run file and the result says interrupted_by_keyboard.
std::unique_ptr<Run> fit(const std::string& path, const std::vector<std::string>& overrides, bool resume,
                         nb::object report) {
  std::optional<ModelConfig> config;
  FitSettings settings;
  {
    nb::gil_scoped_release release;
    config.emplace(load_model_config(path, overrides));
    settings = read_fit_settings(*config);
  }
  settings.resume = resume;
  std::optional<nb::python_error> failure;  // raised by report() or a signal handler: stops the fit
  bool keyboard = false;
  auto call = [&](const char* kind, nb::dict info) {
    nb::gil_scoped_acquire gil;
    if (failure || keyboard || report.is_none()) return;
    try {
      report(kind, info);
    } catch (nb::python_error& e) {
      if (e.matches(PyExc_KeyboardInterrupt)) {
        keyboard = true;  // Ctrl-C while Python code ran
      } else {
        failure.emplace(std::move(e));
      }
    }
  };
  FitCallbacks callbacks;
  callbacks.started = [&](const FitStart& f) {
    nb::gil_scoped_acquire gil;
    nb::dict info;
    info["free_parameters"] = f.free_parameters;
    info["walkers"] = f.walkers;
    info["temperatures"] = f.temperatures;
    info["rv_points"] = f.rv_points;
    info["transit_times"] = f.transit_times;
    info["integrator"] = f.integrator;
    info["backend"] = f.backend;
    info["time_step"] = f.time_step;
    info["resumed"] = f.resumed;
    info["generation"] = f.generation;
    info["draws"] = f.draws;
    info["output"] = settings.output;
    info["progress"] = settings.progress;
    call("started", info);
  };
  callbacks.progress = [&](const RunProgress& p) {
    nb::gil_scoped_acquire gil;
    call("progress", describe(p));
  };
  callbacks.should_stop = [&]() {
    nb::gil_scoped_acquire gil;
    if (failure || keyboard) return true;
    if (PyErr_CheckSignals() != 0) {  // Python's handlers run here: SIGINT raises KeyboardInterrupt
      if (PyErr_ExceptionMatches(PyExc_KeyboardInterrupt)) {
        PyErr_Clear();
        keyboard = true;
      } else {
        failure.emplace();
      }
      return true;
    }
    return false;
  };
  FitResult result;
  {
    nb::gil_scoped_release release;
    result = run_fit(*config, settings, callbacks);
  }
  if (failure) throw *failure;
  auto run = std::make_unique<Run>();
  run->path = settings.output;
  run->first_draw = result.first_draw;
  nb::dict& f = run->fit;
  f["interrupted"] = result.interrupted;
  f["state_saved"] = result.state_saved;
  f["interrupted_by_keyboard"] = keyboard;
  f["converged"] = result.converged;
  f["generation"] = result.generation;
  f["acceptance"] = result.acceptance;
  f["swap_fractions"] = result.swap_fractions;
  f["walkers_reset"] = result.walkers_reset;
  f["summary_csv"] = result.summary_csv;
  nb::dict timing;
  timing["total"] = result.timing.total;
  timing["sampling"] = result.timing.sampling;
  timing["likelihood"] = result.timing.likelihood;
  timing["gpu_kernels"] = result.timing.gpu_kernels;
  timing["gpu_device"] = result.timing.gpu_device;
  timing["checks"] = result.timing.checks;
  timing["checkpoints"] = result.timing.checkpoints;
  f["timing"] = timing;
  run->record = std::move(result.run);
  return run;
}

// ---- the ensemble engine

// Keys of `swarmfit integrate` that the arrays and the returned results stand for.
const char* const kArrayKeys[] = {
    "nsys",   "nbod",       "planet_mass",       "spacing_factor", "seed",          "initial_conditions",
    "output", "output_csv", "snapshot_interval", "pos_threshold",  "vel_threshold", "time_threshold"};

// An ensemble of initial states (M systems of n bodies, inertial, body 0 the star) integrated as
// `swarmfit integrate` integrates its own: the same keys (key=value), checks and messages.
nb::dict integrate_arrays(const Matrix& masses, const Cube& positions, const Cube& velocities, const Vector& times,
                          const Matrix& radii, const std::vector<std::string>& overrides) {
  namespace po = boost::program_options;
  const po::options_description keys = app::integrate_keys();
  app::KeyOrigins o;
  apply_overrides(o.settings, overrides, keys);
  for (const char* key : kArrayKeys)
    if (o.settings.count(key))
      app::bad_value(o, key, "not a key of swarmfit.integrate (the arrays are the systems; the results are returned)");
  po::variables_map vm;
  store_settings(o.settings, keys, vm);
  const app::IntegrateSettings settings = app::read_integrate_settings(vm, o);
  const long m = static_cast<long>(masses.shape(0));
  const int n = static_cast<int>(masses.shape(1));
  if (n < kMinBodies || n > kMaxBodies)
    throw InputError("initial conditions: " + std::to_string(n) + " bodies per system (2 to 16 are supported)");
  for (const Cube* states : {&positions, &velocities})
    if (states->shape(0) != masses.shape(0) || states->shape(1) != masses.shape(1) || states->shape(2) != 3)
      throw InputError("initial conditions: positions and velocities must be (M, n, 3) for masses (M, n)");
  if (times.shape(0) != masses.shape(0) || radii.shape(0) != masses.shape(0) || radii.shape(1) != masses.shape(1))
    throw InputError("initial conditions: times must be (M,) and radii (M, n) for masses (M, n)");
  Ensemble ensemble(m, n);
  for (long s = 0; s < m; ++s) {
    ensemble.set_time(s, times.data()[s]);
    for (int i = 0; i < n; ++i) {
      ensemble.mass(s, i) = masses.data()[s * n + i];
      ensemble.radius(s, i) = radii.data()[s * n + i];
      if (ensemble.radius(s, i) < 0)
        throw InputError("initial conditions: system " + std::to_string(s) + " body " + std::to_string(i) +
                         ": negative radius");
      for (int d = 0; d < 3; ++d) {
        ensemble.position(s, i, d) = positions.data()[(s * n + i) * 3 + d];
        ensemble.velocity(s, i, d) = velocities.data()[(s * n + i) * 3 + d];
      }
    }
  }
  app::check_initial_conditions(ensemble, "initial conditions", settings.request.destination_time, o);
  std::vector<double> energy_error;
  {
    nb::gil_scoped_release release;
    const double G = settings.request.step.G;
    const std::vector<double> energy0 = system_energies(ensemble, G);
    swarmfit::integrate(ensemble, settings.request, settings.backend);
    energy_error = relative_energy_errors(energy0, ensemble, G);
  }
  std::vector<double> x(size(m) * n * 3), v(size(m) * n * 3), t(size(m)), steps(size(m));
  std::vector<int> status(size(m));
  for (long s = 0; s < m; ++s) {
    t[s] = ensemble.time(s);
    steps[s] = ensemble.steps(s);
    status[s] = ensemble.status(s);
    for (int i = 0; i < n; ++i)
      for (int d = 0; d < 3; ++d) {
        x[(s * n + i) * 3 + d] = ensemble.position(s, i, d);
        v[(s * n + i) * 3 + d] = ensemble.velocity(s, i, d);
      }
  }
  nb::dict out;
  out["positions"] = to_numpy(std::move(x), {size(m), size(n), 3});
  out["velocities"] = to_numpy(std::move(v), {size(m), size(n), 3});
  out["times"] = to_numpy(std::move(t));
  out["steps"] = to_numpy(std::move(steps));
  out["status"] = to_numpy(std::move(status));
  out["energy_error"] = to_numpy(std::move(energy_error));
  out["integrator"] = settings.request.integrator->name;
  out["backend"] = settings.backend;
  return out;
}

nb::list integrators() {
  nb::list out;
  for (const IntegratorInfo& info : integrator_registry()) {
    nb::dict d;
    d["name"] = info.name;
    d["description"] = info.description;
    d["citation"] = info.citation;
    d["order"] = info.order;
    d["adaptive"] = info.adaptive;
    d["symplectic"] = info.symplectic;
    d["parameters"] = info.parameters;
    out.append(d);
  }
  return out;
}

// The configuration's global keys as given (value, origin), overrides applied.
nb::dict settings(const Model& model) {
  nb::dict out;
  for (const auto& [key, setting] : model.config().settings)
    out[key.c_str()] = nb::make_tuple(setting.value, setting.origin);
  return out;
}

}  // namespace

}  // namespace swarmfit::python

NB_MODULE(_core, m) {
  using namespace swarmfit;
  namespace py = swarmfit::python;
  using py::Matrix;
  using py::Run;
  using py::size;
  using py::to_numpy;
  m.doc() = "swarmfit's C++ libraries (bindings: conversions and calls only; the API is the swarmfit package)";
  nb::exception<InputError>(m, "InputError", PyExc_ValueError);
  m.attr("version") = SWARMFIT_VERSION;
  m.def("cuda_available", &cuda_available);
  m.def("status_name", [](int code) { return std::string(model_status_name(code)); });
  m.def("integrators", &py::integrators);
  m.def("integrate", &py::integrate_arrays, "masses"_a, "positions"_a, "velocities"_a, "times"_a, "radii"_a,
        "overrides"_a);

  nb::class_<py::Model>(m, "Model")
      .def(nb::init<const std::string&, const std::vector<std::string>&>(), "path"_a, "overrides"_a)
      .def_prop_ro("path", [](const py::Model& x) { return x.config().path; })
      .def_prop_ro("config_text", [](const py::Model& x) { return x.config().file.text; })
      .def_prop_ro("names",
                   [](const py::Model& x) {
                     std::vector<std::string> v;
                     for (const auto& p : x.config().model->parameters()) v.push_back(p.name);
                     return v;
                   })
      .def_prop_ro("units",
                   [](const py::Model& x) {
                     std::vector<std::string> v;
                     for (const auto& p : x.config().model->parameters()) v.push_back(p.unit);
                     return v;
                   })
      .def_prop_ro("meanings",
                   [](const py::Model& x) {
                     std::vector<std::string> v;
                     for (const auto& p : x.config().model->parameters()) v.push_back(p.meaning);
                     return v;
                   })
      .def_prop_ro("values", [](const py::Model& x) { return x.config().values; })
      .def_prop_ro("free", [](const py::Model& x) { return x.free(); })
      .def_prop_ro("has_priors", &py::Model::has_priors)
      .def_prop_ro("priors",
                   [](const py::Model& x) {
                     std::vector<std::string> v;
                     if (x.has_priors())
                       for (const Prior& p : x.space().priors()) v.push_back(p.text());
                     return v;
                   })
      .def_prop_ro("planets", [](const py::Model& x) { return x.config().model->planets(); })
      .def_prop_ro("instruments", [](const py::Model& x) { return x.config().model->instruments(); })
      .def_prop_ro("reference_epoch", [](const py::Model& x) { return x.problem().reference_epoch(); })
      .def_prop_ro("time_step", [](const py::Model& x) { return x.problem().time_step(); })
      .def_prop_ro("integrator", [](const py::Model& x) { return x.config().likelihood.integrator; })
      .def_prop_ro("backend", [](const py::Model& x) { return x.config().likelihood.backend; })
      .def_prop_ro("settings", &py::settings)
      .def("rv_data", &py::rv_data)
      .def("transit_rows", &py::transit_rows)
      .def("expand",
           [](const py::Model& x, const Matrix& theta) {
             return to_numpy(x.expand(theta), {theta.shape(0), size(x.num_parameters())});
           })
      .def("log_likelihood", &py::log_likelihood, "theta"_a)
      .def("log_prior", &py::log_prior, "theta"_a)
      .def("log_posterior", &py::log_posterior, "theta"_a)
      .def("rv_curve", &py::rv_curve, "theta"_a, "times"_a)
      .def("curves", &py::curves, "theta"_a)
      .def("stability", &py::stability, "theta"_a, "horizon_orbits"_a, "integrator"_a, "steps_per_orbit"_a,
           "close_approach"_a, "megno_limit"_a, "backend"_a, "threads"_a);

  nb::class_<Run>(m, "Run")
      .def_prop_ro("path", [](const Run& r) { return r.path; })
      .def_prop_ro("first_draw", [](const Run& r) { return r.first_draw; })
      .def_prop_ro("fit", [](const Run& r) { return r.fit; })
      .def_prop_ro("names", [](const Run& r) { return r.record.names; })
      .def_prop_ro("units", [](const Run& r) { return r.record.units; })
      .def_prop_ro("priors",
                   [](const Run& r) {
                     std::vector<std::string> v;
                     for (const Prior& p : r.record.priors) v.push_back(p.text());
                     return v;
                   })
      .def_prop_ro("values", [](const Run& r) { return r.record.values; })
      .def_prop_ro("free", [](const Run& r) { return r.record.free; })
      .def_prop_ro("seed", [](const Run& r) { return r.record.settings.seed; })
      .def_prop_ro("thin", [](const Run& r) { return r.record.thin; })
      .def_prop_ro("generation", [](const Run& r) { return r.record.state.generation; })
      .def_prop_ro("attributes", [](const Run& r) { return r.record.attributes; })
      .def("chain", &py::chain_arrays)
      .def("first_kept_draw", [](const Run& r, long burn_in) { return first_kept_draw(r.record.chain, burn_in); })
      .def("summary", &py::summary, "first_draw"_a);
  m.def("open_run", &py::open_run, "path"_a);
  m.def("fit", &py::fit, "path"_a, "overrides"_a, "resume"_a, "report"_a.none());
  // run_catalog (models/catalog.hpp), as `swarmfit catalog` runs it (without the browser report):
  // the outcome's counts, the targets skipped and why, and the summary's path.
  m.def(
      "catalog",
      [](const std::string& description, const std::string& output, const std::vector<std::string>& overrides,
         const std::vector<std::string>& only, long max_targets, int jobs, const std::string& pack, bool check,
         int host_targets) {
        CatalogSettings s;
        s.description = description;
        s.output = output;
        s.overrides = overrides;
        s.only = only;
        s.max_targets = max_targets;
        s.jobs = jobs;
        s.pack = pack;
        s.check_only = check;
        s.host_targets = host_targets;
        CatalogOutcome r;
        {
          nb::gil_scoped_release release;
          r = run_catalog(s);
        }
        nb::dict d, skipped;
        std::vector<std::string> names;
        for (const CatalogTarget& t : r.targets) {
          names.push_back(t.name);
          if (!t.skip.empty()) skipped[t.name.c_str()] = t.skip;
        }
        d["targets"] = names;
        d["skipped"] = skipped;
        d["fitted"] = r.fitted;
        d["kept"] = r.reused;
        d["failed"] = r.failed;
        d["packed_rounds"] = r.packing.rounds;
        d["packed_batches"] = r.packing.batches;
        d["summary"] = check ? std::string() : output + "/summary.csv";
        d["report"] = output + "/report.txt";
        return d;
      },
      "description"_a, "output"_a, "overrides"_a, "only"_a, "max_targets"_a, "jobs"_a, "pack"_a, "check"_a,
      "host_targets"_a);
}
