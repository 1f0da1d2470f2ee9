// The GPU backend of the large-N engine is not written yet: refused in words.
#include "swarmfit/nbody/force_backend.hpp"

namespace swarmfit::nbody {

std::unique_ptr<ForceBackend> make_cuda_backend() {
  throw std::runtime_error("backend=cuda: the large-N engine has no GPU forces yet (issue 34)");
}
bool nbody_cuda_built() { return false; }

}  // namespace swarmfit::nbody
