#include "cuda_kernels.cuh"

namespace swarmfit {

void launch_rkck(EnsembleView view, const RunRequest& request) { launch_scheme<Rkck>(view, request); }

}  // namespace swarmfit
