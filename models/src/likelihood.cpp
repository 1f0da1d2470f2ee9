#include "swarmfit/models/likelihood.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>

#include "swarmfit/integrators/registry.hpp"
#include "swarmfit/models/likelihood_packing.hpp"
#include "swarmfit/models/units.hpp"
#include "swarmfit/observations/input_error.hpp"

namespace swarmfit {

LikelihoodProblem::LikelihoodProblem(const Dataset& data, const PlanetaryModel& model,
                                     const LikelihoodSettings& settings, const std::vector<double>& typical)
    : data_(data), model_(model), settings_(settings) {
  const double t_ref = model_.options().reference_epoch;
  if (model_.num_bodies() > kMaxObservedBodies)
    throw InputError("the model has " + std::to_string(model_.num_planets()) + " planets; at most " +
                     std::to_string(kMaxObservedBodies - 1) + " are supported");
  if (static_cast<int>(model_.instruments().size()) > kMaxInstruments)
    throw InputError("at most " + std::to_string(kMaxInstruments) + " RV instruments are supported");
  if (find_integrator(settings_.integrator) == nullptr)
    throw InputError("unknown integrator '" + settings_.integrator + "'");
  if (static_cast<int>(typical.size()) != model_.num_parameters())
    throw InputError("internal: typical parameters do not match the model");
  // Every observation must come after the reference epoch: the integration runs forwards.
  for (const auto& o : data_.rv)
    if (!(o.time > t_ref))
      throw InputError(o.origin + ": RV time " + std::to_string(o.time) + " is not after reference_epoch " +
                       std::to_string(t_ref));
  for (const auto& o : data_.transits)
    if (!(o.time > t_ref))
      throw InputError(o.origin + ": transit time " + std::to_string(o.time) + " is not after reference_epoch " +
                       std::to_string(t_ref));

  double min_period = 1e300, max_period = 0.0;
  for (int p = 0; p < model_.num_planets(); ++p) {
    const double period = typical[model_.planet_parameter(p, 0)];
    min_period = std::min(min_period, period);
    max_period = std::max(max_period, period);
  }
  if (!(min_period > 0) || !std::isfinite(max_period)) throw InputError("every planet needs a period > 0");
  time_step_ = settings_.time_step > 0 ? settings_.time_step : default_step_fraction(settings_.integrator) * min_period;
  const double last = (data_.rv.empty() && data_.transits.empty()) ? t_ref : data_.last_time();
  duration_ = (last - t_ref) + 0.6 * max_period + settings_.extra_time;

  // RV: times from the reference epoch; values centred per instrument (weighted mean) so that
  // the observer's sums (likelihood_observer.hpp) do not cancel digits.
  instrument_of_model_.assign(data_.instruments.size(), -1);
  for (std::size_t j = 0; j < data_.instruments.size(); ++j) {
    const auto& names = model_.instruments();
    auto it = std::find(names.begin(), names.end(), data_.instruments[j]);
    if (it == names.end()) {
      std::string where;
      for (const auto& o : data_.rv)
        if (o.instrument == static_cast<int>(j) && where.empty()) where = o.origin + ": ";
      throw InputError(where + "RV instrument '" + data_.instruments[j] + "' is not in the model");
    }
    instrument_of_model_[j] = static_cast<int>(it - names.begin());
  }
  rv_centre_.assign(model_.instruments().size(), 0.0);
  std::vector<double> weight_sum(model_.instruments().size(), 0.0);
  for (const auto& o : data_.rv) {
    const int j = instrument_of_model_[o.instrument];
    rv_centre_[j] += o.rv / (o.error * o.error);
    weight_sum[j] += 1.0 / (o.error * o.error);
  }
  for (std::size_t j = 0; j < rv_centre_.size(); ++j)
    if (weight_sum[j] > 0) rv_centre_[j] /= weight_sum[j];
  for (const auto& o : data_.rv) {
    const int j = instrument_of_model_[o.instrument];
    rv_time_.push_back(o.time - t_ref);
    rv_value_.push_back(o.rv - rv_centre_[j]);
    rv_error_.push_back(o.error);
    rv_instrument_.push_back(j);
  }

  // Transit rows, by body then epoch.
  std::vector<int> body_of_data_planet(data_.planets.size());
  for (std::size_t p = 0; p < data_.planets.size(); ++p) {
    const auto& names = model_.planets();
    auto it = std::find(names.begin(), names.end(), data_.planets[p]);
    if (it == names.end()) {
      std::string list;
      for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
      std::string where;
      for (const auto& o : data_.transits)
        if (o.planet == static_cast<int>(p) && where.empty()) where = o.origin + ": ";
      throw InputError(where + "transit times for planet '" + data_.planets[p] + "', but the model's planets are " +
                       list);
    }
    body_of_data_planet[p] = static_cast<int>(it - names.begin()) + 1;
  }
  std::vector<std::size_t> order(data_.transits.size());
  for (std::size_t k = 0; k < order.size(); ++k) order[k] = k;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    const int ba = body_of_data_planet[data_.transits[a].planet], bb = body_of_data_planet[data_.transits[b].planet];
    if (ba != bb) return ba < bb;
    return data_.transits[a].epoch < data_.transits[b].epoch;
  });
  tables_ = ObservationTables{};
  for (std::size_t k : order) {
    const auto& o = data_.transits[k];
    const int body = body_of_data_planet[o.planet];
    const int row = static_cast<int>(transit_rows_.size());
    if (!tables_.detect[body]) {
      tables_.detect[body] = true;
      tables_.transit_begin[body] = row;
      // Epoch numbering: the data's linear ephemeris (or, with one epoch, the model's period).
      int epochs = 0;
      long first_epoch = o.epoch;
      for (const auto& q : data_.transits)
        if (q.planet == o.planet && q.epoch != first_epoch) epochs = 2;
      if (epochs == 2) {
        const LinearEphemeris e = fit_linear_ephemeris(data_, o.planet);
        tables_.ephemeris_t0[body] = e.t0 - t_ref;
        tables_.ephemeris_period[body] = e.period;
      } else {
        tables_.ephemeris_period[body] = typical[model_.planet_parameter(body - 1, 0)];
        tables_.ephemeris_t0[body] = o.time - t_ref - o.epoch * tables_.ephemeris_period[body];
      }
    }
    tables_.transit_end[body] = row + 1;
    transit_rows_.push_back(o);
    transit_body_.push_back(body);
    transit_time_.push_back(o.time - t_ref);
    transit_error_.push_back(o.error);
    transit_epoch_.push_back(static_cast<double>(o.epoch));
  }

  tables_.num_rv = static_cast<int>(rv_time_.size());
  tables_.rv_time = rv_time_.data();
  tables_.rv_value = rv_value_.data();
  tables_.rv_error = rv_error_.data();
  tables_.rv_instrument = rv_instrument_.data();
  tables_.num_instruments = static_cast<int>(model_.instruments().size());
  tables_.velocity_unit = 1.0 / units::kMetresPerSecond;
  tables_.marginalize_offsets = settings_.marginalize_offsets;
  tables_.num_transits = static_cast<int>(transit_rows_.size());
  tables_.transit_time = transit_time_.data();
  tables_.transit_error = transit_error_.data();
  tables_.transit_epoch = transit_epoch_.data();
  tables_.star_radius = settings_.star_radius;
  tables_.student_nu = settings_.student_nu;
  // Parameter-independent terms (likelihood_observer.hpp, the likelihood's terms).
  double norm = rv_log_norm(tables_.num_rv);
  for (double sigma : transit_error_) norm += transit_log_norm(sigma, settings_.student_nu);
  tables_.log_norm = norm;
  if (settings_.ephemeris) attach_ephemeris(*settings_.ephemeris);
}

