// CUDA backend, host side: copies, timing, dispatch to the kernels of cuda_kernels.cuh.
// Floating point: nvcc contracts a*b+c into FMA (as the CPU build does with -mfma); 1/r comes
// from rsqrt (1 ulp, lanes.hpp), other divisions and square roots are IEEE (no -use_fast_math),
// which keeps CPU and GPU within round-off of each other.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <mutex>
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

// The parameter-independent rows of the tables (RVs, transits) in d, each through up(host, count).
template <class Upload>
void upload_rows(const ObservationTables& h, ObservationTables& d, Upload&& up) {
  d.rv_time = up(h.rv_time, h.num_rv);
  d.rv_value = up(h.rv_value, h.num_rv);
  d.rv_error = up(h.rv_error, h.num_rv);
  d.rv_instrument = up(h.rv_instrument, h.num_rv);
  d.transit_time = up(h.transit_time, h.num_transits);
  d.transit_error = up(h.transit_error, h.num_transits);
  d.transit_epoch = up(h.transit_epoch, h.num_transits);
}
constexpr int kTableRows = 7;

// The integration kernel of the request's scheme (request.cuda_stream); the reproducible build of
// it (the CPU's arithmetic: cuda_kernels.cuh) when the request asks for one.
void launch_scheme(const EnsembleView& view, const RunRequest& request, const ObservationTables* tables) {
  const bool strict = request.reproducible;
  switch (request.integrator->scheme) {
    case SchemeId::kHermite:
      (strict ? strict_kernels::launch_hermite : fast_kernels::launch_hermite)(view, request, tables);
      break;
    case SchemeId::kHermiteAdaptive:
      (strict ? strict_kernels::launch_hermite_adaptive : fast_kernels::launch_hermite_adaptive)(view, request, tables);
      break;
    case SchemeId::kMvs: (strict ? strict_kernels::launch_mvs : fast_kernels::launch_mvs)(view, request, tables); break;
    case SchemeId::kRkck:
      (strict ? strict_kernels::launch_rkck : fast_kernels::launch_rkck)(view, request, tables);
      break;
    case SchemeId::kLeapfrog:
      (strict ? strict_kernels::launch_leapfrog : fast_kernels::launch_leapfrog)(view, request, tables);
      break;
  }
}

