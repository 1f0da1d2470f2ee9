#include "cpu_kernels.hpp"

namespace swarmfit {

void integrate_cpu_leapfrog(Ensemble& ensemble, const RunRequest& request) {
  integrate_cpu_scheme<Leapfrog>(ensemble, request);
}

}  // namespace swarmfit
