// Built instead of cuda_setup.cu without the CUDA backend.
#include <stdexcept>

#include "swarmfit/models/cuda_setup.hpp"

namespace swarmfit {

void launch_system_setup(const ModelShape&, const RvCentres&, const double*, long, EnsembleView, double*, double*,
                         void*) {
  throw std::runtime_error(
      "backend=cuda: this build of swarmfit has no CUDA backend (configure with SWARMFIT_CUDA=ON)");
}

void setup_systems_cuda(const ModelShape& shape, const double* params, long count, Ensemble& out) {
  launch_system_setup(shape, RvCentres{}, params, count, out.view(), nullptr, nullptr, nullptr);
}

}  // namespace swarmfit
