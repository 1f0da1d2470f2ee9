#include "cuda_kernels.cuh"

namespace swarmfit {

void launch_mvs(EnsembleView view, const RunRequest& request) { launch_scheme<Mvs>(view, request); }

}  // namespace swarmfit
