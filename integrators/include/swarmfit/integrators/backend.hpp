// Backends: thin loops over the systems of an ensemble, each calling the same integrate_lanes().
// Host-side API of both: the engine's own integrations (integrate_cpu, integrate_cuda), and the
// dispatch over the scheme list for any observation policy (observation.hpp), whose kernels are
// instantiated one compilation unit per scheme (cpu_kernels.hpp, cuda_kernels.cuh).
#pragma once

#include <functional>
#include <memory>
#include <stdexcept>
#include <string>

#include "swarmfit/integrators/ensemble.hpp"
#include "swarmfit/integrators/registry.hpp"

namespace swarmfit {

// CUDA: how threads map to systems. One thread per system keeps a whole system in registers; a
// thread per body (cuda_body_kernels.cuh: every scheme that has such a kernel, without
// observers) keeps one body there, for systems that do not fit one thread. kAuto takes a thread
// per body where the scheme's body kernel is faster (cuda_body_kernels.cuh, BodyKernels).
enum class CudaLayout : int { kAuto = 0, kThreadPerSystem = 1, kThreadPerBody = 2 };
// Whether the CUDA backend gives each body a thread: where asked for (and the scheme has a body
// kernel), or from the scheme's threshold on under kAuto; never with observers (observed kernels
// run one thread per system). False in a build without CUDA.
bool cuda_threads_per_body(SchemeId scheme, int num_bodies, CudaLayout layout, bool observed);

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
// A pipelined run (CudaBatchPipeline) reports as kernel_ms the span from the start of the first
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

// ---- CPU: OpenMP over chunks, SIMD across the systems of a chunk (cpu_simd_width() lanes).
void integrate_cpu(Ensemble& ensemble, const RunRequest& request);
int cpu_simd_width();

// Instantiated in one compilation unit per scheme and policy (cpu_kernels.hpp).
template <template <int, class> class Scheme, class Observation>
void integrate_cpu_scheme(Ensemble& ensemble, const RunRequest& request, const typename Observation::Params& params);

// Every system to request.destination_time with the policy's observer.
template <class Observation>
void integrate_cpu_observed(Ensemble& ensemble, const RunRequest& request, const typename Observation::Params& params) {
  if (ensemble.num_bodies() > Observation::kMaxBodies)
    throw std::invalid_argument("observed integrations take at most " + std::to_string(Observation::kMaxBodies) +
                                " bodies");
  ensemble.fill_padding();
  RunRequest effective = request;
  effective.step.adaptive = request.integrator->adaptive;
  switch (request.integrator->scheme) {
#define SWARMFIT_CPU_CASE(Type) \
  case SchemeId::k##Type: integrate_cpu_scheme<Type, Observation>(ensemble, effective, params); return;
    SWARMFIT_SCHEMES(SWARMFIT_CPU_CASE)
#undef SWARMFIT_CPU_CASE
  }
}

// ---- CUDA
// True when the CUDA backend was built and a device is present.
bool cuda_available();
// Throws the error of a build without the CUDA backend (its stand-ins call it).
[[noreturn]] void throw_no_cuda_backend();
std::string cuda_device_name();
// Uploads, integrates on the device, downloads. Throws std::runtime_error on any CUDA failure.
DeviceTiming integrate_cuda(Ensemble& ensemble, const RunRequest& request);

// Either backend; the CUDA one returns its timing (the CPU one zeros).
DeviceTiming integrate(Ensemble& ensemble, const RunRequest& request, const std::string& backend);

// Kernel launchers, one compilation unit per scheme and policy (cuda_kernels.cuh), twice: as
// nvcc builds them by default, and with the CPU's arithmetic (reproducible runs).
namespace fast_kernels {
template <template <int, class> class Scheme, class Observation>
void launch_scheme(EnsembleView view, const RunRequest& request, const typename Observation::Params& params);
}
namespace strict_kernels {
template <template <int, class> class Scheme, class Observation>
void launch_scheme(EnsembleView view, const RunRequest& request, const typename Observation::Params& params);
}

// Launches the integration of the systems of `view` (device memory) with the policy's observer
// on request.cuda_stream (asynchronous); params hold device pointers. Only in a build with CUDA.
template <class Observation>
void launch_observed(EnsembleView view, const RunRequest& request, const typename Observation::Params& params) {
  RunRequest effective = request;
  effective.step.adaptive = request.integrator->adaptive;
  switch (request.integrator->scheme) {
#define SWARMFIT_CUDA_CASE(Type)                                                 \
  case SchemeId::k##Type:                                                        \
    if (request.reproducible)                                                    \
      strict_kernels::launch_scheme<Type, Observation>(view, effective, params); \
    else                                                                         \
      fast_kernels::launch_scheme<Type, Observation>(view, effective, params);   \
    return;
    SWARMFIT_SCHEMES(SWARMFIT_CUDA_CASE)
#undef SWARMFIT_CUDA_CASE
  }
}

// A host ensemble through the device: uploaded, `prepare` (the caller's own uploads), `launch`
// (between the kernel timing events), `collect` (the caller's downloads), downloaded. Timing as
// DeviceTiming says; total_ms covers all of it.
struct DeviceRun {
  std::function<void()> prepare;
  std::function<void(const EnsembleView& device_view, const RunRequest& request)> launch;
  std::function<void()> collect;
};
DeviceTiming run_on_device(Ensemble& ensemble, const RunRequest& request, const DeviceRun& run);

// Repeated batches on the GPU. Only the parameters go to the device, where the caller's set-up
// kernel turns them into initial conditions; a batch is cut into slices, each uploaded, set up and
// integrated on its own stream while the host uploads the next; only the status codes and one
// value per system (the caller's output, e.g. ln L) come back (the final states stay on the
// device). Device buffers, pinned result buffers and streams are kept from one batch to the next.
// Results do not depend on the slicing (systems are independent).
class CudaBatchPipeline {
 public:
  // setup(params, first, count, view, stream): sets up systems [0, count) of view (its padding
  // too) from params (device memory: systems first .. first + count - 1 of the batch), on the
  // given stream (a cudaStream_t).
  using Setup = std::function<void(const double* params, long first, long count, EnsembleView view, void* stream)>;
  // launch(view, first, count, outputs, request): integrates them (request.cuda_stream set),
  // writing one value per system to outputs[0, count) (device memory).
  using Launch =
      std::function<void(EnsembleView view, long first, long count, double* outputs, const RunRequest& request)>;
  CudaBatchPipeline();
  ~CudaBatchPipeline();
  CudaBatchPipeline(const CudaBatchPipeline&) = delete;
  CudaBatchPipeline& operator=(const CudaBatchPipeline&) = delete;
  // params: num_systems x num_parameters host values; status and outputs: num_systems each (host).
  // slices <= 0: kDefaultSlices for batches of at least kSliceFrom systems, else 1.
  DeviceTiming run(long num_systems, int num_bodies, int num_parameters, const double* params,
                   const RunRequest& request, const Setup& setup, const Launch& launch, int* status, double* outputs,
                   int slices = 0);
  static constexpr int kDefaultSlices = 8;
  static constexpr long kSliceFrom = 16384;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace swarmfit
