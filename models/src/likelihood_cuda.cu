// The likelihood's integrations on the GPU, host side: the tables to the device, the engine's
// launch and pipeline (integrators/backend.hpp), ln L and the model curves back.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <type_traits>
#include <vector>

#include "swarmfit/integrators/cuda_memory.hpp"
#include "swarmfit/integrators/schemes.hpp"
#include "swarmfit/models/likelihood_kernels.hpp"

namespace swarmfit {

namespace {

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

// cuda_layout = auto for a batch of `systems` systems of `bodies` bodies: a thread per body where
// a thread per system would leave most of the GPU idle and each system has enough bodies to share
// its step (a resonant chain's fit: TRAPPIST-1, 192 systems a launch), so that a launch lasts one
// system's steps done a body a thread instead of one thread's whole integration; a thread per
// system where the systems alone fill the device or have few bodies (one thread's drifts of 2-3
// planets interleave; the body threads' exchanges cost more). kCudaBodyLayoutFrom bodies
// (likelihood_kernels.hpp) and kBodyLayoutThreadsPerSm are where the two layouts cross
// (bench/RESULTS.md, "One H100, 2026-11-28 morning", "One H200, 2026-11-28: gradient moves").
constexpr long kBodyLayoutThreadsPerSm = 352;
RunRequest with_layout(const RunRequest& request, long systems, int bodies) {
  RunRequest r = request;
  if (r.cuda_layout != CudaLayout::kAuto) return r;
  int device = 0, multiprocessors = 1;
  SWARMFIT_CUDA_CHECK(cudaGetDevice(&device));
  SWARMFIT_CUDA_CHECK(cudaDeviceGetAttribute(&multiprocessors, cudaDevAttrMultiProcessorCount, device));
  r.cuda_layout =
      bodies >= kCudaBodyLayoutFrom && systems * bodies <= static_cast<long>(multiprocessors) * kBodyLayoutThreadsPerSm
          ? CudaLayout::kThreadPerBody
          : CudaLayout::kThreadPerSystem;
  return r;
}

void check_bodies(int num_bodies) {
  if (num_bodies > kMaxObservedBodies)
    throw std::invalid_argument("observed integrations take at most " + std::to_string(kMaxObservedBodies) + " bodies");
}

}  // namespace

DeviceTiming integrate_likelihood_cuda(Ensemble& ensemble, const RunRequest& request, const ObservationTables& h) {
  check_bodies(ensemble.num_bodies());
  const std::size_t systems = ensemble.num_systems();
  GrowBuffer rows[kTableRows], offsets, jitters, log_likelihood, rv_model, transit_model;
  ObservationTables d = h;
  DeviceRun run;
  run.prepare = [&] {
    int row = 0;
    upload_rows(h, d, [&](const auto* host, std::size_t count) { return upload_into(rows[row++], host, count); });
    d.offsets = upload_into(offsets, h.offsets, systems * h.num_instruments);
    d.jitters = upload_into(jitters, h.jitters, systems * h.num_instruments);
    // Outputs start from the host's values (padding slots are not written).
    d.log_likelihood = const_cast<double*>(upload_into(log_likelihood, h.log_likelihood, systems));
    d.rv_model = const_cast<double*>(upload_into(rv_model, h.rv_model, systems * h.num_rv));
    d.transit_model = const_cast<double*>(upload_into(transit_model, h.transit_model, systems * h.num_transits));
  };
  run.launch = [&](const EnsembleView& view, const RunRequest& r) {
    launch_observed<LikelihoodObservation>(view, r, d);
  };
  run.collect = [&] {
    download_from(h.log_likelihood, d.log_likelihood, systems);
    download_from(h.rv_model, d.rv_model, systems * h.num_rv);
    download_from(h.transit_model, d.transit_model, systems * h.num_transits);
  };
  return run_on_device(ensemble, with_layout(request, static_cast<long>(systems), ensemble.num_bodies()), run);
}

struct LikelihoodPipeline::Impl {
  std::mutex mutex;  // one batch at a time: the buffers are shared
  CudaBatchPipeline batches;
  GrowBuffer rows[kTableRows], offsets, jitters;
};

LikelihoodPipeline::LikelihoodPipeline() : impl_(std::make_unique<Impl>()) {}
LikelihoodPipeline::~LikelihoodPipeline() = default;

DeviceTiming LikelihoodPipeline::run(long num_systems, const ModelShape& shape, const RvCentres& centres,
                                     const double* params, const RunRequest& request, const ObservationTables& h,
                                     int* status, double* log_likelihood, int slices) {
  if (!cuda_available()) throw std::runtime_error("backend=cuda: no CUDA device is available");
  check_bodies(shape.num_planets + 1);
  if (h.rv_model || h.transit_model) throw std::invalid_argument("LikelihoodPipeline: no model curves");
  if (num_systems <= 0) return DeviceTiming{};
  std::lock_guard<std::mutex> lock(impl_->mutex);
  Impl& m = *impl_;
  const int ni = h.num_instruments;
  ObservationTables d = h;
  int row = 0;
  upload_rows(h, d, [&](const auto* host, std::size_t count) { return upload_into(m.rows[row++], host, count); });
  double* offsets = ni > 0 ? m.offsets.get<double>(static_cast<std::size_t>(num_systems) * ni) : nullptr;
  double* jitters = ni > 0 ? m.jitters.get<double>(static_cast<std::size_t>(num_systems) * ni) : nullptr;
  const auto setup = [&](const double* device_params, long first, long count, EnsembleView view, void* stream) {
    launch_system_setup(shape, centres, device_params, count, view, offsets ? offsets + first * ni : nullptr,
                        jitters ? jitters + first * ni : nullptr, stream);
  };
  const auto launch = [&](EnsembleView view, long first, long, double* outputs, const RunRequest& r) {
    ObservationTables t = d;
    t.offsets = offsets ? offsets + first * ni : nullptr;
    t.jitters = jitters ? jitters + first * ni : nullptr;
    t.log_likelihood = outputs;
    launch_observed<LikelihoodObservation>(view, r, t);
  };
  return m.batches.run(num_systems, shape.num_planets + 1, shape.num_parameters(), params,
                       with_layout(request, num_systems, shape.num_planets + 1), setup, launch, status, log_likelihood,
                       slices);
}

namespace {

// A device buffer on one stream: grown (by half as much again as asked) with the stream-ordered
// allocator, whose cudaMallocAsync and cudaFreeAsync do not synchronise the device (cudaMalloc and
// cudaFree wait for every kernel in flight: a growing buffer would hold every launch up until the
// slowest target's kernel ends).
struct StreamBuffer {
  cudaStream_t stream = nullptr;
  void* ptr = nullptr;
  std::size_t bytes = 0;
  template <class V>
  V* get(std::size_t count) {
    const std::size_t need = std::max<std::size_t>(count, 1) * sizeof(V);
    if (need > bytes) {
      if (ptr) SWARMFIT_CUDA_CHECK(cudaFreeAsync(ptr, stream));
      bytes = need + need / 2;
      SWARMFIT_CUDA_CHECK(cudaMallocAsync(&ptr, bytes, stream));
    }
    return static_cast<V*>(ptr);
  }
};

// A pinned buffer of at least `count` values, grown by half again when it grows (GrowBuffer keeps
// what it outgrows, so growing does not synchronise the device).
template <class V>
V* pinned_at_least(GrowBuffer& buffer, std::size_t count) {
  count = std::max<std::size_t>(count, 1);
  if (buffer.bytes < count * sizeof(V)) buffer.get<V>(count + count / 2);
  return static_cast<V*>(buffer.ptr);
}

// A packed launch's device buffers, stream and events, kept from one launch to the next. Launches
// run concurrently, each with a set of its own (a launch with a slow target need not hold the
// others).
struct PackedBuffers {
  PackedBuffers() {
    SWARMFIT_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    for (StreamBuffer* b : {&inputs, &offsets, &jitters, &log_likelihood, &bodies, &clocks}) b->stream = stream;
    for (cudaEvent_t& e : events) SWARMFIT_CUDA_CHECK(cudaEventCreate(&e));
  }
  cudaStream_t stream = nullptr;
  cudaEvent_t events[3] = {};
  // Every input of a launch (parameters, table rows, instrument indices, per-target tables, runs,
  // first slots, chunk owners) in one device buffer, staged in one pinned host buffer and sent by
  // one copy: a pageable copy is staged by the driver through buffers that every thread of the
  // process shares, and may wait for its stream.
  StreamBuffer inputs, offsets, jitters, log_likelihood, bodies, clocks;
  GrowBuffer host_inputs{true}, host_clocks{true}, host_log_likelihood{true};
};

// The pool: a free set is taken for a launch and given back after it (a new set where none is
// free: as many sets as launches at once, each on its own stream).
class PackedPool {
 public:
  PackedPool() {
    // The stream-ordered allocator keeps what it frees for the next allocation (by default it
    // hands memory back to the driver at every synchronisation).
    int device = 0;
    cudaMemPool_t pool;
    SWARMFIT_CUDA_CHECK(cudaGetDevice(&device));
    SWARMFIT_CUDA_CHECK(cudaDeviceGetDefaultMemPool(&pool, device));
    std::uint64_t keep = ~std::uint64_t(0);
    SWARMFIT_CUDA_CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep));
  }
  std::unique_ptr<PackedBuffers> take() {
    const std::lock_guard<std::mutex> lock(mutex_);
    if (free_.empty()) return std::make_unique<PackedBuffers>();
    std::unique_ptr<PackedBuffers> b = std::move(free_.back());
    free_.pop_back();
    return b;
  }
  void give(std::unique_ptr<PackedBuffers> b) {
    const std::lock_guard<std::mutex> lock(mutex_);
    free_.push_back(std::move(b));
  }

