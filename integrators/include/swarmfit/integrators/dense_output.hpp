// Dense output: the state of a system at a time inside the step just taken, for observers
// (RVs at observation times, event searches such as transits). Physics only: a sub-step of the
// scheme itself from the stored state, or the scheme's own dense output where it has one
// (Mvs::dense_star_vz, Mvs::dense_relative: Kepler drifts instead of a whole sub-step).
#pragma once

#include <type_traits>

#include "swarmfit/integrators/gravity.hpp"
#include "swarmfit/integrators/kepler.hpp"
#include "swarmfit/integrators/parameters.hpp"

namespace swarmfit {

// The inertial state of a system `delta` after the current time (delta may be negative): one
// sub-step of the scheme itself from the stored state, on a copy, then the scheme's end() (for MVS
// the pending half operator merges with the sub-step, so this is exactly "close the step, then
// step by delta"). Symplectic correctors are not applied to these states (as in TTVFast): the
// mapping trajectory started from corrected initial conditions already has the right
// frequencies, and correcting every observation would cost more than the integration.
template <template <int, class> class Scheme, int N, class T>
SWARMFIT_HD_COLD void state_at_offset(const Bodies<N, T>& b, const typename Scheme<N, T>::Work& w, const StepParams& p,
                                      T delta, Bodies<N, T>& out) {
  using S = Scheme<N, T>;
  StepParams fixed = p;
  fixed.adaptive = false;
  fixed.mvs_corrector = 0;
  out = b;
  typename S::Work work = w;
  // The planned step, which adaptive schemes read on entry: unbounded, so that this step counts
  // as one shortened to land on its time and is taken whole (hermite_symmetric_step).
  T h_next = HUGE_VAL;
  MaskOf<T> accepted;
  S::step(out, work, delta, fixed, h_next, accepted);
  S::end(out, work, fixed);
}

// The star's barycentric v_z at t_new + delta: the scheme's dense output where it has one,
// otherwise a sub-step (state_at_offset). SWARMFIT_HD, so that an observer's cold function can
// inline it after issuing its own loads.
template <class S, class = void>
struct HasDenseStarVz : std::false_type {};
template <class S>
struct HasDenseStarVz<S, std::void_t<decltype(&S::dense_star_vz)>> : std::true_type {};

template <template <int, class> class Scheme, int N, class T>
SWARMFIT_HD T star_vz_at_offset(const Bodies<N, T>& b, const typename Scheme<N, T>::Work& w, const StepParams& p,
                                T delta) {
  if constexpr (HasDenseStarVz<Scheme<N, T>>::value) {
    if (Scheme<N, T>::dense_observations(p)) return Scheme<N, T>::dense_star_vz(b, w, p, delta);
  }
  Bodies<N, T> now;
  state_at_offset<Scheme, N, T>(b, w, p, delta, now);
  return now.vel[0][2];
}

// The scheme's dense output of a planet's star-relative state where it has one
// (Mvs::dense_relative), for event searches such as transits: each state costs a Kepler drift of
// the planets up to that one.
template <class S, class = void>
struct HasDenseState : std::false_type {};
template <class S>
struct HasDenseState<S, std::void_t<decltype(&S::dense_states)>> : std::true_type {};

template <template <int, class> class Scheme, int N, class T>
SWARMFIT_HD bool use_dense_state(const StepParams& p) {
  if constexpr (HasDenseState<Scheme<N, T>>::value) return Scheme<N, T>::dense_states(p);
  (void)p;
  return false;
}

// f(std::integral_constant<int, i>) for a runtime index First <= i < N.
template <int N, int First, class F>
SWARMFIT_HD void dispatch_body(int i, F&& f) {
  if constexpr (First < N) {
    if (i == First) {
      f(std::integral_constant<int, First>{});
    } else {
      dispatch_body<N, First + 1>(i, f);
    }
  }
}

// Planet i's position and velocity relative to the star at t_new + delta (dense output where the
// scheme has it and `dense`, else a sub-step): the state an event search (a transit) refines on.
template <template <int, class> class Scheme, int N, class T>
SWARMFIT_HD void relative_state_at_offset(const Bodies<N, T>& b, const typename Scheme<N, T>::Work& w,
                                          const StepParams& p, bool dense, T delta, int i, T (&x)[3], T (&v)[3]) {
  if constexpr (HasDenseState<Scheme<N, T>>::value) {
    if (dense) {
      // With the planet's index known at compile time (one copy per planet): as a runtime bound of
      // the Kepler drifts' loop it cost the caller's hot loop registers (spills).
      dispatch_body<N, 1>(
          i, [&](auto k) { Scheme<N, T>::template dense_relative<decltype(k)::value>(b, w, delta, x, v); });
      return;
    }
  }
  (void)dense;
  Bodies<N, T> now;
  state_at_offset<Scheme, N, T>(b, w, p, delta, now);
  // Body i picked with compile-time indices: a runtime index would put `now`, and the whole
  // sub-step, in GPU local memory.
  SWARMFIT_UNROLL_BODIES(N)
  for (int k = 1; k < N; ++k) {
    if (k != i) continue;
    for (int d = 0; d < 3; ++d) {
      x[d] = now.pos[k][d] - now.pos[0][d];
      v[d] = now.vel[k][d] - now.vel[0][d];
    }
  }
}

}  // namespace swarmfit
