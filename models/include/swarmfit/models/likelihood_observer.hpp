// The likelihood observer: what a planetary system "sees" during its integration (the star's RV
// at the observation times, the planets' transit times), reduced on the chip to one
// log-likelihood and a status code. Written once for every lane type, like the schemes, and
// plugged into the engines as an observation policy (integrators/observation.hpp):
// LikelihoodObservation below; models/ instantiates its CPU and CUDA kernels.
//
// Conventions (README, "Conventions"): the observer is on the +z axis; the sky plane is x-y.
//  - Star RV = -v_z of the star in the barycentric frame (positive = receding), evaluated at each
//    observation time exactly: a sub-step of the same scheme from the end of the step that
//    passed the time (backwards by at most one step; the main integration is not disturbed), or
//    the scheme's own dense output where it has one (MVS with the Kepler drift outermost:
//    Mvs::dense_star_vz, one Kepler drift per planet instead of a sub-step; integrators/dense_output.hpp).
//  - A transit of planet i is a root of g = (x . v) over the sky-plane components of the
//    planet-star vector, going from g < 0 to g > 0 with the planet in front (z_i - z_0 > 0):
//    the time of minimum sky-plane separation. Sign changes are detected between steps and the
//    root is refined by Newton iteration on g, with g' = |v_sky|^2 + x . a (the approach of
//    Fabrycky 2010, "Non-Keplerian dynamics of exoplanets", and TTVFast, Deck et al. 2014).
//    A conjunction whose sky separation exceeds the star's radius is not a transit.
//  - Transits are numbered in the data's own epoch numbering: the first conjunction by rounding
//    with the data's linear ephemeris, the following ones by counting, so long-term period
//    drift cannot shift the numbering.
// Likelihood: RV with per-instrument offset gamma_j and jitter s_j,
//   ln L = sum -0.5 [r^2 / (sigma^2 + s_j^2) + ln 2 pi (sigma^2 + s_j^2)],  r = v - model - gamma_j,
// accumulated as per-instrument sums so that gamma_j can instead be marginalised analytically
// (uniform prior on gamma_j: a Gaussian integral). Transit times: Gaussian, or Student-t with nu
// degrees of freedom (as Agol et al. 2021, PSJ 2, 1, for TRAPPIST-1).
#pragma once

#include <cmath>
#include <type_traits>

#include "swarmfit/integrators/dense_output.hpp"
#include "swarmfit/integrators/driver.hpp"
#include "swarmfit/integrators/gravity.hpp"
#include "swarmfit/integrators/kepler.hpp"
#include "swarmfit/integrators/observation.hpp"
#include "swarmfit/integrators/parameters.hpp"
#include "swarmfit/models/status.hpp"
#include "swarmfit/models/units.hpp"

