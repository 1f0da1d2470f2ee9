// CUDA backend, host side: copies, timing, dispatch to the kernels of cuda_kernels.cuh.
// Floating point: nvcc contracts a*b+c into FMA (as the CPU build does with -mfma); 1/r comes
// from rsqrt (1 ulp, lanes.hpp), other divisions and square roots are IEEE (no -use_fast_math),
// which keeps CPU and GPU within round-off of each other.
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

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

namespace {

// A device copy of `count` values of `host` (nullptr stays nullptr), freed by the owner.
template <class V>
V* upload(const V* host, std::size_t count, std::vector<void*>& owned) {
  if (!host || count == 0) return nullptr;
  V* device = nullptr;
  SWARMFIT_CUDA_CHECK(cudaMalloc(&device, count * sizeof(V)));
  SWARMFIT_CUDA_CHECK(cudaMemcpy(device, host, count * sizeof(V), cudaMemcpyHostToDevice));
  owned.push_back(device);
  return device;
}

DeviceTiming run_cuda(Ensemble& ensemble, const RunRequest& request, const ObservationTables* host_tables) {
  if (!cuda_available()) throw std::runtime_error("backend=cuda: no CUDA device is available");
  if (host_tables && ensemble.num_bodies() > kMaxObservedBodies)
    throw std::invalid_argument("observed integrations take at most " + std::to_string(kMaxObservedBodies) + " bodies");
  if (request.cuda_layout == CudaLayout::kThreadPerBody &&
      !cuda_threads_per_body(request.integrator->scheme, ensemble.num_bodies(), request.cuda_layout,
                             host_tables != nullptr))
    throw std::invalid_argument(
        "cuda_layout=body: a thread per body is implemented for hermite and hermite_adaptive "
        "without observers");
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
  // The observation tables and the per-system outputs.
  std::vector<void*> owned;
  ObservationTables device_tables;
  const ObservationTables* tables = nullptr;
  if (host_tables) {
    const ObservationTables& h = *host_tables;
    device_tables = h;
    device_tables.rv_time = upload(h.rv_time, h.num_rv, owned);
    device_tables.rv_value = upload(h.rv_value, h.num_rv, owned);
    device_tables.rv_error = upload(h.rv_error, h.num_rv, owned);
    device_tables.rv_instrument = upload(h.rv_instrument, h.num_rv, owned);
    device_tables.transit_time = upload(h.transit_time, h.num_transits, owned);
    device_tables.transit_error = upload(h.transit_error, h.num_transits, owned);
    device_tables.transit_epoch = upload(h.transit_epoch, h.num_transits, owned);
    const std::size_t per_instrument = static_cast<std::size_t>(ensemble.num_systems()) * h.num_instruments;
    device_tables.offsets = upload(h.offsets, per_instrument, owned);
    device_tables.jitters = upload(h.jitters, per_instrument, owned);
    // Outputs are sized for every slot, padding included, and start from the host's values.
    device_tables.log_likelihood = upload(h.log_likelihood, ensemble.num_systems(), owned);
    device_tables.rv_model = upload(h.rv_model, ensemble.num_systems() * h.num_rv, owned);
    device_tables.transit_model = upload(h.transit_model, ensemble.num_systems() * h.num_transits, owned);
    tables = &device_tables;
  }
  SWARMFIT_CUDA_CHECK(cudaEventRecord(kernel_start));
  switch (request.integrator->scheme) {
    case SchemeId::kHermite: launch_hermite(view, effective, tables); break;
    case SchemeId::kHermiteAdaptive: launch_hermite_adaptive(view, effective, tables); break;
    case SchemeId::kMvs: launch_mvs(view, effective, tables); break;
    case SchemeId::kRkck: launch_rkck(view, effective, tables); break;
    case SchemeId::kLeapfrog: launch_leapfrog(view, effective, tables); break;
  }
  SWARMFIT_CUDA_CHECK(cudaEventRecord(kernel_stop));
  if (host_tables) {
    const ObservationTables& h = *host_tables;
    auto download = [](double* host, const double* device, std::size_t count) {
      if (host && device && count)
        SWARMFIT_CUDA_CHECK(cudaMemcpy(host, device, count * sizeof(double), cudaMemcpyDeviceToHost));
    };
    download(h.log_likelihood, device_tables.log_likelihood, ensemble.num_systems());
    download(h.rv_model, device_tables.rv_model, ensemble.num_systems() * h.num_rv);
    download(h.transit_model, device_tables.transit_model, ensemble.num_systems() * h.num_transits);
  }
  for (void* p : owned) SWARMFIT_CUDA_CHECK(cudaFree(p));
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

}  // namespace

DeviceTiming integrate_cuda(Ensemble& ensemble, const RunRequest& request) {
  return run_cuda(ensemble, request, nullptr);
}

DeviceTiming integrate_observed_cuda(Ensemble& ensemble, const RunRequest& request, const ObservationTables& tables) {
  return run_cuda(ensemble, request, &tables);
}

}  // namespace swarmfit
