// The likelihood observer's integrations (likelihood_observer.hpp) on either backend: one pass
// over a host ensemble, and the GPU's pipelined batches. LikelihoodProblem is their user.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "swarmfit/integrators/backend.hpp"
#include "swarmfit/models/cuda_setup.hpp"
#include "swarmfit/models/likelihood_observer.hpp"

namespace swarmfit {

// cuda_layout = auto takes a thread per body (for mvs in Jacobi coordinates) from this many bodies
// in batches that cannot fill the GPU a thread per system (likelihood_cuda.cu, with_layout).
// Packed launches (likelihood_packing.hpp) have no such kernel: they run a thread per system.
constexpr int kCudaBodyLayoutFrom = 5;

// One likelihood pass: integrates every system to request.destination_time with the likelihood
// observer, which writes tables.log_likelihood[system] (and the model curves where asked); the
// status codes land in the ensemble. Systems of 2 to kMaxObservedBodies bodies. The CUDA version
// copies the tables to the device and the results back (and returns its timing; the CPU version
// returns zeros).
void integrate_likelihood_cpu(Ensemble& ensemble, const RunRequest& request, const ObservationTables& tables);
DeviceTiming integrate_likelihood_cuda(Ensemble& ensemble, const RunRequest& request, const ObservationTables& tables);
DeviceTiming integrate_likelihood(Ensemble& ensemble, const RunRequest& request, const ObservationTables& tables,
                                  const std::string& backend);

// Packed launches (likelihood_packing.hpp): the systems of several problems of the same scheme
// and body count in one launch. CPU: `ensemble` holds every target's systems set up, target after
// target from chunk boundaries; `tables` (host memory) says whose each chunk is.
void integrate_packed_cpu(Ensemble& ensemble, const RunRequest& request, const PackedTables& tables);

// CUDA: one target of a packed launch, as LikelihoodPipeline::run takes it. Its tables hold host
// pointers to its rows (no per-system arrays); outputs are host arrays of num_systems.
struct PackedTarget {
  ObservationTables tables;
  SystemRun run;
  ModelShape shape;
  RvCentres centres;
  const double* params = nullptr;  // num_systems x shape.num_parameters()
  long num_systems = 0;
  double* log_likelihood = nullptr;  // ln L as the kernel wrote it (the caller applies the status)
  int* status = nullptr;
};
// Every target's parameters and rows to the device, each target's set-up kernel, ONE integration
// kernel for all, and ln L and status back. All targets share request.integrator and num_bodies.
DeviceTiming integrate_packed_cuda(const std::vector<PackedTarget>& targets, int num_bodies, const RunRequest& request);

// Repeated likelihood batches on the GPU (LikelihoodProblem with backend=cuda): only the
// parameters go to the device, where the set-up kernel (cuda_setup.hpp) turns them into initial
// conditions and RV offsets and jitters, slice by slice on the integrators' CudaBatchPipeline;
// only ln L and the status codes come back. The tables' rows are uploaded once per batch.
class LikelihoodPipeline {
 public:
  LikelihoodPipeline();
  ~LikelihoodPipeline();
  LikelihoodPipeline(const LikelihoodPipeline&) = delete;
  LikelihoodPipeline& operator=(const LikelihoodPipeline&) = delete;
  // params: num_systems x shape.num_parameters() host values; tables: host pointers, no model
  // curves. Writes status and log_likelihood (num_systems each). slices: CudaBatchPipeline's.
  DeviceTiming run(long num_systems, const ModelShape& shape, const RvCentres& centres, const double* params,
                   const RunRequest& request, const ObservationTables& tables, int* status, double* log_likelihood,
                   int slices = 0);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace swarmfit
