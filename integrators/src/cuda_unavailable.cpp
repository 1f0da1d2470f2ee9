// Built instead of cuda_backend.cu when the CUDA backend is switched off (SWARMFIT_CUDA=OFF or
// no nvcc): the CPU backend is complete on its own.
#include <stdexcept>

#include "swarmfit/integrators/backend.hpp"

namespace swarmfit {

bool cuda_available() { return false; }
std::string cuda_device_name() { return "none (built without CUDA)"; }
DeviceTiming integrate_cuda(Ensemble&, const RunRequest&) {
  throw std::runtime_error(
      "backend=cuda: this build of swarmfit has no CUDA backend (configure with SWARMFIT_CUDA=ON)");
}
struct CudaObservedPipeline::Impl {};
CudaObservedPipeline::CudaObservedPipeline() = default;
CudaObservedPipeline::~CudaObservedPipeline() = default;
DeviceTiming CudaObservedPipeline::run(long, int, int, const double*, const RunRequest& request,
                                       const ObservationTables&, const DeviceSetup&, int*, int) {
  Ensemble none(1, 2);
  return integrate_cuda(none, request);
}
DeviceTiming integrate_observed_cuda(Ensemble& ensemble, const RunRequest& request, const ObservationTables&) {
  return integrate_cuda(ensemble, request);
}

}  // namespace swarmfit
