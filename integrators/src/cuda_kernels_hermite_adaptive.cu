#include "cuda_body_kernels.cuh"

namespace swarmfit {
namespace SWARMFIT_KERNELS {

void launch_hermite_adaptive(EnsembleView view, const RunRequest& request, const ObservationTables* tables) {
  if (cuda_threads_per_body(SchemeId::kHermiteAdaptive, view.num_bodies, request.cuda_layout, tables != nullptr)) {
    launch_hermite_bodies<true>(view, request);
  } else {
    launch_scheme<HermiteAdaptive>(view, request, tables);
  }
}

}  // namespace SWARMFIT_KERNELS
}  // namespace swarmfit
