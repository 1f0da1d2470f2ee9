#include "cuda_body_kernels.cuh"

namespace swarmfit {
namespace SWARMFIT_KERNELS {

void launch_leapfrog(EnsembleView view, const RunRequest& request, const ObservationTables* tables) {
  if (cuda_threads_per_body(SchemeId::kLeapfrog, view.num_bodies, request.cuda_layout, tables != nullptr)) {
    launch_bodies<LeapfrogBodies>(view, request);
  } else {
    launch_scheme<Leapfrog>(view, request, tables);
  }
}

}  // namespace SWARMFIT_KERNELS
}  // namespace swarmfit
