// CUDA backend, host side: copies, timing, streams; the kernels are cuda_kernels.cuh's.
// Floating point: nvcc contracts a*b+c into FMA; 1/r comes from rsqrt (1 ulp, lanes.hpp), other
// divisions and square roots are IEEE (no -use_fast_math), which keeps CPU and GPU within
// round-off of each other (the reproducible kernels give the CPU's bits: cuda_common.cuh).
#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include "swarmfit/integrators/cuda_body_kernels.cuh"
#include "swarmfit/integrators/cuda_memory.hpp"
#include "swarmfit/integrators/cuda_wait.hpp"
#include "swarmfit/integrators/observation.hpp"

namespace swarmfit {

void cuda_wait_blocking() {
  if (cudaSetDeviceFlags(cudaDeviceScheduleBlockingSync) != cudaSuccess) cudaGetLastError();  // (context exists)
}

namespace {
std::atomic<int>& process_device() {  // cuda_use_device's choice; -1: none
  static std::atomic<int> device{-1};
  return device;
}
}  // namespace

void cuda_use_device(int index) {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count <= 0) {
    cudaGetLastError();
    return;
  }
  const int device = ((index % count) + count) % count;
  SWARMFIT_CUDA_CHECK(cudaSetDevice(device));
  process_device().store(device);
}

void cuda_bind_thread() noexcept {
  const int device = process_device().load();
  if (device >= 0 && cudaSetDevice(device) != cudaSuccess) cudaGetLastError();
}

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

bool cuda_threads_per_body(SchemeId scheme, int num_bodies, CudaLayout layout, bool observed) {
  if (observed) return false;
  switch (scheme) {
#define SWARMFIT_BODY_CASE(Type) \
  case SchemeId::k##Type:        \
    return fast_kernels::BodyKernels<Type>::kExists && fast_kernels::BodyKernels<Type>::chosen(num_bodies, layout);
    SWARMFIT_SCHEMES(SWARMFIT_BODY_CASE)
#undef SWARMFIT_BODY_CASE
  }
  return false;
}

DeviceTiming run_on_device(Ensemble& ensemble, const RunRequest& request, const DeviceRun& run) {
  if (!cuda_available()) throw std::runtime_error("backend=cuda: no CUDA device is available");
  ensemble.fill_padding();
  const std::size_t body_bytes = ensemble.body_data().size() * sizeof(double);
  const std::size_t clock_bytes = ensemble.clock_data().size() * sizeof(double);
  cudaEvent_t start, kernel_start, kernel_stop, stop;
  SWARMFIT_CUDA_CHECK(cudaEventCreate(&start));
  SWARMFIT_CUDA_CHECK(cudaEventCreate(&kernel_start));
  SWARMFIT_CUDA_CHECK(cudaEventCreate(&kernel_stop));
  SWARMFIT_CUDA_CHECK(cudaEventCreate(&stop));
  // On the request's stream, or the calling thread's own (not the legacy default stream, which
  // every thread shares: a fit's copies there waited for other fits' kernels; bench/RESULTS.md,
  // sixth session). The buffers' memory is stream-ordered (GrowBuffer): no device-wide waits.
  RunRequest on_stream = request;
  if (!on_stream.cuda_stream) on_stream.cuda_stream = cudaStreamPerThread;
  const cudaStream_t stream = static_cast<cudaStream_t>(on_stream.cuda_stream);
  GrowBuffer bodies, clocks;
  // Destroyed first: however this ends (an error too), the buffers are freed only once their
  // stream's work is done (they are freed on this thread's stream, the kernel may run on another).
  struct WaitForStream {
    cudaStream_t s;
    ~WaitForStream() { cudaStreamSynchronize(s); }
  } wait_for_stream{stream};
  SWARMFIT_CUDA_CHECK(cudaEventRecord(start, stream));
  double* device_bodies = bodies.get<double>(ensemble.body_data().size());
  double* device_clocks = clocks.get<double>(ensemble.clock_data().size());
  SWARMFIT_CUDA_CHECK(
      cudaMemcpyAsync(device_bodies, ensemble.body_data().data(), body_bytes, cudaMemcpyHostToDevice, stream));
  SWARMFIT_CUDA_CHECK(
      cudaMemcpyAsync(device_clocks, ensemble.clock_data().data(), clock_bytes, cudaMemcpyHostToDevice, stream));
  const EnsembleView view{device_bodies, device_clocks, ensemble.num_chunks(), ensemble.num_bodies()};
  if (run.prepare) run.prepare();  // (its uploads are synchronous)
  SWARMFIT_CUDA_CHECK(cudaEventRecord(kernel_start, stream));
  run.launch(view, on_stream);
  SWARMFIT_CUDA_CHECK(cudaEventRecord(kernel_stop, stream));
  SWARMFIT_CUDA_CHECK(cudaStreamSynchronize(stream));  // (collect's copies are on this thread's stream)
  if (run.collect) run.collect();
  SWARMFIT_CUDA_CHECK(
      cudaMemcpyAsync(ensemble.body_data().data(), device_bodies, body_bytes, cudaMemcpyDeviceToHost, stream));
  SWARMFIT_CUDA_CHECK(
      cudaMemcpyAsync(ensemble.clock_data().data(), device_clocks, clock_bytes, cudaMemcpyDeviceToHost, stream));
  SWARMFIT_CUDA_CHECK(cudaEventRecord(stop, stream));
  SWARMFIT_CUDA_CHECK(cudaEventSynchronize(stop));
  bodies.release();
  clocks.release();
  DeviceTiming timing;
  float ms = 0.0f;
  SWARMFIT_CUDA_CHECK(cudaEventElapsedTime(&ms, kernel_start, kernel_stop));
  timing.kernel_ms = ms;
  SWARMFIT_CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
  timing.total_ms = ms;
  for (cudaEvent_t e : {start, kernel_start, kernel_stop, stop}) SWARMFIT_CUDA_CHECK(cudaEventDestroy(e));
  return timing;
}

