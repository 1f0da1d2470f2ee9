#include "cpu_kernels.hpp"

namespace swarmfit {

void integrate_cpu_rkck(Ensemble& ensemble, const RunRequest& request, const ObservationTables* tables) {
  integrate_cpu_scheme<Rkck>(ensemble, request, tables);
}

}  // namespace swarmfit
