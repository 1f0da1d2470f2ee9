#include "cpu_kernels.hpp"

namespace swarmfit {

void integrate_cpu_hermite(Ensemble& ensemble, const RunRequest& request) {
  integrate_cpu_scheme<Hermite>(ensemble, request);
}

}  // namespace swarmfit
