// The integration loop of ONE system (or W systems in SIMD lanes), shared by every backend:
// step with the chosen scheme until the destination time, checking the monitors after each
// step. A lane that stops keeps its status code and the time it stopped; the others go on.
#pragma once

#include "swarmfit/integrators/gravity.hpp"
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

// Monitors (Swarm-NG sec. 3.3 "monitors"). Each test is a function of one body or one pair, so
// that the loop over a whole system (monitor_status) and the CUDA kernels that give each body a
// thread (each testing its own share, then combining flags with status_from_flags) apply the
// same arithmetic and the same precedence: non-finite > collision > close encounter > ejection.
enum MonitorFlag : unsigned { kFlagEjected = 1u, kFlagCloseEncounter = 2u, kFlagCollision = 4u, kFlagNonFinite = 8u };
SWARMFIT_HD double status_from_flags(unsigned flags) {
  return (flags & kFlagNonFinite)        ? kStatusNonFinite
         : (flags & kFlagCollision)      ? kStatusCollision
         : (flags & kFlagCloseEncounter) ? kStatusCloseEncounter
         : (flags & kFlagEjected)        ? kStatusEjected
                                         : kStatusOk;
}

// A planet at star distance^2 r2, relative velocity rv, on an outgoing unbound two-body orbit.
template <class T>
SWARMFIT_HD MaskOf<T> unbound_outgoing(const T (&rp)[3], const T (&rv)[3], T r2, T m0, T mi, double G) {
  const T v2 = rv[0] * rv[0] + rv[1] * rv[1] + rv[2] * rv[2];
  const T rdotv = rp[0] * rv[0] + rp[1] * rv[1] + rp[2] * rv[2];
  const T energy = 0.5 * v2 - G * (m0 + mi) / lane_sqrt(r2);
  return mask_and(energy > 0.0, rdotv > 0.0);
}

// Planets i and j (separation^2 d2, star distances^2 r2i, r2j) closer than k mutual Hill radii:
//   |x_i - x_j| < k R_H,  R_H = ((m_i + m_j) / 3 m0)^(1/3) rbar,  rbar^2 = (r_i^2 + r_j^2) / 2,
// compared without square or cube roots as 9 m0^2 |x_i - x_j|^6 < k^6 (m_i + m_j)^2 rbar^6.
template <class T>
SWARMFIT_HD MaskOf<T> within_hill(T d2, T r2i, T r2j, T mi, T mj, T nine_m0_squared, double k6) {
  const T pair_mass = mi + mj;
  const T rbar2 = 0.5 * (r2i + r2j);
  return nine_m0_squared * d2 * d2 * d2 < k6 * pair_mass * pair_mass * rbar2 * rbar2 * rbar2;
}

// Bodies i and j (separation^2 d2) touching.
template <class T>
SWARMFIT_HD MaskOf<T> touching(T d2, T radius_i, T radius_j) {
  const T touch = radius_i + radius_j;
  return d2 < touch * touch;
}

template <class T>
SWARMFIT_HD T distance2(const T (&a)[3], const T (&b)[3]) {
  const T dx = b[0] - a[0], dy = b[1] - a[1], dz = b[2] - a[2];
  return dx * dx + dy * dy + dz * dz;
}

