// Built instead of chaos_cuda.cu without the CUDA backend.
#include "swarmfit/models/chaos.hpp"

namespace swarmfit {

void integrate_chaos_cuda(Ensemble&, ChaosState&, const RunRequest&) { throw_no_cuda_backend(); }

}  // namespace swarmfit