namespace swarmfit {

constexpr int kMaxInstruments = 8;
constexpr int kMaxObservedBodies = 10;  // star + 9 planets
// 1 AU/day in m/s (IAU 2012 astronomical unit).
constexpr double kMetresPerSecondPerAuPerDay = 149597870700.0 / 86400.0;

// The likelihood's terms, in one place: what the observers add up on the chip and the
// parameter-independent normalisation the host adds once (LikelihoodProblem).
//  RV (Gaussian with jitter): -0.5 [r^2 / v + ln 2 pi v], v = sigma^2 + s_j^2, as
//    -0.5 n ln 2 pi (host) + 0.5 sum ln w (rv_weights_term, w = 1 / v) + per instrument the
//    sums of w, w r, w r^2 about an offset gamma_j (rv_instrument_term), or gamma_j integrated out
//    under a uniform prior: int exp(-0.5 sum w (r - gamma)^2) dgamma
//    = exp(-0.5 (S_rr - S_r^2 / S_w)) sqrt(2 pi / S_w).
//  Transit times, z = (t_model - t) / sigma: Gaussian, -0.5 ln 2 pi - ln sigma (host) - 0.5 z^2;
//    or Student-t with nu degrees of freedom (Agol et al. 2021, PSJ 2, 1, eq. 7):
//    ln Gamma((nu + 1)/2) - ln Gamma(nu/2) - 0.5 ln(nu pi) - ln sigma (host)
//    - (nu + 1)/2 ln(1 + z^2 / nu).
SWARMFIT_HD double transit_term(double z, double nu) { return nu > 0.0 ? portable_log1p(z * z / nu) : z * z; }
SWARMFIT_HD double transit_sum_term(double sum, double nu) { return nu > 0.0 ? -0.5 * (nu + 1.0) * sum : -0.5 * sum; }
SWARMFIT_HD double rv_weights_term(double log_weight_sum) { return 0.5 * log_weight_sum; }
SWARMFIT_HD double rv_instrument_term(double sw, double sr, double srr, double gamma, bool marginalize) {
  if (marginalize) return -0.5 * (srr - sr * sr / sw) + 0.5 * portable_log(6.283185307179586 / sw);
  return -0.5 * (srr - 2.0 * gamma * sr + gamma * gamma * sw);
}
// The host's part (normalisation.cpp-free: std::lgamma and std::log are host functions).
inline double rv_log_norm(int num_rv) { return -0.5 * num_rv * std::log(2.0 * units::kPi); }
inline double transit_log_norm(double sigma, double nu) {
  if (nu > 0)
    return std::lgamma(0.5 * (nu + 1)) - std::lgamma(0.5 * nu) - 0.5 * std::log(nu * units::kPi) - std::log(sigma);
  return -0.5 * std::log(2.0 * units::kPi) - std::log(sigma);
}

// Everything the observers read, as plain pointers (host or device memory) and small arrays, so
// that it is passed by value into a kernel. Times are days since the start of the integration.
struct ObservationTables {
  // RV observations, sorted by time.
  int num_rv = 0;
  const double* rv_time = nullptr;
  const double* rv_value = nullptr;  // m/s, minus the instrument's centre rv_centre[j]
  const double* rv_error = nullptr;  // m/s
  const int* rv_instrument = nullptr;
  int num_instruments = 0;
  double velocity_unit = kMetresPerSecondPerAuPerDay;  // model velocity unit -> m/s
  bool marginalize_offsets = false;

  // Transit rows, sorted by body then epoch; rows of body i are [transit_begin[i], transit_end[i]).
  int num_transits = 0;
  const double* transit_time = nullptr;
  const double* transit_error = nullptr;
  const double* transit_epoch = nullptr;  // whole numbers stored as double
  int transit_begin[kMaxObservedBodies] = {};
  int transit_end[kMaxObservedBodies] = {};
  bool detect[kMaxObservedBodies] = {};  // look for conjunctions of this body
  double ephemeris_t0[kMaxObservedBodies] = {};
  double ephemeris_period[kMaxObservedBodies] = {};  // 0: number conjunctions from 0
  double star_radius = 0.0;                          // same length unit as positions; 0: no check
  double student_nu = 0.0;                           // 0: Gaussian transit-time likelihood

  double log_norm = 0.0;  // the parameter-independent terms of ln L (2 pi, transit errors)