double default_step_fraction(const std::string& integrator) {
  const IntegratorInfo* info = find_integrator(integrator);
  if (!info) throw InputError("unknown integrator '" + integrator + "'");
  if (info->scheme == SchemeId::kMvs || info->scheme == SchemeId::kSaba4 || info->scheme == SchemeId::kWhfast)
    return 1.0 / 20.0;  // Kepler splitting: the Kepler drift is exact
  if (info->order >= 5) return 1.0 / 100.0;
  if (info->order == 4) return 1.0 / 200.0;
  return 1.0 / 2000.0;  // leapfrog: 2nd order on the whole orbit
}

LinearEphemeris LikelihoodProblem::ephemeris(int planet) const {
  const int body = planet + 1;
  LinearEphemeris e;
  e.t0 = tables_.ephemeris_t0[body] + reference_epoch();
  e.period = tables_.ephemeris_period[body];
  return e;
}

RunRequest LikelihoodProblem::request(double duration) const {
  RunRequest r;
  r.integrator = find_integrator(settings_.integrator);
  r.step.G = units::kG;
  r.step.time_step = time_step_;
  r.step.max_time_step = time_step_;
  r.step.min_time_step = 1e-6 * time_step_;
  r.step.mvs_coordinates = settings_.mvs_jacobi ? MvsCoordinates::kJacobi : MvsCoordinates::kDemocraticHeliocentric;
  if (settings_.mvs_jacobi) {
    r.step.mvs_splitting = MvsSplitting::kKeplerJumpKick;  // the kernel the correctors are built for
    r.step.mvs_corrector = settings_.mvs_corrector;
  }
  r.monitors = settings_.monitors;
  r.destination_time = duration;
  r.threads = settings_.threads;
  r.reproducible = settings_.reproducible;
  r.cuda_layout = settings_.cuda_layout;
  return r;
}

