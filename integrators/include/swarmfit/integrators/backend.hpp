// Backends: thin loops over the systems of an ensemble, each calling the same integrate_lanes().
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "swarmfit/integrators/ensemble.hpp"
#include "swarmfit/integrators/observers.hpp"
#include "swarmfit/integrators/registry.hpp"

namespace swarmfit {

// CUDA: how threads map to systems. One thread per system keeps a whole system in registers; a
// thread per body (every scheme, without observers: cuda_body_kernels.cuh) keeps one body there,
// for systems that do not fit one thread. kAuto takes a thread per body from body_threads_from(scheme)
// bodies on, where B2 measured it faster (bench/RESULTS.md, B2 with each layout and scheme, H100):
// from 9 bodies for hermite, mvs and leapfrog (at n = 8 one thread per system is 1.6-2.2x faster,
// at n = 10 a thread per body 3.6-6.4x), from 6 for rkck (six stages' derivatives: n = 6 1.09x,
// n = 8 2.6x).
enum class CudaLayout : int { kAuto = 0, kThreadPerSystem = 1, kThreadPerBody = 2 };
constexpr int body_threads_from(SchemeId scheme) { return scheme == SchemeId::kRkck ? 6 : 9; }
// Whether the CUDA backend gives each body a thread: where asked for, or from body_threads_from
// bodies on under kAuto; never with observers (the likelihood kernels are one thread per system).
inline bool cuda_threads_per_body(SchemeId scheme, int num_bodies, CudaLayout layout, bool observed) {
  if (observed || layout == CudaLayout::kThreadPerSystem) return false;
  return layout == CudaLayout::kThreadPerBody || num_bodies >= body_threads_from(scheme);
}

struct RunRequest {
  const IntegratorInfo* integrator = nullptr;
  StepParams step;
  MonitorParams monitors;
  double destination_time = 0.0;
  int threads = 0;  // CPU: OpenMP threads (0 = all)
  CudaLayout cuda_layout = CudaLayout::kAuto;
  void* cuda_stream = nullptr;  // CUDA: the stream the kernel is launched on (a cudaStream_t; null = default)
  // CUDA: the kernels built with the CPU backend's arithmetic (no FMA contraction, IEEE 1/sqrt),
  // which give bitwise the CPU's results, at some speed (bench/RESULTS.md). The CPU ignores it.
  bool reproducible = false;
};

// Kernel-only and end-to-end (copies included) times of a CUDA run, in milliseconds.
// A pipelined run (CudaObservedPipeline) reports as kernel_ms the span from the start of the first
// slice's integration kernel to the end of the last one's, as setup_ms the sum over slices of
// the span from the start of a slice's set-up kernel to the start of its integration kernel (with
// one slice: the set-up kernel's time; with several it includes waiting for the other slices'
// kernels, which overlap it), and as host_ms the host's own work inside that run (staging the
// parameters, collecting the results).
struct DeviceTiming {
  double kernel_ms = 0.0;
  double total_ms = 0.0;
  double host_ms = 0.0;
  double setup_ms = 0.0;
  int slices = 1;
};

// OpenMP over chunks, SIMD across the systems of a chunk (cpu_simd_width() lanes).
void integrate_cpu(Ensemble& ensemble, const RunRequest& request);
int cpu_simd_width();

// True when the CUDA backend was built and a device is present.
bool cuda_available();
std::string cuda_device_name();
// Uploads, integrates on the device, downloads. Throws std::runtime_error on any CUDA failure.
DeviceTiming integrate_cuda(Ensemble& ensemble, const RunRequest& request);

// Either backend; the CUDA one returns its timing (the CPU one zeros), as integrate_observed does.
DeviceTiming integrate(Ensemble& ensemble, const RunRequest& request, const std::string& backend);

// One likelihood pass: integrates every system to destination_time with the observers of
// observers.hpp, which write tables.log_likelihood[system] (and the model curves where asked);
// the status codes land in the ensemble. Systems of 2 to kMaxObservedBodies bodies. The CUDA
// version copies the tables to the device and the results back (and returns its timing; the
// CPU version returns zeros).
void integrate_observed_cpu(Ensemble& ensemble, const RunRequest& request, const ObservationTables& tables);
DeviceTiming integrate_observed_cuda(Ensemble& ensemble, const RunRequest& request, const ObservationTables& tables);
DeviceTiming integrate_observed(Ensemble& ensemble, const RunRequest& request, const ObservationTables& tables,
                                const std::string& backend);

// Repeated likelihood batches on the GPU (LikelihoodProblem with backend=cuda). Only the
// parameters go to the device, where a set-up kernel (the caller's) turns them into initial
// conditions; a batch is cut into slices, each uploaded, set up and integrated on its own stream
// while the host uploads the next; only status codes and ln L come back (the final states stay on
// the device). Device buffers, pinned result buffers and streams are kept from one batch to the
// next. Results do not depend on the slicing (systems are independent).
class CudaObservedPipeline {
 public:
  // setup(params, count, view, offsets, jitters, stream): sets up systems [0, count) of view (its
  // padding too) from params (device memory), and their RV offsets and jitters
  // ([system * num_instruments + j]; null when there are no instruments), on the given stream.
  using DeviceSetup = std::function<void(const double* params, long count, EnsembleView view, double* offsets,
                                         double* jitters, void* stream)>;
  CudaObservedPipeline();
  ~CudaObservedPipeline();
  CudaObservedPipeline(const CudaObservedPipeline&) = delete;
  CudaObservedPipeline& operator=(const CudaObservedPipeline&) = delete;
  // params: num_systems x num_parameters host values. tables: host pointers (offsets and jitters
  // are the set-up's); ln L goes to tables.log_likelihood and the codes to status. No model
  // curves (rv_model, transit_model must be null). slices <= 0: kDefaultSlices for batches of
  // at least kSliceFrom systems, else 1.
  DeviceTiming run(long num_systems, int num_bodies, int num_parameters, const double* params,
                   const RunRequest& request, const ObservationTables& tables, const DeviceSetup& setup, int* status,
                   int slices = 0);
  static constexpr int kDefaultSlices = 8;
  static constexpr long kSliceFrom = 16384;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace swarmfit