  // Per system: [system * num_instruments + j].
  const double* offsets = nullptr;   // gamma_j - rv_centre[j] (ignored when marginalised)
  const double* jitters = nullptr;   // s_j, m/s
  double* log_likelihood = nullptr;  // [system], out
  double* rv_model = nullptr;        // [system * num_rv + k], out; null unless requested
  double* transit_model = nullptr;   // [system * num_transits + row], out; null unless requested
};

// The time of body i's conjunction in the lanes of `crossing`, from the stored state (b, w) of a
// step of length h whose planet-star vector is (x0, v0): its offset `delta` from the step's end,
// whether the search converged (false outside `crossing`), and the sky-plane separation^2 there.
//
// Newton on g = x . v (sky plane) with a local model of the motion: the two-body Taylor
// polynomial x(u) = x + v u + a u^2/2 + j u^3/6 about a state (a = -mu x / r^3 and its
// derivative j, mu = G (m0 + m_i); Danby 1988 sec. 6.9), whose root is found by three Newton
// steps on the polynomial, which costs no Kepler drift. First about the stored state: its
// root is within ~(n u)^4 / 24 / n of the true one (u <= h). Then about true states at that
// time (the scheme's dense output where it has one, Mvs::dense_relative, else sub-steps of the
// scheme), until the model's root is within `reach` of the state it was expanded about:
// there the model is off only by the perturbations' u^2 term, eps_p (n u)^2 / 2, and its
// truncation, (n u)^4 / 24, i.e. below ~1e-10 d for n u <= 3e-4 and eps_p <= 1e-3. So one
// true state (one Kepler drift per planet for MVS) usually does. Stopping on this coarse test
// rather than a fine one keeps CPU and GPU on the same number of states (a round-off flip of
// that decision would change ln L by more than its round-off).
template <template <int, class> class Scheme, int N, class T>
SWARMFIT_HD void transit_root(const Bodies<N, T>& b, const typename Scheme<N, T>::Work& w, const StepParams& p, T h,
                              int i, MaskOf<T> crossing, const T (&x0)[3], const T (&v0)[3], T& delta_out,
                              MaskOf<T>& converged_out, T& sky2_out) {
  using Mask = MaskOf<T>;
  const T mu = T(p.G) * (b.mass[0] + b.mass[i]);
  // The root's offset from the state (x, v) on its Taylor model, Newton from offset 0; `reach`
  // (out): how far the model may be trusted (3e-4 / n, n from this state's r). Three Newton
  // steps for a root up to a step away (n u ~ 0.3: error ~(n u)^8 / n after three); two about a
  // dense state, whose root is within ~reach unless another state follows anyway (n u <= 3e-4:
  // ~(n u)^4 / n, below 1e-15 d).
  auto model_root = [&](const T(&x)[3], const T(&v)[3], int iterations, T& sky2, T& reach) {
    const T r2 = x[0] * x[0] + x[1] * x[1] + x[2] * x[2];
    const T rinv = lane_rsqrt(r2);
    const T k = -mu * rinv * rinv * rinv;  // a = k x
    const T radial = 3.0 * (x[0] * v[0] + x[1] * v[1] + x[2] * v[2]) * rinv * rinv;
    T a[2], j[2];
    for (int d = 0; d < 2; ++d) {
      a[d] = k * x[d];
      j[d] = k * (v[d] - radial * x[d]);
    }
    T u = 0.0, xs[2] = {x[0], x[1]};
    SWARMFIT_ROLLED
    for (int iteration = 0; iteration < iterations; ++iteration) {
      T vs[2], as[2];
      for (int d = 0; d < 2; ++d) {
        xs[d] = x[d] + u * (v[d] + u * (0.5 * a[d] + u * ((1.0 / 6.0) * j[d])));
        vs[d] = v[d] + u * (a[d] + u * (0.5 * j[d]));
        as[d] = a[d] + u * j[d];
      }
      const T gg = xs[0] * vs[0] + xs[1] * vs[1];
      const T dg = vs[0] * vs[0] + vs[1] * vs[1] + xs[0] * as[0] + xs[1] * as[1];
      u = u - gg / dg;
    }
    sky2 = xs[0] * xs[0] + xs[1] * xs[1];
    reach = 3e-4 * lane_rsqrt(-k);  // 3e-4 / n
    return u;
  };
  // Only a conjunction whose epoch is observed needs its time, and the first one of each body,
  // whose time fixes the numbering; the others are counted by LikelihoodObserver::after_step
  // (skip) and do not come here (Kepler-9: 107 of its 155 conjunctions are observed).
  const Mask needed = crossing;
  // The stored state's positions are those of t_new - lag (MVS with the Kepler drift outermost).
  const T lag = Scheme<N, T>::observation_lag(w, p);
  T sky2 = 0.0, reach = 0.0;
  T delta = select(needed, model_root(x0, v0, 3, sky2, reach) - lag, T(0.0));
  // The root is at most ~h from the stored state (n h ~ 0.3 rad for steps of P/20).
  delta = lane_min(lane_max(delta, -2.0 * h), h);
  Mask converged = mask_not(needed);
  const bool dense = !all(converged) && use_dense_state<Scheme, N, T>(p);
  for (int iteration = 0; iteration < 8 && !all(converged); ++iteration) {
    T x[3] = {T(0.0), T(0.0), T(0.0)}, v[3] = {T(0.0), T(0.0), T(0.0)};
    relative_state_at_offset<Scheme, N, T>(b, w, p, dense, delta, i, x, v);
    T s2;
    const T change = model_root(x, v, 2, s2, reach);
    sky2 = select(converged, sky2, s2);
    delta = select(converged, delta, delta + change);
    // Keep the root near this step (a bad Newton step on a face-on orbit must not run away).
    delta = lane_min(lane_max(delta, -2.0 * h), h);
    converged = mask_or(converged, lane_abs(change) <= reach);
  }
  converged_out = mask_and(converged, needed);
  delta_out = delta;
  sky2_out = sky2;
}

// The observers' state that only the out-of-line (cold) functions touch: per-instrument sums,
// epochs, table rows. It stays in memory and LikelihoodObserver holds a reference to it. Handing
// the observer itself, or the integrator's state, to a function that is not inlined would keep
// them in (GPU local) memory for every step of the integration; so the cold functions are
// members of this record and get copies of the state they read.
template <int N, class T>
struct ObserverRecord {
  using L = LaneTraits<T>;
  using Mask = MaskOf<T>;