DeviceTiming integrate_cuda(Ensemble& ensemble, const RunRequest& request) {
  if (request.cuda_layout == CudaLayout::kThreadPerBody &&
      !cuda_threads_per_body(request.integrator->scheme, ensemble.num_bodies(), request.cuda_layout, false))
    throw std::invalid_argument("cuda_layout=body: integrator " + request.integrator->name +
                                " has no thread-per-body kernel");
  DeviceRun run;
  run.launch = [](const EnsembleView& view, const RunRequest& r) {
    launch_observed<Unobserved>(view, r, Unobserved::Params{});
  };
  return run_on_device(ensemble, request, run);
}

struct CudaBatchPipeline::Impl {
  std::mutex mutex;
  GrowBuffer params, bodies, clocks, outputs;
  GrowBuffer clocks_back{true}, outputs_back{true};  // pinned: asynchronous copies back
  std::vector<cudaStream_t> streams;
  std::vector<cudaEvent_t> setup_start, kernel_start, kernel_stop;
  cudaEvent_t start = nullptr;

  void ensure_streams(int count) {
    if (!start) SWARMFIT_CUDA_CHECK(cudaEventCreate(&start));
    while (static_cast<int>(streams.size()) < count) {
      cudaStream_t s;
      SWARMFIT_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
      streams.push_back(s);
      cudaEvent_t a, b, c;
      SWARMFIT_CUDA_CHECK(cudaEventCreate(&a));
      SWARMFIT_CUDA_CHECK(cudaEventCreate(&b));
      SWARMFIT_CUDA_CHECK(cudaEventCreate(&c));
      setup_start.push_back(a);
      kernel_start.push_back(b);
      kernel_stop.push_back(c);
    }
  }
  ~Impl() {
    for (cudaStream_t s : streams) cudaStreamDestroy(s);
    for (cudaEvent_t e : setup_start) cudaEventDestroy(e);
    for (cudaEvent_t e : kernel_start) cudaEventDestroy(e);
    for (cudaEvent_t e : kernel_stop) cudaEventDestroy(e);
    if (start) cudaEventDestroy(start);
  }
};

CudaBatchPipeline::CudaBatchPipeline() : impl_(std::make_unique<Impl>()) {}
CudaBatchPipeline::~CudaBatchPipeline() = default;

