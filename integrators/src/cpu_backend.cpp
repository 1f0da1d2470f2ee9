#include "cpu_kernels.hpp"

namespace swarmfit {

int cpu_simd_width() { return kSimdWidth; }

namespace {

void run_cpu(Ensemble& ensemble, const RunRequest& request, const ObservationTables* tables) {
  ensemble.fill_padding();
  RunRequest effective = request;
  effective.step.adaptive = request.integrator->adaptive;
  switch (request.integrator->scheme) {
    case SchemeId::kHermite: integrate_cpu_hermite(ensemble, effective, tables); break;
    case SchemeId::kHermiteAdaptive: integrate_cpu_hermite_adaptive(ensemble, effective, tables); break;
    case SchemeId::kMvs: integrate_cpu_mvs(ensemble, effective, tables); break;
    case SchemeId::kRkck: integrate_cpu_rkck(ensemble, effective, tables); break;
    case SchemeId::kLeapfrog: integrate_cpu_leapfrog(ensemble, effective, tables); break;
  }
}

}  // namespace

void integrate_cpu(Ensemble& ensemble, const RunRequest& request) { run_cpu(ensemble, request, nullptr); }

void integrate_observed_cpu(Ensemble& ensemble, const RunRequest& request, const ObservationTables& tables) {
  run_cpu(ensemble, request, &tables);
}

DeviceTiming integrate_observed(Ensemble& ensemble, const RunRequest& request, const ObservationTables& tables,
                                const std::string& backend) {
  if (backend == "cuda") return integrate_observed_cuda(ensemble, request, tables);
  integrate_observed_cpu(ensemble, request, tables);
  return DeviceTiming{};
}

DeviceTiming integrate(Ensemble& ensemble, const RunRequest& request, const std::string& backend) {
  if (backend == "cuda") return integrate_cuda(ensemble, request);
  integrate_cpu(ensemble, request);
  return DeviceTiming{};
}

}  // namespace swarmfit