  const ObservationTables& tab;
  long first_system;           // the system in lane 0
  T rv_next;                   // index of the next RV observation
  T rv_next_time;              // its time (infinite when there is none)
  T sums[kMaxInstruments][3];  // per instrument: sum w, sum w r, sum w r^2 (w = 1 / (sigma^2 + s^2))
  T log_weight_sum;            // sum ln w, less ln variance_product
  T variance_product;          // product of sigma^2 + s^2 not yet in log_weight_sum
  T transit_sum;               // sum r^2 / sigma^2, or sum ln(1 + r^2 / (nu sigma^2))
  T epoch_next[N];             // epoch of the next conjunction; < -1e299 until the first one
  T row_next[N];
  // Conjunctions of body i still to come before its next observed epoch (already counted in
  // epoch_next): LikelihoodObserver::after_step counts them off without an out-of-line call.
  T skip[N];
  T status;

  SWARMFIT_HD ObserverRecord(const ObservationTables& tables, long first) : tab(tables), first_system(first) {
    rv_next = 0.0;
    rv_next_time = tab.num_rv > 0 ? tab.rv_time[0] : HUGE_VAL;
    for (int j = 0; j < kMaxInstruments; ++j) sums[j][0] = sums[j][1] = sums[j][2] = 0.0;
    log_weight_sum = 0.0;
    variance_product = 1.0;
    transit_sum = 0.0;
    status = 0.0;
    for (int i = 0; i < N; ++i) {
      epoch_next[i] = -1e300;
      row_next[i] = double(i < kMaxObservedBodies ? tab.transit_begin[i] : 0);
      skip[i] = 0.0;
    }
  }

