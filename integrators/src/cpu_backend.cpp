// The engine's own CPU integrations. The kernels are compiled once, per scheme, in the generated
// compilation units (cpu_kernels.hpp); this file only dispatches to them.
#include "swarmfit/integrators/backend.hpp"
#include "swarmfit/integrators/lanes.hpp"
#include "swarmfit/integrators/observation.hpp"
#include "swarmfit/integrators/scheme_list.hpp"

namespace swarmfit {

int cpu_simd_width() { return kSimdWidth; }

void integrate_cpu(Ensemble& ensemble, const RunRequest& request) {
  integrate_cpu_observed<Unobserved>(ensemble, request, Unobserved::Params{});
}

DeviceTiming integrate(Ensemble& ensemble, const RunRequest& request, const std::string& backend) {
  if (backend == "cuda") return integrate_cuda(ensemble, request);
  integrate_cpu(ensemble, request);
  return DeviceTiming{};
}

}  // namespace swarmfit
