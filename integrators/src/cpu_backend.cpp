#include "cpu_kernels.hpp"

namespace swarmfit {

int cpu_simd_width() { return kSimdWidth; }

void integrate_cpu(Ensemble& ensemble, const RunRequest& request) {
  ensemble.fill_padding();
  RunRequest effective = request;
  effective.step.adaptive = request.integrator->adaptive;
  switch (request.integrator->scheme) {
    case SchemeId::kHermite: integrate_cpu_hermite(ensemble, effective); break;
    case SchemeId::kMvs: integrate_cpu_mvs(ensemble, effective); break;
    case SchemeId::kRkck: integrate_cpu_rkck(ensemble, effective); break;
    case SchemeId::kLeapfrog: integrate_cpu_leapfrog(ensemble, effective); break;
  }
}

void integrate(Ensemble& ensemble, const RunRequest& request, const std::string& backend) {
  if (backend == "cuda") {
    integrate_cuda(ensemble, request);
  } else {
    integrate_cpu(ensemble, request);
  }
}

}  // namespace swarmfit