  // Every lane may have several observations inside this step; each pass takes the next one.
  // The observations up to t_new + lag are taken now (the stored state of MVS with the Kepler
  // drift outermost is good until its next kick, half a step after t_new).
  template <template <int, class> class Scheme>
  SWARMFIT_HD_COLD void record_rv(const Bodies<N, T>& b, const typename Scheme<N, T>::Work& w, const StepParams& p,
                                  T t_new, Mask advanced) {
    const T t_last = t_new + Scheme<N, T>::observation_lag(w, p);
    // The tables' fields, read once (see conjunction()).
    const int num_rv = tab.num_rv, num_instruments = tab.num_instruments;
    const double *const times = tab.rv_time, *const values = tab.rv_value, *const errors = tab.rv_error;
    const int* const instruments = tab.rv_instrument;
    const double* const jitters = tab.jitters;
    double* const models = tab.rv_model;
    const double velocity_unit = tab.velocity_unit;
    for (int pass = 0; pass < num_rv; ++pass) {
      const Mask pending = mask_and(advanced, rv_next_time <= t_last);
      if (!any(pending)) return;
      const T delta = select(pending, rv_next_time - t_new, T(0.0));
      // Gather this observation's row per lane first: its loads are in flight while the model
      // is computed.
      T value = 0.0, variance = 1.0, instrument = -1.0, next_time = rv_next_time;
      for (int l = 0; l < L::width; ++l) {
        if (!L::mask_lane(pending, l)) continue;
        const int k = static_cast<int>(L::lane(rv_next, l));
        const long sys = first_system + l;
        const int j = instruments[k];
        const double v = values[k], error = errors[k];
        const double next = k + 1 < num_rv ? times[k + 1] : HUGE_VAL;
        const double jitter = jitters ? jitters[sys * num_instruments + j] : 0.0;
        L::set_lane(value, l, v);
        L::set_lane(variance, l, error * error + jitter * jitter);
        L::set_lane(instrument, l, j);
        L::set_lane(next_time, l, next);
      }
      const T model = -star_vz_at_offset<Scheme, N, T>(b, w, p, delta) * velocity_unit;
      if (models) {
        for (int l = 0; l < L::width; ++l)
          if (L::mask_lane(pending, l))
            models[(first_system + l) * num_rv + static_cast<int>(L::lane(rv_next, l))] = L::lane(model, l);
      }
      rv_next_time = next_time;
      rv_next = select(pending, rv_next + 1.0, rv_next);
      const T weight = 1.0 / variance;
      const T r = value - model;
      for (int j = 0; j < num_instruments; ++j) {
        const Mask mine = mask_and(pending, instrument == double(j));
        sums[j][0] = select(mine, sums[j][0] + weight, sums[j][0]);
        sums[j][1] = select(mine, sums[j][1] + weight * r, sums[j][1]);
        sums[j][2] = select(mine, sums[j][2] + weight * r * r, sums[j][2]);
      }
      // sum ln w = -ln prod(variance): a running product, folded into the sum before it can
      // overflow, costs one logarithm per ~40 observations instead of one each.
      variance_product = select(pending, variance_product * variance, variance_product);
      if (any(mask_or(variance_product > 1e200, variance_product < 1e-200))) fold_variance_product();
    }
  }

  // The rare work of one step (LikelihoodObserver::after_step): the RVs due, then the transits.
  // `parked`: the caller's loop state, parked in memory across this call (driver.hpp,
  // ParkedState), or null on the host.
  template <template <int, class> class Scheme>
  SWARMFIT_HD_COLD void observe(const Bodies<N, T>& b, const typename Scheme<N, T>::Work& w, const StepParams& p,
                                T t_new, T h, Mask advanced, Mask rv_due, const Mask (&crossing)[N], void* parked) {
    keep_parked(parked);
    if (any(rv_due)) record_rv<Scheme>(b, w, p, t_new, advanced);
    bool any_crossing = false;
    for (int i = 1; i < N && i < kMaxObservedBodies; ++i) any_crossing = any_crossing || any(crossing[i]);
    if (!any_crossing) return;  // an RV-only event needs no star-relative state
    T rp[N][3], rv[N][3];
    Scheme<N, T>::star_relative(b, w, p, rp, rv);
    for (int i = 1; i < N && i < kMaxObservedBodies; ++i) {
      if (!any(crossing[i])) continue;
      const T x0[3] = {rp[i][0], rp[i][1], rp[i][2]}, v0[3] = {rv[i][0], rv[i][1], rv[i][2]};
      refine_transit<Scheme>(b, w, p, t_new, h, i, crossing[i], x0, v0);
    }
  }

  SWARMFIT_HD_COLD void fold_variance_product() {
    for (int l = 0; l < L::width; ++l) {
      L::set_lane(log_weight_sum, l, L::lane(log_weight_sum, l) - portable_log(L::lane(variance_product, l)));
      L::set_lane(variance_product, l, 1.0);
    }
  }

  // The transit of body i in the lanes of `crossing`, from the stored state (b, w) at t_new whose
  // planet-star vector is (x0, v0): its time (transit_root) and its bookkeeping (conjunction).
  template <template <int, class> class Scheme>
  SWARMFIT_HD_COLD void refine_transit(const Bodies<N, T>& b, const typename Scheme<N, T>::Work& w, const StepParams& p,
                                       T t_new, T h, int i, Mask crossing, const T (&x0)[3], const T (&v0)[3]) {
    T delta, sky2;
    Mask converged;
    transit_root<Scheme, N, T>(b, w, p, h, i, crossing, x0, v0, delta, converged, sky2);
    for (int l = 0; l < L::width; ++l) {
      if (!L::mask_lane(crossing, l)) continue;
      const bool ok = L::mask_lane(converged, l);
      conjunction(l, i, L::lane(t_new, l) + L::lane(delta, l), is_transit(ok, L::lane(sky2, l)));
    }
  }