void LikelihoodProblem::build_ensemble(const double* params, long n, Ensemble& ensemble,
                                       std::vector<int>& invalid) const {
  // For a GPU batch of 1e5-1e6 systems this host step would cost as much as the integration if
  // it ran on one thread.
  set_up_systems(model_, params, n, ensemble, invalid, settings_.threads);
}

RvCentres LikelihoodProblem::rv_centres() const {
  RvCentres centres;
  for (int j = 0; j < tables_.num_instruments; ++j) centres.value[j] = rv_centre_[j];
  return centres;
}

void LikelihoodProblem::offsets_and_jitters(const double* params, long n, std::vector<double>& offsets,
                                            std::vector<double>& jitters) const {
  const int np = model_.num_parameters();
  const int ni = tables_.num_instruments;
  offsets.resize(static_cast<std::size_t>(n) * ni);
  jitters.resize(static_cast<std::size_t>(n) * ni);
  for (long s = 0; s < n; ++s)
    for (int j = 0; j < ni; ++j) {
      offsets[s * ni + j] = params[s * np + model_.offset_parameter(j)] - rv_centre_[j];
      jitters[s * ni + j] = params[s * np + model_.jitter_parameter(j)];
    }
}

bool cuda_body_layout_possible(const LikelihoodSettings& s, int num_bodies) {
  if (s.integrator != "mvs" || !s.mvs_jacobi || s.cuda_layout == CudaLayout::kThreadPerSystem) return false;
  return s.cuda_layout == CudaLayout::kThreadPerBody || num_bodies >= kCudaBodyLayoutFrom;
}

bool LikelihoodProblem::packed(const ModelCurves* curves) const {
  // A reproducible CUDA run sets its systems up on the host and uses the strict kernels: not packed;
  // nor one whose batches may run a thread per body (cuda_body_layout_possible).
  if (settings_.backend == "cuda" &&
      (settings_.reproducible || cuda_body_layout_possible(settings_, model_.num_bodies())))
    return false;
  return settings_.packer && !curves && !ephemeris_;
}

void LikelihoodProblem::evaluate(const double* params, long n, double* log_likelihood, int* status, ModelCurves* curves,
                                 DeviceTiming* timing) const {
  if (n <= 0) return;
  if (ephemeris_) {
    std::vector<double> x;
    std::vector<int> first;
    DeviceTiming a, b;
    osculating(params, n, x, first, &a);
    evaluate_here(x.data(), n, log_likelihood, status, curves, &b);
    for (long s = 0; s < n; ++s)
      if (first[s] != kStatusOk) {
        status[s] = first[s];
        log_likelihood[s] = -HUGE_VAL;
      }
    if (timing) {
      timing->kernel_ms = a.kernel_ms + b.kernel_ms;
      timing->total_ms = a.total_ms + b.total_ms;
    }
    return;
  }
  if (packed(curves)) {
    settings_.packer->evaluate(*this, params, n, log_likelihood, status, timing);
    return;
  }
  evaluate_here(params, n, log_likelihood, status, curves, timing);
}

