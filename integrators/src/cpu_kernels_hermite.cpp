#include "cpu_kernels.hpp"

namespace swarmfit {

void integrate_cpu_hermite(Ensemble& ensemble, const RunRequest& request, const ObservationTables* tables) {
  integrate_cpu_scheme<Hermite>(ensemble, request, tables);
}

}  // namespace swarmfit