DeviceTiming CudaBatchPipeline::run(long num_systems, int num_bodies, int num_parameters, const double* params,
                                    const RunRequest& request, const Setup& setup, const Launch& launch, int* status,
                                    double* outputs, int slices) {
  if (!cuda_available()) throw std::runtime_error("backend=cuda: no CUDA device is available");
  if (num_systems <= 0) return DeviceTiming{};
  std::lock_guard<std::mutex> lock(impl_->mutex);
  Impl& m = *impl_;
  const auto t0 = std::chrono::steady_clock::now();
  double host_seconds = 0.0;
  auto host_clock = [&](auto&& work) {
    const auto a = std::chrono::steady_clock::now();
    work();
    host_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - a).count();
  };
  if (slices <= 0) slices = num_systems >= kSliceFrom ? kDefaultSlices : 1;
  // Slices of whole blocks (a multiple of kChunk), so that each slice's chunks sit where the
  // whole batch's would and its kernel has no partly filled blocks but the last.
  const long per_slice = (num_systems + slices - 1) / slices;
  const long slice_size = std::max<long>(kCudaBlock, (per_slice + kCudaBlock - 1) / kCudaBlock * kCudaBlock);
  slices = static_cast<int>((num_systems + slice_size - 1) / slice_size);
  m.ensure_streams(slices);

  const long chunks = (num_systems + kChunk - 1) / kChunk;
  const std::size_t body_per_chunk = static_cast<std::size_t>(kBodyFields) * num_bodies * kChunk;
  const std::size_t clock_per_chunk = static_cast<std::size_t>(kClockFields) * kChunk;
  double* bodies = m.bodies.get<double>(chunks * body_per_chunk);
  double* clocks = m.clocks.get<double>(chunks * clock_per_chunk);
  double* device_outputs = m.outputs.get<double>(chunks * kChunk);
  const std::size_t np = num_parameters;
  double* device_params = m.params.get<double>(num_systems * np);
  double* clocks_back = m.clocks_back.get<double>(chunks * clock_per_chunk);
  double* outputs_back = m.outputs_back.get<double>(chunks * kChunk);

  RunRequest effective = request;
  SWARMFIT_CUDA_CHECK(cudaEventRecord(m.start, m.streams[0]));
  for (int k = 0; k < slices; ++k) {
    const long first = k * slice_size, count = std::min(slice_size, num_systems - first);
    const long slice_chunks = (count + kChunk - 1) / kChunk;
    const cudaStream_t stream = m.streams[k];
    const long chunk0 = first / kChunk;
    double* b = bodies + chunk0 * body_per_chunk;
    double* c = clocks + chunk0 * clock_per_chunk;
    const EnsembleView view{b, c, slice_chunks, num_bodies};
    // From pageable memory: the call returns once the driver has staged the data, while the
    // slices already launched run.
    host_clock([&] {
      SWARMFIT_CUDA_CHECK(cudaMemcpyAsync(device_params + first * np, params + first * np, count * np * sizeof(double),
                                          cudaMemcpyHostToDevice, stream));
    });
    SWARMFIT_CUDA_CHECK(cudaEventRecord(m.setup_start[k], stream));
    setup(device_params + first * np, first, count, view, stream);
    SWARMFIT_CUDA_CHECK(cudaEventRecord(m.kernel_start[k], stream));
    effective.cuda_stream = stream;
    launch(view, first, count, device_outputs + first, effective);
    SWARMFIT_CUDA_CHECK(cudaEventRecord(m.kernel_stop[k], stream));
    SWARMFIT_CUDA_CHECK(cudaMemcpyAsync(clocks_back + chunk0 * clock_per_chunk, c,
                                        slice_chunks * clock_per_chunk * sizeof(double), cudaMemcpyDeviceToHost,
                                        stream));
    SWARMFIT_CUDA_CHECK(cudaMemcpyAsync(outputs_back + first, device_outputs + first, count * sizeof(double),
                                        cudaMemcpyDeviceToHost, stream));
  }
  for (int k = 0; k < slices; ++k) SWARMFIT_CUDA_CHECK(cudaStreamSynchronize(m.streams[k]));
  DeviceTiming timing;
  timing.slices = slices;
  float first_start = 0.0f, last_stop = 0.0f;
  for (int k = 0; k < slices; ++k) {
    float a = 0.0f, b = 0.0f, setup_ms = 0.0f;
    SWARMFIT_CUDA_CHECK(cudaEventElapsedTime(&setup_ms, m.setup_start[k], m.kernel_start[k]));
    timing.setup_ms += setup_ms;
    SWARMFIT_CUDA_CHECK(cudaEventElapsedTime(&a, m.start, m.kernel_start[k]));
    SWARMFIT_CUDA_CHECK(cudaEventElapsedTime(&b, m.start, m.kernel_stop[k]));
    first_start = k == 0 ? a : std::min(first_start, a);
    last_stop = std::max(last_stop, b);
  }
  timing.kernel_ms = last_stop - first_start;
  host_clock([&] {
    for (long s = 0; s < num_systems; ++s) {
      status[s] = static_cast<int>(clocks_back[clock_offset(s / kChunk, kClockStatus, static_cast<int>(s % kChunk))]);
      if (outputs) outputs[s] = outputs_back[s];
    }
  });
  timing.host_ms = 1e3 * host_seconds;
  timing.total_ms = 1e3 * std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return timing;
}

}  // namespace swarmfit
