#include "cuda_kernels.cuh"

namespace swarmfit {

void launch_hermite(EnsembleView view, const RunRequest& request) { launch_scheme<Hermite>(view, request); }

}  // namespace swarmfit
