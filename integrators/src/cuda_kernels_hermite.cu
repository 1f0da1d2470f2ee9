#include "cuda_kernels.cuh"

namespace swarmfit {

void launch_hermite(EnsembleView view, const RunRequest& request, const ObservationTables* tables) {
  launch_scheme<Hermite>(view, request, tables);
}

}  // namespace swarmfit
