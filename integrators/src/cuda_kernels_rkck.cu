#include "cuda_kernels.cuh"

namespace swarmfit {

void launch_rkck(EnsembleView view, const RunRequest& request, const ObservationTables* tables) {
  launch_scheme<Rkck>(view, request, tables);
}

}  // namespace swarmfit
