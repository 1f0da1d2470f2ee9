#include "cpu_kernels.hpp"

namespace swarmfit {

void integrate_cpu_mvs(Ensemble& ensemble, const RunRequest& request, const ObservationTables* tables) {
  integrate_cpu_scheme<Mvs>(ensemble, request, tables);
}

}  // namespace swarmfit
