// CUDA kernels: one thread per system, the whole integration (every step up to the destination
// time) in one launch with the state in registers; the physics is integrate_lanes() with
// T = double, the same function the CPU backend runs on SIMD packs. Each scheme is instantiated
// in its own translation unit (cuda_kernels_<scheme>.cu), twice: as it is (namespace
// fast_kernels: nvcc contracts a*b+c into FMAs, 1/r is rsqrt), and for reproducible runs
// (RunRequest::reproducible; cuda_kernels_<scheme>_strict.cu, namespace strict_kernels) with
// nvcc -fmad=false and SWARMFIT_STRICT_FP=1 (1/r an IEEE square root and division), the
// arithmetic of the CPU backend (built with -ffp-contract=off), so that the two give the same bits.
#pragma once

#include "swarmfit/integrators/backend.hpp"
#include "swarmfit/integrators/dispatch.hpp"
#include "swarmfit/integrators/schemes.hpp"

#if SWARMFIT_STRICT_FP
#define SWARMFIT_KERNELS strict_kernels
#else
#define SWARMFIT_KERNELS fast_kernels
#endif

namespace swarmfit {

// Defined in cuda_kernels_<scheme>.cu, in both namespaces.
#define SWARMFIT_DECLARE_LAUNCHERS                                                                             \
  void launch_hermite(EnsembleView view, const RunRequest& request, const ObservationTables* tables);          \
  void launch_hermite_adaptive(EnsembleView view, const RunRequest& request, const ObservationTables* tables); \
  void launch_mvs(EnsembleView view, const RunRequest& request, const ObservationTables* tables);              \
  void launch_rkck(EnsembleView view, const RunRequest& request, const ObservationTables* tables);             \
  void launch_leapfrog(EnsembleView view, const RunRequest& request, const ObservationTables* tables);
namespace fast_kernels {
SWARMFIT_DECLARE_LAUNCHERS
}
namespace strict_kernels {
SWARMFIT_DECLARE_LAUNCHERS
}
#undef SWARMFIT_DECLARE_LAUNCHERS

constexpr int kCudaBlock = 128;
// Blocks per multiprocessor the register allocation must allow (__launch_bounds__): 1 lets the
// n = 3 Hermite kernel keep 198 registers (8 warps per SM); 3 caps it at 168 (12 warps, a few
// spills). Set with -DSWARMFIT_CUDA_MIN_BLOCKS; bench/RESULTS.md records what each gives.
#ifndef SWARMFIT_CUDA_MIN_BLOCKS
#define SWARMFIT_CUDA_MIN_BLOCKS 1
#endif

namespace SWARMFIT_KERNELS {

// With Observed, the likelihood observers (observers.hpp) ride along; `tables` holds device
// pointers and is ignored otherwise.
// __grid_constant__: the observers' out-of-line functions take the tables and the step
// parameters by reference, and the address of a plain kernel parameter makes every thread copy
// it to its own local memory (~400 bytes, filling the L1 that the events' parked state needs):
// with one copy for the grid, B7's observers went from +42% to +31% (bench/RESULTS.md run 21).
template <template <int, class> class Scheme, int N, bool Observed>
__global__ void __launch_bounds__(kCudaBlock, SWARMFIT_CUDA_MIN_BLOCKS)
    integrate_kernel(EnsembleView view, long num_slots, double t_end, const __grid_constant__ StepParams step,
                     const __grid_constant__ MonitorParams monitors, const __grid_constant__ ObservationTables tables) {
  const long system = static_cast<long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (system >= num_slots) return;
  const long chunk = system / kChunk;
  const int lane = static_cast<int>(system % kChunk);
  Bodies<N, double> bodies;
  double radius[N];
  Clock<double> clock;
  load_lanes<N>(view, chunk, lane, bodies, radius, clock);
  if constexpr (Observed) {
    ObserverRecord<N, double> record(tables, system);
    LikelihoodObserver<N, double> observer(record);
    integrate_lanes<Scheme, N, double>(bodies, radius, clock, t_end, step, monitors, &observer);
    clock.status = observer.finish(clock.status);
  } else {
    integrate_lanes<Scheme, N, double>(bodies, radius, clock, t_end, step, monitors);
  }
  store_lanes<N>(view, chunk, lane, bodies, clock);
}

template <template <int, class> class Scheme>
void launch_scheme(EnsembleView view, const RunRequest& request, const ObservationTables* tables) {
  const long slots = view.num_chunks * kChunk;
  const unsigned grid = static_cast<unsigned>((slots + kCudaBlock - 1) / kCudaBlock);
  const cudaStream_t stream = static_cast<cudaStream_t>(request.cuda_stream);
  dispatch_bodies(view.num_bodies, [&](auto n) {
    constexpr int N = decltype(n)::value;
    if (!tables) {
      integrate_kernel<Scheme, N, false><<<grid, kCudaBlock, 0, stream>>>(
          view, slots, request.destination_time, request.step, request.monitors, ObservationTables{});
    } else if constexpr (N <= kMaxObservedBodies) {
      integrate_kernel<Scheme, N, true><<<grid, kCudaBlock, 0, stream>>>(view, slots, request.destination_time,
                                                                         request.step, request.monitors, *tables);
    }
  });
  SWARMFIT_CUDA_CHECK(cudaGetLastError());
}

}  // namespace SWARMFIT_KERNELS

}  // namespace swarmfit