  // A converged conjunction whose sky-plane separation^2 is sky2 is a transit when it passes
  // within the star's radius (no radius: every one).
  SWARMFIT_HD bool is_transit(bool converged, double sky2) const {
    const double star_radius = tab.star_radius;
    return converged && (star_radius <= 0.0 || sky2 < star_radius * star_radius);
  }

  // A conjunction of body i at time t in lane l; `across` when it is a transit.
  SWARMFIT_HD_COLD void conjunction(int l, int i, double t, bool across) {
    // The tables' fields, read once: read through `tab` after one of this function's stores, each
    // was loaded again, three dependent loads (the reference kept in the record, the field, the
    // element), as the compiler cannot tell the record's stores from the tables.
    const double *const epochs = tab.transit_epoch, *const times = tab.transit_time, *const errors = tab.transit_error;
    double* const models = tab.transit_model;
    const int end = tab.transit_end[i], num_transits = tab.num_transits;
    const double nu = tab.student_nu;
    double epoch = L::lane(epoch_next[i], l);
    if (epoch < -1e299)
      epoch = tab.ephemeris_period[i] > 0.0 ? floor((t - tab.ephemeris_t0[i]) / tab.ephemeris_period[i] + 0.5) : 0.0;
    int row = static_cast<int>(L::lane(row_next[i], l));
    bool missed = false;
    while (row < end && epochs[row] < epoch) {  // observed, but no conjunction was found
      missed = true;
      ++row;
    }
    double sum = L::lane(transit_sum, l);
    while (row < end && epochs[row] == epoch) {
      if (across) {
        sum += transit_term((t - times[row]) / errors[row], nu);
        if (models) models[(first_system + l) * num_transits + row] = t;
      } else {
        missed = true;
      }
      ++row;
    }
    L::set_lane(transit_sum, l, sum);
    L::set_lane(row_next[i], l, row);
    // The conjunctions up to the next observed epoch need no time and no row: counted now, and
    // passed over by the hot loop (none at all after the last observed one).
    const double following = row < end ? epochs[row] : HUGE_VAL;
    L::set_lane(skip[i], l, following - (epoch + 1.0));
    L::set_lane(epoch_next[i], l, row < end ? following : epoch + 1.0);
    if (missed && L::lane(status, l) == 0.0) L::set_lane(status, l, kStatusMissedTransit);
  }

  // At the end: rows never reached are missed transits; writes ln L (or -inf) per system and
  // folds the observer's status into the clock's.
  SWARMFIT_HD_COLD void finish(T& clock_status) {
    fold_variance_product();
    for (int l = 0; l < L::width; ++l) {
      const long sys = first_system + l;
      int code = static_cast<int>(L::lane(clock_status, l));
      if (code == kStatusPadding) continue;
      if (code == kStatusOk) code = static_cast<int>(L::lane(status, l));
      for (int i = 1; i < N && i < kMaxObservedBodies; ++i)
        if (tab.detect[i] && static_cast<int>(L::lane(row_next[i], l)) < tab.transit_end[i] && code == kStatusOk)
          code = kStatusMissedTransit;
      if (code == kStatusOk && static_cast<int>(L::lane(rv_next, l)) < tab.num_rv) code = kStatusStepBudget;
      double lnl = tab.log_norm + rv_weights_term(L::lane(log_weight_sum, l));
      lnl += transit_sum_term(L::lane(transit_sum, l), tab.student_nu);
      for (int j = 0; j < tab.num_instruments; ++j) {
        const double sw = L::lane(sums[j][0], l), sr = L::lane(sums[j][1], l), srr = L::lane(sums[j][2], l);
        if (tab.marginalize_offsets) {
          lnl += rv_instrument_term(sw, sr, srr, 0.0, true);
        } else {
          const double gamma = tab.offsets ? tab.offsets[sys * tab.num_instruments + j] : 0.0;
          lnl += rv_instrument_term(sw, sr, srr, gamma, false);
        }
      }
      if (!(lnl - lnl == 0.0) && code == kStatusOk) code = kStatusNonFinite;
      L::set_lane(clock_status, l, code);
      if (tab.log_likelihood) tab.log_likelihood[sys] = code == kStatusOk ? lnl : -HUGE_VAL;
    }
  }
};

// The policy integrate_lanes() calls after every step: the hot part of the likelihood observers,
// a few values per lane that stay in registers (the next RV time, whether each planet's sky-plane
// r.v was negative at the last step: a predicate, not a double), and a reference to the record
// that the cold functions update. The observers' status changes only in the cold call, and goes
// to the driver's loop code there. Every register the hot loop holds counts: with more live state
// nvcc recomputed loop-invariant reciprocals of the masses at every step.
template <int N, class T>
struct LikelihoodObserver {
  static constexpr bool kActive = true;
  using Mask = MaskOf<T>;
  using Record = ObserverRecord<N, T>;

