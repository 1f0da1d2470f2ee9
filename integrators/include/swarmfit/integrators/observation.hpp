// Observation policies: how a backend runs an integration with an observer plugged in. The
// engines know no data and no likelihood: the CPU and CUDA backends (cpu_backend.hpp,
// cuda_kernels.cuh) are templates over a policy P, which provides
//   P::Params                plain values passed by value into kernels (tables, pointers to
//                            per-system outputs in the backend's memory);
//   P::kMaxBodies            the most bodies per system it supports;
//   P::kThreadPerBodyKernels whether the CUDA backend may run it a thread per body;
//   P::integrate<Scheme, N, T>(params, first_system, b, radius, clock, t_end, step, monitors)
//                            one system (or SIMD lanes of systems first_system, ...): it builds
//                            its observer (driver.hpp, NoObserver), runs integrate_lanes() and
//                            folds its result into clock.status.
// Unobserved is the engine's own; models/ instantiates the backends for the likelihood's.
#pragma once

#include "swarmfit/integrators/driver.hpp"
#include "swarmfit/integrators/ensemble.hpp"

namespace swarmfit {

struct Unobserved {
  struct Params {};
  static constexpr int kMaxBodies = swarmfit::kMaxBodies;
  static constexpr bool kThreadPerBodyKernels = true;
  template <template <int, class> class Scheme, int N, class T>
  SWARMFIT_HD static void integrate(const Params&, long, Bodies<N, T>& b, const T (&radius)[N], Clock<T>& clock,
                                    double t_end, const StepParams& p, const MonitorParams& m) {
    integrate_lanes<Scheme, N, T>(b, radius, clock, t_end, p, m);
  }
};

}  // namespace swarmfit
