// Built instead of cuda_backend.cu when the CUDA backend is switched off (SWARMFIT_CUDA=OFF or
// no nvcc): the CPU backend is complete on its own.
#include <stdexcept>

#include "swarmfit/integrators/backend.hpp"
#include "swarmfit/integrators/cuda_wait.hpp"

namespace swarmfit {

void throw_no_cuda_backend() {
  throw std::runtime_error(
      "backend=cuda: this build of swarmfit has no CUDA backend (configure with SWARMFIT_CUDA=ON)");
}

void cuda_wait_blocking() {}
void cuda_use_device(int) {}
void cuda_bind_thread() noexcept {}
bool cuda_available() { return false; }
std::string cuda_device_name() { return "none (built without CUDA)"; }
bool cuda_threads_per_body(SchemeId, int, CudaLayout, bool) { return false; }
DeviceTiming integrate_cuda(Ensemble&, const RunRequest&) { throw_no_cuda_backend(); }
DeviceTiming run_on_device(Ensemble&, const RunRequest&, const DeviceRun&) { throw_no_cuda_backend(); }
struct CudaBatchPipeline::Impl {};
CudaBatchPipeline::CudaBatchPipeline() = default;
CudaBatchPipeline::~CudaBatchPipeline() = default;
DeviceTiming CudaBatchPipeline::run(long, int, int, const double*, const RunRequest&, const Setup&, const Launch&, int*,
                                    double*, int) {
  throw_no_cuda_backend();
}

}  // namespace swarmfit
