#include "cpu_kernels.hpp"

namespace swarmfit {

void integrate_cpu_hermite_adaptive(Ensemble& ensemble, const RunRequest& request, const ObservationTables* tables) {
  integrate_cpu_scheme<HermiteAdaptive>(ensemble, request, tables);
}

}  // namespace swarmfit