  Record& rec;
  T rv_next_time;
  Mask g_was_negative[N];
  bool detect[N];  // a copy in registers: the tables are in memory

  SWARMFIT_HD explicit LikelihoodObserver(Record& record) : rec(record), rv_next_time(record.rv_next_time) {
    for (int i = 0; i < N; ++i) {
      g_was_negative[i] = Mask(false);
      detect[i] = i > 0 && i < kMaxObservedBodies && record.tab.detect[i];
    }
  }

  template <template <int, class> class Scheme>
  SWARMFIT_HD void start(const Bodies<N, T>& b, const typename Scheme<N, T>::Work& w, const StepParams& p) {
    T rp[N][3], rv[N][3];
    Scheme<N, T>::star_relative(b, w, p, rp, rv);
    for (int i = 0; i < N; ++i)
      g_was_negative[i] = mask_and(rp[i][0] * rv[i][0] + rp[i][1] * rv[i][1] < 0.0, Mask(detect[i]));
  }

  // After a step of length h that moved the lanes in `advanced` to loop.clock.time; rp, rv: the
  // stored state relative to the star (as the monitors see it); loop: the driver's other loop
  // variables. The rare work goes to ONE out-of-line call per step at most, with what the loop
  // changes (positions, velocities, Work, loop variables, this observer's registers) parked in
  // memory on the GPU (driver.hpp, ParkedState).
  template <template <int, class> class Scheme, class Loop>
  SWARMFIT_HD void after_step(Bodies<N, T>& b, typename Scheme<N, T>::Work& w, const StepParams& p, T h, Mask advanced,
                              const T (&rp)[N][3], const T (&rv)[N][3], Loop& loop) {
    const T t_new = loop.clock.time;
    const Mask rv_due = mask_and(advanced, rv_next_time <= t_new + Scheme<N, T>::observation_lag(w, p));
    Mask event = rv_due;
    Mask crossing_now[N];  // registers; copied to memory only when there is an event
    crossing_now[0] = Mask(false);
    // Without branches: g is two products per planet, and a branch per planet (on `detect`, the
    // same in every lane) cost the loop its reconvergence barriers. One test of the lanes at the end.
    // g_was_negative stays false for a body without transit data (the `detect` of this and of
    // start()), and a lane that did not move (stopped, or its step rejected) has the g it had, so
    // it cannot cross: neither needs a mask of its own, and the star is not tested.
    SWARMFIT_UNROLL_BODIES(N)
    for (int i = 1; i < N; ++i) {
      const T g = rp[i][0] * rv[i][0] + rp[i][1] * rv[i][1];
      crossing_now[i] = mask_and(g_was_negative[i], mask_and(g >= 0.0, rp[i][2] > 0.0));
      g_was_negative[i] = mask_and(g < 0.0, Mask(detect[i]));
      event = mask_or(event, crossing_now[i]);
    }
    if (!any(event)) return;
    // A conjunction before the body's next observed epoch is only counted (ObserverRecord::skip,
    // in memory: read only here): no call for it. Kepler-9: 48 of its 155 conjunctions.
    {
      Mask crossings = Mask(false);
      SWARMFIT_UNROLL_BODIES(N)
      for (int i = 1; i < N; ++i) {
        if (!any(crossing_now[i])) continue;
        const T left = rec.skip[i];
        const Mask counted = mask_and(crossing_now[i], left > 0.5);
        rec.skip[i] = select(counted, left - 1.0, left);
        crossing_now[i] = mask_and(crossing_now[i], mask_not(counted));
        crossings = mask_or(crossings, crossing_now[i]);
      }
      event = mask_or(rv_due, crossings);
      if (!any(event)) return;
    }
    if constexpr (kParkAcrossCalls) {
      // The observer's own registers go with the parked state (driver.hpp, ParkedState).
      struct Registers {
        Mask g_was_negative[N];
        Mask crossing[N];
      };
      ParkedState<N, T, typename Scheme<N, T>::Work, Registers> parked;
      parked.park(b, w, loop);
      SWARMFIT_UNROLL_BODIES(N)
      for (int i = 0; i < N; ++i) {
        parked.extra.g_was_negative[i] = g_was_negative[i];
        parked.extra.crossing[i] = crossing_now[i];
      }
      rec.template observe<Scheme>(parked.b, parked.w, p, t_new, h, advanced, rv_due, parked.extra.crossing, &parked);
      SWARMFIT_UNROLL_BODIES(N)
      for (int i = 0; i < N; ++i) g_was_negative[i] = parked.extra.g_was_negative[i];
      parked.restore(b, w, loop);
      rv_next_time = rec.rv_next_time;
      // A system whose observations failed (missed transit) need not go on.
      loop.code = select(parked.loop.code == 0.0, rec.status, parked.loop.code);
    } else {
      rec.template observe<Scheme>(b, w, p, t_new, h, advanced, rv_due, crossing_now, nullptr);
      rv_next_time = rec.rv_next_time;
      loop.code = select(loop.code == 0.0, rec.status, loop.code);
    }
  }

