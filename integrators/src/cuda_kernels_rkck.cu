#include "cuda_body_kernels.cuh"

namespace swarmfit {
namespace SWARMFIT_KERNELS {

void launch_rkck(EnsembleView view, const RunRequest& request, const ObservationTables* tables) {
  if (cuda_threads_per_body(SchemeId::kRkck, view.num_bodies, request.cuda_layout, tables != nullptr)) {
    launch_bodies<RkckBodies>(view, request);
  } else {
    launch_scheme<Rkck>(view, request, tables);
  }
}

}  // namespace SWARMFIT_KERNELS
}  // namespace swarmfit
