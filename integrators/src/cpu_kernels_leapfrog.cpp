#include "cpu_kernels.hpp"

namespace swarmfit {

void integrate_cpu_leapfrog(Ensemble& ensemble, const RunRequest& request, const ObservationTables* tables) {
  integrate_cpu_scheme<Leapfrog>(ensemble, request, tables);
}

}  // namespace swarmfit