  // At the end: the status to store (ln L is written to the tables).
  SWARMFIT_HD T finish(T clock_status) {
    T code = clock_status;
    rec.finish(code);
    return code;
  }
};

// The observation policy of the likelihood (integrators/observation.hpp): the record in memory,
// the observer's hot part in registers; ln L and the status folded in at the end.
struct LikelihoodObservation {
  using Params = ObservationTables;
  static constexpr int kMaxBodies = kMaxObservedBodies;
  static constexpr bool kThreadPerBodyKernels = false;  // the likelihood kernels: a thread per system
  template <int N, class T>
  using Record = ObserverRecord<N, T>;
  template <int N, class T>
  using Observer = LikelihoodObserver<N, T>;
};

// Many problems in one launch (the catalog's packing, likelihood_packing.hpp): the systems of
// several targets, each with its own tables, step and end time, laid out target after target,
// each from a chunk boundary so that a SIMD pack never mixes two. A system's integration and ln L
// are those of its own problem's launch: only where the tables and the run are read from differs.
struct PackedTables {
  const ObservationTables* tables = nullptr;  // [target]: its offsets, jitters and outputs from its first system
  const SystemRun* runs = nullptr;            // [target]
  const long* first_slot = nullptr;           // [target]: its first system's slot in the launch
  const int* target_of_chunk = nullptr;       // [chunk]
};

template <int N, class T>
struct PackedObserverRecord : ObserverRecord<N, T> {
  SWARMFIT_HD PackedObserverRecord(const PackedTables& p, long first)
      : ObserverRecord<N, T>(p.tables[p.target_of_chunk[first / kChunk]],
                             first - p.first_slot[p.target_of_chunk[first / kChunk]]) {}
};

struct PackedLikelihoodObservation {
  using Params = PackedTables;
  static constexpr int kMaxBodies = kMaxObservedBodies;
  static constexpr bool kThreadPerBodyKernels = false;
  static constexpr bool kPerSystemRuns = true;
  SWARMFIT_HD static const SystemRun& run_of(const PackedTables& p, long first) {
    return p.runs[p.target_of_chunk[first / kChunk]];
  }
  template <int N, class T>
  using Record = PackedObserverRecord<N, T>;
  template <int N, class T>
  using Observer = LikelihoodObserver<N, T>;
};

}  // namespace swarmfit
