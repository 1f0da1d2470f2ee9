#include "cuda_body_kernels.cuh"

namespace swarmfit {
namespace SWARMFIT_KERNELS {

void launch_mvs(EnsembleView view, const RunRequest& request, const ObservationTables* tables) {
  if (cuda_threads_per_body(SchemeId::kMvs, view.num_bodies, request.cuda_layout, tables != nullptr)) {
    launch_bodies<MvsBodies>(view, request);
  } else {
    launch_scheme<Mvs>(view, request, tables);
  }
}

}  // namespace SWARMFIT_KERNELS
}  // namespace swarmfit
