// Observation policies: how a backend runs an integration with an observer plugged in. The
// engines know no data and no likelihood: the CPU and CUDA backends (cpu_kernels.hpp,
// cuda_kernels.cuh) are templates over a policy P, which provides
//   P::Params                plain values passed by value into kernels (tables, pointers to
//                            per-system outputs in the backend's memory);
//   P::kMaxBodies            the most bodies per system it supports;
//   P::kThreadPerBodyKernels whether the CUDA backend may run it a thread per body;
//   P::Record<N, T>          the observer's state that stays in memory, built from
//                            (params, the first system of the lanes);
//   P::Observer<N, T>        the observer the driver calls (driver.hpp, NoObserver), built from
//                            the record and kept in registers; its finish(status) returns the
//                            status to store;
//   P::kVariational          (optional, false if absent) whether the systems are integrated on
//                            tangent lanes Dual<T> (dual.hpp): the record's seed(b) sets the
//                            tangent of the loaded state and keep(b) takes it back after the run,
//                            and the observer sees Bodies<N, Dual<T>>;
//   P::kPerSystemRuns        (optional, false if absent) whether the systems of one launch belong
//                            to different problems, each with its own step, monitors and end time
//                            (a catalog's targets packed into one launch): P::run_of(params,
//                            first_system) gives the SystemRun (in the backend's memory) of the
//                            lanes from first_system, which replaces the request's; the lanes of
//                            one SIMD pack must share it.
// observe_lanes() below is what a backend runs for one system (or the SIMD lanes of several); the
// CUDA kernel spells it out (cuda_kernels.cuh says why). Unobserved is the engine's own; models/
// instantiates the backends for the likelihood's.
#pragma once

#include <type_traits>

#include "swarmfit/integrators/driver.hpp"
#include "swarmfit/integrators/dual.hpp"
#include "swarmfit/integrators/ensemble.hpp"

namespace swarmfit {

struct Unobserved {
  struct Params {};
  static constexpr int kMaxBodies = swarmfit::kMaxBodies;
  static constexpr bool kThreadPerBodyKernels = true;
  template <int N, class T>
  struct Record {
    SWARMFIT_HD Record(const Params&, long) {}
  };
  template <int N, class T>
  using Observer = NoObserver;
};

// A problem's own run inside a packed launch (kPerSystemRuns above).
struct SystemRun {
  StepParams step;
  MonitorParams monitors;
  double t_end = 0.0;
};

template <class P, class = void>
struct HasPerSystemRuns : std::false_type {};
template <class P>
struct HasPerSystemRuns<P, typename std::enable_if<P::kPerSystemRuns>::type> : std::true_type {};

template <class P, class = void>
struct IsVariational : std::false_type {};
template <class P>
struct IsVariational<P, typename std::enable_if<P::kVariational>::type> : std::true_type {};

// The loaded state on tangent lanes (tangent zero), and back (values only).
template <int N, class T>
SWARMFIT_HD void to_tangent_lanes(const Bodies<N, T>& b, const T (&radius)[N], const Clock<T>& clock,
                                  Bodies<N, Dual<T>>& bd, Dual<T> (&rd)[N], Clock<Dual<T>>& cd) {
  for (int i = 0; i < N; ++i) {
    for (int d = 0; d < 3; ++d) {
      bd.pos[i][d] = Dual<T>(b.pos[i][d], T(0.0));
      bd.vel[i][d] = Dual<T>(b.vel[i][d], T(0.0));
    }
    bd.mass[i] = Dual<T>(b.mass[i], T(0.0));
    rd[i] = Dual<T>(radius[i], T(0.0));
  }
  cd.time = Dual<T>(clock.time, T(0.0));
  cd.time_step = Dual<T>(clock.time_step, T(0.0));
  cd.status = Dual<T>(clock.status, T(0.0));
  cd.steps = Dual<T>(clock.steps, T(0.0));
}
template <int N, class T>
SWARMFIT_HD void from_tangent_lanes(const Bodies<N, Dual<T>>& bd, const Clock<Dual<T>>& cd, Bodies<N, T>& b,
                                    Clock<T>& clock) {
  for (int i = 0; i < N; ++i)
    for (int d = 0; d < 3; ++d) {
      b.pos[i][d] = bd.pos[i][d].v;
      b.vel[i][d] = bd.vel[i][d].v;
    }
  clock.time = cd.time.v;
  clock.time_step = cd.time_step.v;
  clock.status = cd.status.v;
  clock.steps = cd.steps.v;
}

// One system (or the SIMD lanes of systems first_system, ...) to t_end with the policy's observer.
template <class Observation, template <int, class> class Scheme, int N, class T>
SWARMFIT_HD void observe_lanes(const typename Observation::Params& params, long first_system, Bodies<N, T>& b,
                               const T (&radius)[N], Clock<T>& clock, double t_end, const StepParams& p,
                               const MonitorParams& m) {
  using Observer = typename Observation::template Observer<N, T>;
  if constexpr (IsVariational<Observation>::value) {
    using D = Dual<T>;
    typename Observation::template Record<N, T> record(params, first_system);
    Bodies<N, D> bd;
    D rd[N];
    Clock<D> cd;
    to_tangent_lanes<N, T>(b, radius, clock, bd, rd, cd);
    record.seed(bd);
    Observer observer(record);
    integrate_lanes<Scheme, N, D>(bd, rd, cd, t_end, p, m, &observer);
    record.keep(bd);
    from_tangent_lanes<N, T>(bd, cd, b, clock);
    clock.status = observer.finish(clock.status);
  } else if constexpr (Observer::kActive) {
    typename Observation::template Record<N, T> record(params, first_system);
    Observer observer(record);
    integrate_lanes<Scheme, N, T>(b, radius, clock, t_end, p, m, &observer);
    clock.status = observer.finish(clock.status);
  } else {
    (void)params;
    (void)first_system;
    integrate_lanes<Scheme, N, T>(b, radius, clock, t_end, p, m);
  }
}

}  // namespace swarmfit
