#include "cpu_kernels.hpp"

namespace swarmfit {

void integrate_cpu_rkck(Ensemble& ensemble, const RunRequest& request) {
  integrate_cpu_scheme<Rkck>(ensemble, request);
}

}  // namespace swarmfit
