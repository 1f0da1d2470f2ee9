#include "cuda_kernels.cuh"

namespace swarmfit {

void launch_mvs(EnsembleView view, const RunRequest& request, const ObservationTables* tables) {
  launch_scheme<Mvs>(view, request, tables);
}

}  // namespace swarmfit
