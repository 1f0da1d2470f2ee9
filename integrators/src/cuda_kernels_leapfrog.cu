#include "cuda_kernels.cuh"

namespace swarmfit {

void launch_leapfrog(EnsembleView view, const RunRequest& request) { launch_scheme<Leapfrog>(view, request); }

}  // namespace swarmfit