void LikelihoodProblem::evaluate_here(const double* params, long n, double* log_likelihood, int* status,
                                      ModelCurves* curves, DeviceTiming* timing) const {
  if (settings_.backend == "cuda" && !curves && !settings_.reproducible) {
    // The GPU path: only the parameters go to the device, which sets the systems up itself
    // (system_setup.hpp), slice by slice while the host uploads the next slice.
    if (!pipeline_) pipeline_ = std::make_shared<LikelihoodPipeline>();
    std::vector<double> lnl(n, -HUGE_VAL);
    const DeviceTiming device = pipeline_->run(n, model_.shape(), rv_centres(), params, request(duration_), tables_,
                                               status, lnl.data(), settings_.cuda_slices);
    if (timing) *timing = device;
    for (long s = 0; s < n; ++s) log_likelihood[s] = status[s] == kStatusOk ? lnl[s] : -HUGE_VAL;
    return;
  }
  std::vector<double> offsets, jitters;
  offsets_and_jitters(params, n, offsets, jitters);
  ObservationTables tables = tables_;
  tables.offsets = offsets.data();
  tables.jitters = jitters.data();
  std::vector<double> lnl(n, -HUGE_VAL);
  tables.log_likelihood = lnl.data();
  if (curves) {
    curves->rv.assign(static_cast<std::size_t>(n) * tables.num_rv, std::nan(""));
    curves->transits.assign(static_cast<std::size_t>(n) * tables.num_transits, std::nan(""));
    tables.rv_model = curves->rv.data();
    tables.transit_model = curves->transits.data();
  }
  Ensemble ensemble(n, model_.num_bodies());
  std::vector<int> invalid;
  build_ensemble(params, n, ensemble, invalid);
  const DeviceTiming device = integrate_likelihood(ensemble, request(duration_), tables, settings_.backend);
  if (timing) *timing = device;
  for (long s = 0; s < n; ++s) {
    status[s] = ensemble.status(s);
    log_likelihood[s] = status[s] == kStatusOk ? lnl[s] : -HUGE_VAL;
  }
  if (curves && !curves->relative_times)
    for (double& t : curves->transits) t += reference_epoch();
}

void LikelihoodProblem::integrate_without_observers(const double* params, long n, int* status,
                                                    DeviceTiming* timing) const {
  if (n <= 0) return;
  std::vector<double> x;
  std::vector<int> first;
  if (ephemeris_) {  // the correction's integration is not timed here
    osculating(params, n, x, first);
    params = x.data();
  }
  Ensemble ensemble(n, model_.num_bodies());
  std::vector<int> invalid;
  build_ensemble(params, n, ensemble, invalid);
  const DeviceTiming device = integrate(ensemble, request(duration_), settings_.backend);
  if (timing) *timing = device;
  for (long s = 0; s < n; ++s) status[s] = ensemble.status(s);
}

void LikelihoodProblem::rv_curve(const double* params, long n, const std::vector<double>& times,
                                 std::vector<double>& rv, std::vector<int>& status) const {
  status.assign(n, kStatusOk);
  rv.assign(static_cast<std::size_t>(n) * times.size(), std::nan(""));
  if (n <= 0 || times.empty()) return;
  std::vector<double> t(times.size()), zero(times.size(), 0.0), one(times.size(), 1.0);
  std::vector<int> instrument(times.size(), 0);
  for (std::size_t k = 0; k < times.size(); ++k) {
    t[k] = times[k] - reference_epoch();
    if (!(t[k] > 0)) throw InputError("RV curve times must be after reference_epoch");
    if (k > 0 && !(t[k] >= t[k - 1])) throw InputError("RV curve times must be sorted");
  }
  std::vector<double> x;
  std::vector<int> first;
  if (ephemeris_) {
    osculating(params, n, x, first);
    params = x.data();
  }
  Ensemble ensemble(n, model_.num_bodies());
  std::vector<int> invalid;
  build_ensemble(params, n, ensemble, invalid);
  ObservationTables tables;
  tables.num_rv = static_cast<int>(t.size());
  tables.rv_time = t.data();
  tables.rv_value = zero.data();
  tables.rv_error = one.data();
  tables.rv_instrument = instrument.data();
  tables.num_instruments = 1;
  tables.velocity_unit = 1.0 / units::kMetresPerSecond;
  tables.rv_model = rv.data();
  std::vector<double> lnl(n);
  tables.log_likelihood = lnl.data();
  integrate_likelihood(ensemble, request(t.back() + time_step_), tables, settings_.backend);
  for (long s = 0; s < n; ++s) status[s] = first.empty() || first[s] == kStatusOk ? ensemble.status(s) : first[s];
}

}  // namespace swarmfit
