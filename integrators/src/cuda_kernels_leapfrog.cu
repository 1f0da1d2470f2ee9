#include "cuda_kernels.cuh"

namespace swarmfit {

void launch_leapfrog(EnsembleView view, const RunRequest& request, const ObservationTables* tables) {
  launch_scheme<Leapfrog>(view, request, tables);
}

}  // namespace swarmfit
