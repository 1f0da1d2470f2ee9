// Backends: thin loops over the systems of an ensemble, each calling the same integrate_lanes().
#pragma once

#include <string>

#include "swarmfit/integrators/ensemble.hpp"
#include "swarmfit/integrators/observers.hpp"
#include "swarmfit/integrators/registry.hpp"

namespace swarmfit {

// CUDA: how threads map to systems. One thread per system keeps a whole system in registers; a
// thread per body (hermite, hermite_adaptive without observers) keeps one body there, for systems
// that do not fit one thread. kAuto takes a thread per body from kBodyThreadsFrom bodies on.
enum class CudaLayout : int { kAuto = 0, kThreadPerSystem = 1, kThreadPerBody = 2 };
constexpr int kBodyThreadsFrom = 9;
// Whether the CUDA backend gives each body a thread: hermite (fixed or adaptive) without
// observers, where asked for, or from kBodyThreadsFrom bodies on under kAuto.
inline bool cuda_threads_per_body(SchemeId scheme, int num_bodies, CudaLayout layout, bool observed) {
  const bool hermite = scheme == SchemeId::kHermite || scheme == SchemeId::kHermiteAdaptive;
  if (!hermite || observed || layout == CudaLayout::kThreadPerSystem) return false;
  return layout == CudaLayout::kThreadPerBody || num_bodies >= kBodyThreadsFrom;
}

struct RunRequest {
  const IntegratorInfo* integrator = nullptr;
  StepParams step;
  MonitorParams monitors;
  double destination_time = 0.0;
  int threads = 0;  // CPU: OpenMP threads (0 = all)
  CudaLayout cuda_layout = CudaLayout::kAuto;
};

// Kernel-only and end-to-end (copies included) times of a CUDA run, in milliseconds.
struct DeviceTiming {
  double kernel_ms = 0.0;
  double total_ms = 0.0;
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

}  // namespace swarmfit
