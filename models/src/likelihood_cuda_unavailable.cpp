// Built instead of likelihood_cuda.cu and cuda_setup.cu without the CUDA backend.
#include "swarmfit/models/likelihood_kernels.hpp"

namespace swarmfit {

void launch_system_setup(const ModelShape&, const RvCentres&, const double*, long, EnsembleView, double*, double*,
                         void*) {
  throw_no_cuda_backend();
}
void setup_systems_cuda(const ModelShape&, const double*, long, Ensemble&) { throw_no_cuda_backend(); }
DeviceTiming integrate_likelihood_cuda(Ensemble&, const RunRequest&, const ObservationTables&) {
  throw_no_cuda_backend();
}
DeviceTiming integrate_packed_cuda(const std::vector<PackedTarget>&, int, const RunRequest&) {
  throw_no_cuda_backend();
}
struct LikelihoodPipeline::Impl {};
LikelihoodPipeline::LikelihoodPipeline() = default;
LikelihoodPipeline::~LikelihoodPipeline() = default;
DeviceTiming LikelihoodPipeline::run(long, const ModelShape&, const RvCentres&, const double*, const RunRequest&,
                                     const ObservationTables&, int*, double*, int) {
  throw_no_cuda_backend();
}

}  // namespace swarmfit
