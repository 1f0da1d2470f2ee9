// Builds without CUDA: the GPU mesh forces refuse with a clear message.
#include <stdexcept>

#include "swarmfit/pm/pm.hpp"

namespace swarmfit::pm {

template <class Real>
std::unique_ptr<MeshForces<Real>> make_cuda_mesh_forces(const PmSettings&) {
  throw std::runtime_error("backend=cuda: this build has no CUDA (the particle-mesh engine runs on the CPU)");
}
template std::unique_ptr<MeshForces<float>> make_cuda_mesh_forces(const PmSettings&);
template std::unique_ptr<MeshForces<double>> make_cuda_mesh_forces(const PmSettings&);
bool pm_cuda_built() { return false; }

}  // namespace swarmfit::pm
