// CUDA backend, host side: copies, timing, dispatch to the kernels of cuda_kernels.cuh.
// Floating point: nvcc contracts a*b+c into FMA (as the CPU build does with -mfma); 1/r comes
// from rsqrt (1 ulp, lanes.hpp), other divisions and square roots are IEEE (no -use_fast_math),
// which keeps CPU and GPU within round-off of each other.
#include <cstdio>
#include <string>

#include "cuda_kernels.cuh"

namespace swarmfit {

bool cuda_available() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  return count > 0;
}

std::string cuda_device_name() {
  if (!cuda_available()) return "none";
  cudaDeviceProp prop;
  SWARMFIT_CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  return prop.name;
}

DeviceTiming integrate_cuda(Ensemble& ensemble, const RunRequest& request) {
  if (!cuda_available()) throw std::runtime_error("backend=cuda: no CUDA device is available");
  ensemble.fill_padding();
  RunRequest effective = request;
  effective.step.adaptive = request.integrator->adaptive;
  const std::size_t body_bytes = ensemble.body_data().size() * sizeof(double);
  const std::size_t clock_bytes = ensemble.clock_data().size() * sizeof(double);
  cudaEvent_t start, kernel_start, kernel_stop, stop;
  SWARMFIT_CUDA_CHECK(cudaEventCreate(&start));
  SWARMFIT_CUDA_CHECK(cudaEventCreate(&kernel_start));
  SWARMFIT_CUDA_CHECK(cudaEventCreate(&kernel_stop));
  SWARMFIT_CUDA_CHECK(cudaEventCreate(&stop));
  double* bodies = nullptr;
  double* clocks = nullptr;
  SWARMFIT_CUDA_CHECK(cudaEventRecord(start));
  SWARMFIT_CUDA_CHECK(cudaMalloc(&bodies, body_bytes));
  SWARMFIT_CUDA_CHECK(cudaMalloc(&clocks, clock_bytes));
  SWARMFIT_CUDA_CHECK(cudaMemcpy(bodies, ensemble.body_data().data(), body_bytes, cudaMemcpyHostToDevice));
  SWARMFIT_CUDA_CHECK(cudaMemcpy(clocks, ensemble.clock_data().data(), clock_bytes, cudaMemcpyHostToDevice));
  EnsembleView view{bodies, clocks, ensemble.num_chunks(), ensemble.num_bodies()};
  SWARMFIT_CUDA_CHECK(cudaEventRecord(kernel_start));
  switch (request.integrator->scheme) {
    case SchemeId::kHermite: launch_hermite(view, effective); break;
    case SchemeId::kMvs: launch_mvs(view, effective); break;
    case SchemeId::kRkck: launch_rkck(view, effective); break;
    case SchemeId::kLeapfrog: launch_leapfrog(view, effective); break;
  }
  SWARMFIT_CUDA_CHECK(cudaEventRecord(kernel_stop));
  SWARMFIT_CUDA_CHECK(cudaMemcpy(ensemble.body_data().data(), bodies, body_bytes, cudaMemcpyDeviceToHost));
  SWARMFIT_CUDA_CHECK(cudaMemcpy(ensemble.clock_data().data(), clocks, clock_bytes, cudaMemcpyDeviceToHost));
  SWARMFIT_CUDA_CHECK(cudaFree(bodies));
  SWARMFIT_CUDA_CHECK(cudaFree(clocks));
  SWARMFIT_CUDA_CHECK(cudaEventRecord(stop));
  SWARMFIT_CUDA_CHECK(cudaEventSynchronize(stop));
  DeviceTiming timing;
  float ms = 0.0f;
  SWARMFIT_CUDA_CHECK(cudaEventElapsedTime(&ms, kernel_start, kernel_stop));
  timing.kernel_ms = ms;
  SWARMFIT_CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
  timing.total_ms = ms;
  for (cudaEvent_t e : {start, kernel_start, kernel_stop, stop}) SWARMFIT_CUDA_CHECK(cudaEventDestroy(e));
  return timing;
}

}  // namespace swarmfit