DeviceTiming run_cuda(Ensemble& ensemble, const RunRequest& request, const ObservationTables* host_tables) {
  if (!cuda_available()) throw std::runtime_error("backend=cuda: no CUDA device is available");
  if (host_tables && ensemble.num_bodies() > kMaxObservedBodies)
    throw std::invalid_argument("observed integrations take at most " + std::to_string(kMaxObservedBodies) + " bodies");
  if (request.cuda_layout == CudaLayout::kThreadPerBody &&
      !cuda_threads_per_body(request.integrator->scheme, ensemble.num_bodies(), request.cuda_layout,
                             host_tables != nullptr))
    throw std::invalid_argument("cuda_layout=body: observed integrations (likelihoods) run one thread per system");
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
    upload_rows(h, device_tables, [&](const auto* host, std::size_t count) { return upload(host, count, owned); });
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
  launch_scheme(view, effective, tables);
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

namespace {

// Grow-only buffers of a pipeline (freed with it): device memory, or pinned host memory.
struct GrowBuffer {
  bool pinned = false;
  void* ptr = nullptr;
  std::size_t bytes = 0;
  template <class V>
  V* get(std::size_t count) {
    if (count * sizeof(V) > bytes) {
      release();
      SWARMFIT_CUDA_CHECK(pinned ? cudaMallocHost(&ptr, count * sizeof(V)) : cudaMalloc(&ptr, count * sizeof(V)));
      bytes = count * sizeof(V);
    }
    return static_cast<V*>(ptr);
  }
  void release() {
    if (ptr) pinned ? cudaFreeHost(ptr) : cudaFree(ptr);  // no throwing from a destructor
    ptr = nullptr;
    bytes = 0;
  }
  ~GrowBuffer() { release(); }
};
using DeviceBuffer = GrowBuffer;

// A synchronous upload into a grow-only buffer (the small, parameter-independent tables).
template <class V>
const V* upload_into(DeviceBuffer& buffer, const V* host, std::size_t count) {
  if (!host || count == 0) return nullptr;
  V* device = buffer.get<V>(count);
  SWARMFIT_CUDA_CHECK(cudaMemcpy(device, host, count * sizeof(V), cudaMemcpyHostToDevice));
  return device;
}

}  // namespace

struct CudaObservedPipeline::Impl {
  std::mutex mutex;
  DeviceBuffer params, bodies, clocks, lnl, offsets, jitters;
  DeviceBuffer rows[kTableRows];                 // upload_rows, in its order
  GrowBuffer clocks_back{true}, lnl_back{true};  // pinned: asynchronous copies back
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

CudaObservedPipeline::CudaObservedPipeline() : impl_(std::make_unique<Impl>()) {}
CudaObservedPipeline::~CudaObservedPipeline() = default;

DeviceTiming CudaObservedPipeline::run(long num_systems, int num_bodies, int num_parameters, const double* params,
                                       const RunRequest& request, const ObservationTables& h, const DeviceSetup& setup,
                                       int* status, int slices) {
  if (!cuda_available()) throw std::runtime_error("backend=cuda: no CUDA device is available");
  if (num_bodies > kMaxObservedBodies)
    throw std::invalid_argument("observed integrations take at most " + std::to_string(kMaxObservedBodies) + " bodies");
  if (h.rv_model || h.transit_model) throw std::invalid_argument("CudaObservedPipeline: no model curves");
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
  const int ni = h.num_instruments;
  double* bodies = m.bodies.get<double>(chunks * body_per_chunk);
  double* clocks = m.clocks.get<double>(chunks * clock_per_chunk);
  double* lnl = m.lnl.get<double>(chunks * kChunk);
  const std::size_t np = num_parameters;
  double* device_params = m.params.get<double>(num_systems * np);
  double* offsets = ni > 0 ? m.offsets.get<double>(static_cast<std::size_t>(num_systems) * ni) : nullptr;
  double* jitters = ni > 0 ? m.jitters.get<double>(static_cast<std::size_t>(num_systems) * ni) : nullptr;
  double* clocks_back = m.clocks_back.get<double>(chunks * clock_per_chunk);
  double* lnl_back = m.lnl_back.get<double>(chunks * kChunk);
  ObservationTables d = h;
  int row = 0;
  upload_rows(h, d, [&](const auto* host, std::size_t count) { return upload_into(m.rows[row++], host, count); });

  RunRequest effective = request;
  effective.step.adaptive = request.integrator->adaptive;
  SWARMFIT_CUDA_CHECK(cudaEventRecord(m.start, m.streams[0]));
  for (int k = 0; k < slices; ++k) {
    const long first = k * slice_size, count = std::min(slice_size, num_systems - first);
    const long slice_chunks = (count + kChunk - 1) / kChunk;
    const cudaStream_t stream = m.streams[k];
    const long chunk0 = first / kChunk;
    double* b = bodies + chunk0 * body_per_chunk;
    double* c = clocks + chunk0 * clock_per_chunk;
    EnsembleView view{b, c, slice_chunks, num_bodies};
    // From pageable memory: the call returns once the driver has staged the data, while the
    // slices already launched run.
    host_clock([&] {
      SWARMFIT_CUDA_CHECK(cudaMemcpyAsync(device_params + first * np, params + first * np, count * np * sizeof(double),
                                          cudaMemcpyHostToDevice, stream));
    });
    ObservationTables t = d;
    t.offsets = offsets ? offsets + first * ni : nullptr;
    t.jitters = jitters ? jitters + first * ni : nullptr;
    SWARMFIT_CUDA_CHECK(cudaEventRecord(m.setup_start[k], stream));
    setup(device_params + first * np, count, view, const_cast<double*>(t.offsets), const_cast<double*>(t.jitters),
          stream);
    SWARMFIT_CUDA_CHECK(cudaEventRecord(m.kernel_start[k], stream));
    t.log_likelihood = lnl + first;
    RunRequest r = effective;
    r.cuda_stream = stream;
    launch_scheme(view, r, &t);
    SWARMFIT_CUDA_CHECK(cudaEventRecord(m.kernel_stop[k], stream));
    SWARMFIT_CUDA_CHECK(cudaMemcpyAsync(clocks_back + chunk0 * clock_per_chunk, c,
                                        slice_chunks * clock_per_chunk * sizeof(double), cudaMemcpyDeviceToHost,
                                        stream));
    SWARMFIT_CUDA_CHECK(
        cudaMemcpyAsync(lnl_back + first, t.log_likelihood, count * sizeof(double), cudaMemcpyDeviceToHost, stream));
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
      if (h.log_likelihood) h.log_likelihood[s] = lnl_back[s];
    }
  });
  timing.host_ms = 1e3 * host_seconds;
  timing.total_ms = 1e3 * std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return timing;
}

DeviceTiming integrate_cuda(Ensemble& ensemble, const RunRequest& request) {
  return run_cuda(ensemble, request, nullptr);
}

DeviceTiming integrate_observed_cuda(Ensemble& ensemble, const RunRequest& request, const ObservationTables& tables) {
  return run_cuda(ensemble, request, &tables);
}

}  // namespace swarmfit