// The monitors of one system (or of W systems in SIMD lanes): a status code per lane, 0 where all
// is well. Non-finite states are caught on the planets' distances from the star: every scheme
// moves the positions with the velocities, so a NaN or infinite velocity reaches them within one
// step, and a check of the velocities too would cost the hot loop a sum over all of them.
template <int N, class T>
SWARMFIT_HD T monitor_status(const T (&rp)[N][3], const T (&rv)[N][3], const T (&mass)[N], const T (&radius)[N],
                             const MonitorParams& m, double G) {
  T code = 0.0;
  T r2[N];
  SWARMFIT_UNROLL_BODIES(N)
  for (int i = 1; i < N; ++i) r2[i] = rp[i][0] * rp[i][0] + rp[i][1] * rp[i][1] + rp[i][2] * rp[i][2];
  T sum = r2[1];
  SWARMFIT_UNROLL_BODIES(N)
  for (int i = 2; i < N; ++i) sum += r2[i];
  if (m.rmax > 0.0) {
    const double rmax2 = m.rmax * m.rmax;
    SWARMFIT_UNROLL_BODIES(N)
    for (int i = 1; i < N; ++i) code = select(r2[i] > rmax2, T(kStatusEjected), code);
  }
  if (m.stop_on_unbound) {
    SWARMFIT_UNROLL_BODIES(N)
    for (int i = 1; i < N; ++i)
      code = select(unbound_outgoing(rp[i], rv[i], r2[i], mass[0], mass[i], G), T(kStatusEjected), code);
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
        code = select(within_hill(distance2(rp[i], rp[j]), r2[i], r2[j], mass[i], mass[j], nine_m0_squared, k6),
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
        code = select(touching(distance2(rp[i], rp[j]), radius[i], radius[j]), T(kStatusCollision), code);
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
// out-of-line call can park them in memory and take them back afterwards (ParkedState): nothing
// is then live across the call, and the hot loop keeps the register allocation of the plain
// kernel. Without an event the struct lives in registers.
template <int N, class T>
struct LoopState {
  Clock<T> clock;
  T h_next;
  T step_limit;  // clock.steps at which this call's budget (max_steps) runs out; a rejected step lowers it
  T code;
  T time_carry;  // the clock's compensation (Kahan 1965): what its sums of steps lost to rounding
  MaskOf<T> active;
};

// The observer the driver calls when nothing is observed: compiles to nothing. An observer is an
// object with kActive = true and, for the scheme in use,
//   start<Scheme>(b, w, p)                                  before the first step;
//   after_step<Scheme>(b, w, p, h, advanced, rp, rv, loop)  after every step, with the state
//     relative to the star (rp, rv, as the monitors see it) and the driver's LoopState, whose
//     `code` it may set to stop a lane;
// observation.hpp says how a backend runs one (an observation policy).
struct NoObserver {
  static constexpr bool kActive = false;
};

// An observer's rare out-of-line work (an event) with the loop state parked in memory. On the
// GPU, whatever is live across a call that is not inlined competes for the hot loop's registers
// (the likelihood kernel spilled inside the loop). So the observer copies the state into a ParkedState, hands the
// copies (and the ParkedState's address, for keep_parked) to its out-of-line function, and restores them after the
// call: nothing but loop invariants is live across it. `Extra` holds the observer's own registers. The masses are not
// restored: reloaded after a call they would no longer be loop invariants, and everything derived from them (mu, mass
// ratios: divisions) would be recomputed at every step. On the host the compiler keeps registers across calls itself:
// kParkAcrossCalls is false there and observers call directly.
#if defined(__CUDA_ARCH__)
constexpr bool kParkAcrossCalls = true;
#else
constexpr bool kParkAcrossCalls = false;
#endif

// The observer fills `extra` itself and takes back what it needs of it; restore() brings back the
// positions, velocities, Work and loop variables, all but the loop's `code`, which the observer
// combines with its own status.
template <int N, class T, class Work, class Extra>
struct ParkedState {
  Bodies<N, T> b;
  Work w;
  LoopState<N, T> loop;
  Extra extra;
  SWARMFIT_HD void park(const Bodies<N, T>& b0, const Work& w0, const LoopState<N, T>& loop0) {
    b = b0;
    w = w0;
    loop = loop0;
  }
  SWARMFIT_HD void restore(Bodies<N, T>& b0, Work& w0, LoopState<N, T>& loop0) const {
    SWARMFIT_UNROLL_BODIES(N)
    for (int i = 0; i < N; ++i) {
      SWARMFIT_UNROLL
      for (int d = 0; d < 3; ++d) {
        b0.pos[i][d] = b.pos[i][d];
        b0.vel[i][d] = b.vel[i][d];
      }
    }
    w0 = w;
    loop0.clock = loop.clock;
    loop0.h_next = loop.h_next;
    loop0.step_limit = loop.step_limit;
    loop0.time_carry = loop.time_carry;
    loop0.active = loop.active;
  }
};

// Called first by the out-of-line function that receives a ParkedState's address: the empty asm
// with a memory clobber keeps the compiler from proving that the call leaves the parked state
// alone (it would then keep it in registers across the call again).
SWARMFIT_HD void keep_parked(void* parked) {
#if defined(__CUDA_ARCH__)
  asm volatile("" : : "l"(parked) : "memory");
#else
  (void)parked;
#endif
}

// The driver's bookkeeping of one step, shared by integrate_lanes and the CUDA kernels that give
// each body a thread. The step to take: the scheme's next step, or what is left to t_end when the
// step would land within 1e-12 of it (it then lands on it exactly).
template <int N, class T>
SWARMFIT_HD T step_to_take(const LoopState<N, T>& ls, double t_end, MaskOf<T>& last) {
  // ls.clock.time - ls.time_carry is the compensated sum of the steps taken: the last step ends
  // the integration at t_end, not at t_end plus the clock's rounding.
  const T remaining = (t_end - ls.clock.time) + ls.time_carry;
  last = ls.h_next >= remaining * (1.0 - 1e-12);
  return select(last, remaining, ls.h_next);
}

// Moves the clock of the active lanes whose step was accepted; returns the lanes whose step could
// not move the clock (zero, NaN, or below its resolution: they would loop forever).
template <int N, class T>
SWARMFIT_HD MaskOf<T> advance_clock(LoopState<N, T>& ls, T h, MaskOf<T> last, MaskOf<T> accepted, double t_end) {
  const MaskOf<T> stalled = mask_and(ls.active, mask_not(ls.clock.time + h > ls.clock.time));
  const MaskOf<T> advanced = mask_and(ls.active, accepted);
  // Compensated summation of the steps (Kahan 1965; Higham 2002, sec. 4.3): over 1e9 orbits of
  // 20 steps the plain sum's rounding would drift the clock by ~1e-6 of its value; this keeps it
  // to a few ulps within a call (each call ends on t_end exactly).
  const T y = h - ls.time_carry;
  const T t_new = ls.clock.time + y;
  ls.time_carry = select(advanced, (t_new - ls.clock.time) - y, ls.time_carry);
  ls.clock.time = select(advanced, select(last, T(t_end), t_new), ls.clock.time);
  ls.clock.steps = select(advanced, ls.clock.steps + 1.0, ls.clock.steps);
  // A rejected attempt (adaptive schemes) costs what an accepted step does, so max_steps bounds
  // the work of a call, not only its accepted steps: a lane whose steps keep failing stops with
  // kStatusStepBudget instead of running on. Fixed-step schemes accept every step (no change).
  ls.step_limit = select(mask_and(ls.active, mask_not(accepted)), ls.step_limit - 1.0, ls.step_limit);
  return stalled;
}

// After the monitors: the active lanes take ls.code as their status; a lane stays active while
// its status is 0, its time short of t_end and its step budget not spent.
template <int N, class T>
SWARMFIT_HD void settle_status(LoopState<N, T>& ls, double t_end, const MonitorParams& m) {
  using Mask = MaskOf<T>;
  ls.clock.status = select(ls.active, ls.code, ls.clock.status);
  ls.active = mask_and(ls.active, mask_and(ls.clock.status == 0.0, ls.clock.time < t_end));
  if (m.max_steps > 0.0) {
    const Mask out_of_budget = mask_and(ls.active, ls.clock.steps >= ls.step_limit);
    ls.clock.status = select(out_of_budget, T(kStatusStepBudget), ls.clock.status);
    ls.active = mask_and(ls.active, mask_not(out_of_budget));
  }
}

// `observer` (NoObserver above says what one is), when given, sees every step of every lane.
template <template <int, class> class Scheme, int N, class T, class Observer = NoObserver>
SWARMFIT_HD SWARMFIT_FLATTEN void integrate_lanes(Bodies<N, T>& b, const T (&radius)[N], Clock<T>& clock, double t_end,
                                                  const StepParams& p, const MonitorParams& m,
                                                  Observer* observer = nullptr) {
  using S = Scheme<N, T>;
  using Mask = MaskOf<T>;
  constexpr bool kLanes = LaneTraits<T>::width > 1;
  LoopState<N, T> ls;
  ls.clock = clock;
  ls.time_carry = 0.0;
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
  ls.step_limit = clock.steps + m.max_steps;
  while (any(ls.active)) {
    Mask last;
    const T h = step_to_take(ls, t_end, last);
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
    const Mask advanced = mask_and(ls.active, accepted);
    const Mask stalled = advance_clock(ls, h, last, accepted, t_end);

    T rp[N][3], rv[N][3];
    S::star_relative(b, w, p, rp, rv);
    ls.code = monitor_status<N>(rp, rv, b.mass, radius, m, p.G);
    ls.code = select(ok, ls.code, T(kStatusKeplerFailure));
    ls.code = select(stalled, T(kStatusStepUnderflow), ls.code);
    if constexpr (Observer::kActive) {
      observer->template after_step<Scheme>(b, w, p, h, advanced, rp, rv, ls);  // may set ls.code
    }
    settle_status(ls, t_end, m);
  }
  S::end(b, w, p);
  if constexpr (kLanes) blend_lanes<Bodies<N, T>, T>(b, b_start, started);
  clock = ls.clock;
  clock.time_step = p.adaptive ? ls.h_next : T(p.time_step);
}

}  // namespace swarmfit
