// A build without CUDA: the GPU backend of the large-N engine is refused in words.
#include "swarmfit/nbody/force_backend.hpp"
#include "swarmfit/nbody/particles.hpp"

namespace swarmfit::nbody {

std::unique_ptr<ForceBackend> make_cuda_backend() {
  throw std::runtime_error("backend=cuda: this swarmfit was built without CUDA");
}
bool nbody_cuda_built() { return false; }
std::unique_ptr<ParticleBackend> make_cuda_particles() {
  throw std::runtime_error("backend=cuda: this swarmfit was built without CUDA");
}

}  // namespace swarmfit::nbody
