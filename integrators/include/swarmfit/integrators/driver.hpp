// The integration loop of ONE system (or W systems in SIMD lanes), shared by every backend:
// step with the chosen scheme until the destination time, checking the monitors after each
// step. A lane that stops keeps its status code and the time it stopped; the others go on.
#pragma once

#include "swarmfit/integrators/gravity.hpp"
#include "swarmfit/integrators/observers.hpp"
#include "swarmfit/integrators/parameters.hpp"

namespace swarmfit {

// Per-lane bookkeeping that lives in the ensemble between calls.
template <class T>
struct Clock {
  T time;       // current time of the system
  T time_step;  // next step (adaptive schemes carry it between calls); <= 0: let the scheme choose
  T status;     // StatusCode (exact small integers)
  T steps;      // accepted steps so far
};

// Monitors (Swarm-NG sec. 3.3 "monitors"): returns a status code per lane, 0 where all is well.
// Every test avoids square roots and cube roots: the Hill criterion
//   |x_i - x_j| < k R_H,  R_H = ((m_i + m_j) / 3 m0)^(1/3) rbar,  rbar^2 = (r_i^2 + r_j^2) / 2
// is compared as 9 m0^2 |x_i - x_j|^6 < k^6 (m_i + m_j)^2 rbar^6.
template <int N, class T>
SWARMFIT_HD T monitor_status(const T (&rp)[N][3], const T (&rv)[N][3], const T (&mass)[N], const T (&radius)[N],
                             const MonitorParams& m, double G) {
  T code = 0.0;
  T r2[N];
  T sum = 0.0;
  SWARMFIT_UNROLL_BODIES(N)
  for (int i = 0; i < N; ++i) {
    r2[i] = rp[i][0] * rp[i][0] + rp[i][1] * rp[i][1] + rp[i][2] * rp[i][2];
    sum += r2[i] + (rv[i][0] + rv[i][1] + rv[i][2]);
  }
  if (m.rmax > 0.0) {
    const double rmax2 = m.rmax * m.rmax;
    SWARMFIT_UNROLL_BODIES(N)
    for (int i = 1; i < N; ++i) code = select(r2[i] > rmax2, T(kStatusEjected), code);
  }
  if (m.stop_on_unbound) {
    SWARMFIT_UNROLL_BODIES(N)
    for (int i = 1; i < N; ++i) {
      const T v2 = rv[i][0] * rv[i][0] + rv[i][1] * rv[i][1] + rv[i][2] * rv[i][2];
      const T rdotv = rp[i][0] * rv[i][0] + rp[i][1] * rv[i][1] + rp[i][2] * rv[i][2];
      const T energy = 0.5 * v2 - G * (mass[0] + mass[i]) / lane_sqrt(r2[i]);
      code = select(mask_and(energy > 0.0, rdotv > 0.0), T(kStatusEjected), code);
    }
  }
  if (m.close_approach > 0.0) {
    const double k2 = m.close_approach * m.close_approach;
    const double k6 = k2 * k2 * k2;
    const T nine_m0_squared = 9.0 * mass[0] * mass[0];
    SWARMFIT_UNROLL_BODIES(N)
    for (int i = 1; i < N; ++i) {
      SWARMFIT_UNROLL_BODIES(N)
      for (int j = 0; j < N; ++j) {
        if (j <= i) continue;
        const T dx = rp[j][0] - rp[i][0], dy = rp[j][1] - rp[i][1], dz = rp[j][2] - rp[i][2];
        const T d2 = dx * dx + dy * dy + dz * dz;
        // (m_i + m_j) / 3 m0 squared, with the 9 m0^2 moved to the left (no division per pair).
        const T pair_mass = mass[i] + mass[j];
        const T rbar2 = 0.5 * (r2[i] + r2[j]);
        code = select(nine_m0_squared * d2 * d2 * d2 < k6 * pair_mass * pair_mass * rbar2 * rbar2 * rbar2,
                      T(kStatusCloseEncounter), code);
      }
    }
  }
  if (m.collisions) {
    SWARMFIT_UNROLL_BODIES(N)
    for (int i = 0; i < N; ++i) {
      SWARMFIT_UNROLL_BODIES(N)
      for (int j = 0; j < N; ++j) {
        if (j <= i) continue;
        const T dx = rp[j][0] - rp[i][0], dy = rp[j][1] - rp[i][1], dz = rp[j][2] - rp[i][2];
        const T touch = radius[i] + radius[j];
        code = select(dx * dx + dy * dy + dz * dz < touch * touch, T(kStatusCollision), code);
      }
    }
  }
  code = select(lane_isfinite(sum), code, T(kStatusNonFinite));
  return code;
}

// Replace the lanes of dst outside `keep_new` by old (SIMD lanes only; a scalar lane that is
// inactive has already left the loop). Bodies and Work hold only lane-type members.
template <class S, class T>
SWARMFIT_HD void blend_lanes(S& dst, const S& old, MaskOf<T> keep_new) {
  T* d = reinterpret_cast<T*>(&dst);
  const T* o = reinterpret_cast<const T*>(&old);
  for (unsigned k = 0; k < sizeof(S) / sizeof(T); ++k) d[k] = select(keep_new, d[k], o[k]);
}

// The driver's loop variables. With observers they are held together so that an observer's rare
// out-of-line call can park them in memory and take them back afterwards (LikelihoodObserver::
// after_step): nothing is then live across the call, and the hot loop keeps the register
// allocation of the plain kernel. Without an event the struct lives in registers.
template <int N, class T>
struct LoopState {
  Clock<T> clock;
  T h_next;
  T steps_this_call;
  T code;
  MaskOf<T> active;
};

// `observer` (observers.hpp), when given, sees every accepted step of every lane.
template <template <int, class> class Scheme, int N, class T, class Observer = NoObserver>
SWARMFIT_HD void integrate_lanes(Bodies<N, T>& b, const T (&radius)[N], Clock<T>& clock, double t_end,
                                 const StepParams& p, const MonitorParams& m, Observer* observer = nullptr) {
  using S = Scheme<N, T>;
  using Mask = MaskOf<T>;
  constexpr bool kLanes = LaneTraits<T>::width > 1;
  LoopState<N, T> ls;
  ls.clock = clock;
  ls.active = mask_and(clock.status == 0.0, clock.time < t_end);
  if (!any(ls.active)) return;
  // Lanes that do not run this call must come back bitwise unchanged (MVS changes coordinates).
  Bodies<N, T> b_start;
  if constexpr (kLanes) b_start = b;
  const Mask started = ls.active;
  typename S::Work w;
  S::begin(b, w, p, ls.h_next);
  if (p.adaptive) ls.h_next = select(clock.time_step > 0.0, clock.time_step, ls.h_next);
  if constexpr (Observer::kActive) observer->template start<Scheme>(b, w, p);
  ls.steps_this_call = 0.0;
  while (any(ls.active)) {
    const T remaining = t_end - ls.clock.time;
    // A step that would land within 1e-12 of the destination lands on it exactly.
    const Mask last = ls.h_next >= remaining * (1.0 - 1e-12);
    const T h = select(last, remaining, ls.h_next);
    Bodies<N, T> b_old;
    typename S::Work w_old;
    T h_old = ls.h_next;
    if constexpr (kLanes) {
      b_old = b;
      w_old = w;
    }
    Mask accepted;
    const Mask ok = S::step(b, w, h, p, ls.h_next, accepted);
    if constexpr (kLanes) {
      blend_lanes<Bodies<N, T>, T>(b, b_old, ls.active);
      blend_lanes<typename S::Work, T>(w, w_old, ls.active);
      ls.h_next = select(ls.active, ls.h_next, h_old);
    }
    // A step that cannot move the clock (zero, NaN, or below its resolution) would loop forever.
    const Mask stalled = mask_and(ls.active, mask_not(ls.clock.time + h > ls.clock.time));
    const Mask advanced = mask_and(ls.active, accepted);
    ls.clock.time = select(advanced, select(last, T(t_end), ls.clock.time + h), ls.clock.time);
    ls.clock.steps = select(advanced, ls.clock.steps + 1.0, ls.clock.steps);
    ls.steps_this_call = select(advanced, ls.steps_this_call + 1.0, ls.steps_this_call);

    T rp[N][3], rv[N][3];
    S::star_relative(b, w, p, rp, rv);
    ls.code = monitor_status<N>(rp, rv, b.mass, radius, m, p.G);
    ls.code = select(ok, ls.code, T(kStatusKeplerFailure));
    ls.code = select(stalled, T(kStatusStepUnderflow), ls.code);
    if constexpr (Observer::kActive) {
      observer->template after_step<Scheme>(b, w, p, h, advanced, rp, rv, ls);
      // A system whose observations already failed (missed transit) need not go on.
      ls.code = select(ls.code == 0.0, observer->status, ls.code);
    }
    ls.clock.status = select(ls.active, ls.code, ls.clock.status);
    ls.active = mask_and(ls.active, mask_and(ls.clock.status == 0.0, ls.clock.time < t_end));
    if (m.max_steps > 0.0) {
      const Mask out_of_budget = mask_and(ls.active, ls.steps_this_call >= m.max_steps);
      ls.clock.status = select(out_of_budget, T(kStatusStepBudget), ls.clock.status);
      ls.active = mask_and(ls.active, mask_not(out_of_budget));
    }
  }
  S::end(b, w, p);
  if constexpr (kLanes) blend_lanes<Bodies<N, T>, T>(b, b_start, started);
  clock = ls.clock;
  clock.time_step = p.adaptive ? ls.h_next : T(p.time_step);
}

}  // namespace swarmfit
