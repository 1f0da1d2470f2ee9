// CUDA kernels: one thread per system, the whole integration (every step up to the destination
// time) in one launch with the state in registers; the physics is integrate_lanes() with
// T = double, the same function the CPU backend runs on SIMD packs, and the observation policy
// (observation.hpp) builds the observer. Included only by the compilation units that
// instantiate launch_scheme, one per scheme, policy and arithmetic (cuda_common.cuh), generated
// from integrators/templates/cuda_kernels.cu.in and models' likelihood template.
#pragma once

#include "swarmfit/integrators/cuda_body_kernels.cuh"
#include "swarmfit/integrators/cuda_common.cuh"
#include "swarmfit/integrators/observation.hpp"

namespace swarmfit {
namespace SWARMFIT_KERNELS {

// __grid_constant__: an observer's out-of-line functions take its tables and the step parameters
// by reference, and the address of a plain kernel parameter makes every thread copy it to its
// own local memory (~400 bytes, filling the L1 that the events' parked state needs); so there is
// one copy for the grid.
template <template <int, class> class Scheme, int N, class Observation>
__global__ void __launch_bounds__(kCudaBlock, SWARMFIT_CUDA_MIN_BLOCKS)
    integrate_kernel(EnsembleView view, long num_slots, double t_end, const __grid_constant__ StepParams step,
                     const __grid_constant__ MonitorParams monitors,
                     const __grid_constant__ typename Observation::Params params) {
  const long system = static_cast<long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (system >= num_slots) return;
  const long chunk = system / kChunk;
  const int lane = static_cast<int>(system % kChunk);
  Bodies<N, double> bodies;
  double radius[N];
  Clock<double> clock;
  load_lanes<N>(view, chunk, lane, bodies, radius, clock);
  // observe_lanes() spelled out: one inlining level fewer keeps the observer's parked state (driver.hpp)
  // at the start of the thread's stack, where ptxas pairs its stores (bench/RESULTS.md run 23).
  using Observer = typename Observation::template Observer<N, double>;
  if constexpr (HasPerSystemRuns<Observation>::value) {
    // A packed launch: this system's problem's own run, read by reference from global memory.
    const SystemRun& run = Observation::run_of(params, system);
    typename Observation::template Record<N, double> record(params, system);
    Observer observer(record);
    integrate_lanes<Scheme, N, double>(bodies, radius, clock, run.t_end, run.step, run.monitors, &observer);
    clock.status = observer.finish(clock.status);
  } else if constexpr (IsVariational<Observation>::value) {
    observe_lanes<Observation, Scheme, N, double>(params, system, bodies, radius, clock, t_end, step, monitors);
  } else if constexpr (Observer::kActive) {
    typename Observation::template Record<N, double> record(params, system);
    Observer observer(record);
    integrate_lanes<Scheme, N, double>(bodies, radius, clock, t_end, step, monitors, &observer);
    clock.status = observer.finish(clock.status);
  } else {
    integrate_lanes<Scheme, N, double>(bodies, radius, clock, t_end, step, monitors);
  }
  store_lanes<N>(view, chunk, lane, bodies, clock);
}

template <template <int, class> class Scheme, class Observation>
void launch_scheme(EnsembleView view, const RunRequest& request, const typename Observation::Params& params) {
  if constexpr (Observation::kThreadPerBodyKernels && BodyKernels<Scheme>::kExists) {
    if (BodyKernels<Scheme>::chosen(view.num_bodies, request.cuda_layout)) {
      BodyKernels<Scheme>::launch(view, request);
      return;
    }
  }
  const long slots = view.num_chunks * kChunk;
  const unsigned grid = static_cast<unsigned>((slots + kCudaBlock - 1) / kCudaBlock);
  const cudaStream_t stream = static_cast<cudaStream_t>(request.cuda_stream);
  if constexpr (BodyObservation<Observation>::kExists && std::is_same_v<Scheme<2, double>, Mvs<2, double>>) {
    if (observed_body_layout(request)) {
      dispatch_bodies(view.num_bodies, [&](auto n) {
        constexpr int N = decltype(n)::value;
        if constexpr (N <= Observation::kMaxBodies)
          mvs_observed_body_kernel<N, typename BodyObservation<Observation>::template Observer<N>>
              <<<body_kernel_grid<N>(view), kCudaBlock, 0, stream>>>(view, slots, request.destination_time,
                                                                     request.step, request.monitors, params);
      });
      SWARMFIT_CUDA_CHECK(cudaGetLastError());
      return;
    }
  }
  dispatch_bodies(view.num_bodies, [&](auto n) {
    constexpr int N = decltype(n)::value;
    if constexpr (N <= Observation::kMaxBodies) {
      integrate_kernel<Scheme, N, Observation><<<grid, kCudaBlock, 0, stream>>>(view, slots, request.destination_time,
                                                                                request.step, request.monitors, params);
    }
  });
  SWARMFIT_CUDA_CHECK(cudaGetLastError());
}

}  // namespace SWARMFIT_KERNELS
}  // namespace swarmfit
