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
//                            status to store.
// observe_lanes() below is what a backend runs for one system (or the SIMD lanes of several); the
// CUDA kernel spells it out (cuda_kernels.cuh says why). Unobserved is the engine's own; models/
// instantiates the backends for the likelihood's.
#pragma once

#include "swarmfit/integrators/driver.hpp"
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

// One system (or the SIMD lanes of systems first_system, ...) to t_end with the policy's observer.
template <class Observation, template <int, class> class Scheme, int N, class T>
SWARMFIT_HD void observe_lanes(const typename Observation::Params& params, long first_system, Bodies<N, T>& b,
                               const T (&radius)[N], Clock<T>& clock, double t_end, const StepParams& p,
                               const MonitorParams& m) {
  using Observer = typename Observation::template Observer<N, T>;
  if constexpr (Observer::kActive) {
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
