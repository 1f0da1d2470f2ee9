// The likelihood observer's integrations (likelihood_observer.hpp) on either backend: one pass
// over a host ensemble, and the GPU's pipelined batches. LikelihoodProblem is their user.
#pragma once

#include <memory>
#include <string>

#include "swarmfit/integrators/backend.hpp"
#include "swarmfit/models/cuda_setup.hpp"
#include "swarmfit/models/likelihood_observer.hpp"

namespace swarmfit {

// One likelihood pass: integrates every system to request.destination_time with the likelihood
// observer, which writes tables.log_likelihood[system] (and the model curves where asked); the
// status codes land in the ensemble. Systems of 2 to kMaxObservedBodies bodies. The CUDA version
// copies the tables to the device and the results back (and returns its timing; the CPU version
// returns zeros).
void integrate_likelihood_cpu(Ensemble& ensemble, const RunRequest& request, const ObservationTables& tables);
DeviceTiming integrate_likelihood_cuda(Ensemble& ensemble, const RunRequest& request, const ObservationTables& tables);
DeviceTiming integrate_likelihood(Ensemble& ensemble, const RunRequest& request, const ObservationTables& tables,
                                  const std::string& backend);

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