 private:
  std::mutex mutex_;
  std::vector<std::unique_ptr<PackedBuffers>> free_;
};
PackedPool& packed_pool() {
  static PackedPool* pool = new PackedPool;  // never destroyed: no CUDA calls after the runtime's exit
  return *pool;
}

}  // namespace

DeviceTiming integrate_packed_cuda(const std::vector<PackedTarget>& targets, int nb, const RunRequest& request) {
  if (!cuda_available()) throw std::runtime_error("backend=cuda: no CUDA device is available");
  check_bodies(nb);
  if (targets.empty()) return DeviceTiming{};
  const auto start = std::chrono::steady_clock::now();
  std::unique_ptr<PackedBuffers> buffers = packed_pool().take();
  PackedBuffers& m = *buffers;
  const cudaStream_t stream = m.stream;
  const std::size_t count = targets.size();
  // The layout: each target from a chunk boundary; per chunk its target.
  std::vector<long> first_slot(count);
  std::vector<int> target_of_chunk;
  std::size_t num_params = 0, num_rows = 0, num_instrument_rows = 0, num_per_instrument = 0;
  for (std::size_t t = 0; t < count; ++t) {
    const PackedTarget& g = targets[t];
    if (g.shape.num_planets + 1 != nb) throw std::invalid_argument("integrate_packed_cuda: mixed body counts");
    first_slot[t] = static_cast<long>(target_of_chunk.size()) * kChunk;
    target_of_chunk.insert(target_of_chunk.end(), (g.num_systems + kChunk - 1) / kChunk, static_cast<int>(t));
    num_params += static_cast<std::size_t>(g.num_systems) * g.shape.num_parameters();
    num_rows += 3 * static_cast<std::size_t>(g.tables.num_rv) + 3 * static_cast<std::size_t>(g.tables.num_transits);
    num_instrument_rows += g.tables.num_rv;
    num_per_instrument += static_cast<std::size_t>(g.num_systems) * g.tables.num_instruments;
  }
  const long chunks = static_cast<long>(target_of_chunk.size()), slots = chunks * kChunk;
  // The inputs' layout in one buffer, each part 256-byte aligned (the device pointers in the
  // per-target tables point into the device copy).
  std::size_t bytes = 0;
  const auto part = [&bytes](std::size_t size) {
    const std::size_t at = bytes;
    bytes += (size + 255) / 256 * 256;
    return at;
  };
  const std::size_t at_params = part(num_params * sizeof(double)), at_rows = part(num_rows * sizeof(double)),
                    at_instruments = part(num_instrument_rows * sizeof(int)),
                    at_tables = part(count * sizeof(ObservationTables)), at_runs = part(count * sizeof(SystemRun)),
                    at_first_slot = part(count * sizeof(long)), at_chunks = part(target_of_chunk.size() * sizeof(int));
  char* host = pinned_at_least<char>(m.host_inputs, bytes);
  char* device = m.inputs.get<char>(bytes);
  double* params = reinterpret_cast<double*>(host + at_params);
  double* rows = reinterpret_cast<double*>(host + at_rows);
  int* instruments = reinterpret_cast<int*>(host + at_instruments);
  ObservationTables* tables = reinterpret_cast<ObservationTables*>(host + at_tables);
  SystemRun* runs = reinterpret_cast<SystemRun*>(host + at_runs);
  const double* d_params = reinterpret_cast<const double*>(device + at_params);
  const double* d_rows = reinterpret_cast<const double*>(device + at_rows);
  const int* d_instruments = reinterpret_cast<const int*>(device + at_instruments);
  double* d_offsets = m.offsets.get<double>(std::max<std::size_t>(num_per_instrument, 1));
  double* d_jitters = m.jitters.get<double>(std::max<std::size_t>(num_per_instrument, 1));
  double* d_lnl = m.log_likelihood.get<double>(slots);
  std::vector<std::size_t> param_at(count), per_instrument_at(count);
  {
    std::size_t p = 0, r = 0, i = 0, q = 0;
    for (std::size_t t = 0; t < count; ++t) {
      const PackedTarget& g = targets[t];
      const ObservationTables& h = g.tables;
      const std::size_t np = static_cast<std::size_t>(g.num_systems) * g.shape.num_parameters();
      std::copy(g.params, g.params + np, params + p);
      param_at[t] = p;
      p += np;
      ObservationTables d = h;
      // The rows staged side by side: numbers in `rows`, instrument indices in `instruments`.
      upload_rows(h, d, [&](const auto* from, std::size_t n) {
        using V = std::remove_cv_t<std::remove_pointer_t<decltype(from)>>;
        if (n == 0) return static_cast<const V*>(nullptr);
        if constexpr (std::is_same_v<V, int>) {
          std::copy(from, from + n, instruments + i);
          i += n;
          return static_cast<const V*>(d_instruments + (i - n));
        } else {
          std::copy(from, from + n, rows + r);
          r += n;
          return static_cast<const V*>(d_rows + (r - n));
        }
      });
      const int ni = h.num_instruments;
      per_instrument_at[t] = q;
      d.offsets = ni > 0 ? d_offsets + q : nullptr;
      d.jitters = ni > 0 ? d_jitters + q : nullptr;
      q += static_cast<std::size_t>(g.num_systems) * ni;
      d.log_likelihood = d_lnl + first_slot[t];
      d.rv_model = d.transit_model = nullptr;
      tables[t] = d;
      runs[t] = g.run;
    }
  }
  std::copy(first_slot.begin(), first_slot.end(), reinterpret_cast<long*>(host + at_first_slot));
  std::copy(target_of_chunk.begin(), target_of_chunk.end(), reinterpret_cast<int*>(host + at_chunks));
  double* d_bodies = m.bodies.get<double>(static_cast<std::size_t>(chunks) * kBodyFields * nb * kChunk);
  double* d_clocks = m.clocks.get<double>(static_cast<std::size_t>(chunks) * kClockFields * kChunk);
  // Where a launch's time goes (DeviceTiming): the host's staging and collecting, the device's
  // uploads and set-up kernels (events[0] to [1]), the integration ([1] to [2]), and the rest.
  const auto staged = std::chrono::steady_clock::now();
  cudaEvent_t* events = m.events;
  SWARMFIT_CUDA_CHECK(cudaEventRecord(events[0], stream));
  SWARMFIT_CUDA_CHECK(cudaMemcpyAsync(device, host, bytes, cudaMemcpyHostToDevice, stream));
  PackedTables packed;
  packed.tables = reinterpret_cast<const ObservationTables*>(device + at_tables);
  packed.runs = reinterpret_cast<const SystemRun*>(device + at_runs);
  packed.first_slot = reinterpret_cast<const long*>(device + at_first_slot);
  packed.target_of_chunk = reinterpret_cast<const int*>(device + at_chunks);
  // Each target's systems set up on the device from its parameters, in its own chunks (the set-up
  // kernel a lone problem's batch runs: the same initial conditions, offsets and jitters).
  for (std::size_t t = 0; t < count; ++t) {
    const PackedTarget& g = targets[t];
    const long chunk = first_slot[t] / kChunk;
    EnsembleView view{d_bodies + body_offset(chunk, 0, 0, 0, nb), d_clocks + clock_offset(chunk, 0, 0),
                      (g.num_systems + kChunk - 1) / kChunk, nb};
    const int ni = g.tables.num_instruments;
    launch_system_setup(g.shape, g.centres, d_params + param_at[t], g.num_systems, view,
                        ni > 0 ? d_offsets + per_instrument_at[t] : nullptr,
                        ni > 0 ? d_jitters + per_instrument_at[t] : nullptr, stream);
  }
  RunRequest r = request;
  r.cuda_stream = stream;
  r.step.adaptive = request.integrator->adaptive;
  const EnsembleView all{d_bodies, d_clocks, chunks, nb};
  SWARMFIT_CUDA_CHECK(cudaEventRecord(events[1], stream));
  switch (request.integrator->scheme) {
#define SWARMFIT_PACKED_CASE(Type) \
  case SchemeId::k##Type: fast_kernels::launch_scheme<Type, PackedLikelihoodObservation>(all, r, packed); break;
    SWARMFIT_SCHEMES(SWARMFIT_PACKED_CASE)
#undef SWARMFIT_PACKED_CASE
  }
  SWARMFIT_CUDA_CHECK(cudaEventRecord(events[2], stream));
  const std::size_t clock_values = static_cast<std::size_t>(chunks) * kClockFields * kChunk;
  double* host_clocks = pinned_at_least<double>(m.host_clocks, clock_values);
  double* host_lnl = pinned_at_least<double>(m.host_log_likelihood, slots);
  SWARMFIT_CUDA_CHECK(cudaStreamSynchronize(stream));  // the kernel done before any copy is queued
  const auto integrated = std::chrono::steady_clock::now();
  SWARMFIT_CUDA_CHECK(
      cudaMemcpyAsync(host_clocks, d_clocks, clock_values * sizeof(double), cudaMemcpyDeviceToHost, stream));
  SWARMFIT_CUDA_CHECK(cudaMemcpyAsync(host_lnl, d_lnl, slots * sizeof(double), cudaMemcpyDeviceToHost, stream));
  SWARMFIT_CUDA_CHECK(cudaStreamSynchronize(stream));
  float setup_ms = 0, kernel_ms = 0;
  SWARMFIT_CUDA_CHECK(cudaEventElapsedTime(&setup_ms, events[0], events[1]));
  SWARMFIT_CUDA_CHECK(cudaEventElapsedTime(&kernel_ms, events[1], events[2]));
  for (std::size_t t = 0; t < count; ++t) {
    const PackedTarget& g = targets[t];
    for (long s = 0; s < g.num_systems; ++s) {
      const long slot = first_slot[t] + s;
      g.status[s] = static_cast<int>(host_clocks[clock_offset(slot / kChunk, kClockStatus, slot % kChunk)]);
      g.log_likelihood[s] = host_lnl[slot];
    }
  }
  packed_pool().give(std::move(buffers));
  const auto end = std::chrono::steady_clock::now();
  DeviceTiming timing;
  timing.kernel_ms = kernel_ms;
  timing.setup_ms = setup_ms;
  timing.total_ms = std::chrono::duration<double, std::milli>(end - start).count();
  timing.host_ms = std::chrono::duration<double, std::milli>((staged - start) + (end - integrated)).count();
  return timing;
}

}  // namespace swarmfit
