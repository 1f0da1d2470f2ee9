#include "swarmfit/models/likelihood_kernels.hpp"

namespace swarmfit {

void integrate_likelihood_cpu(Ensemble& ensemble, const RunRequest& request, const ObservationTables& tables) {
  integrate_cpu_observed<LikelihoodObservation>(ensemble, request, tables);
}

void integrate_packed_cpu(Ensemble& ensemble, const RunRequest& request, const PackedTables& tables) {
  integrate_cpu_observed<PackedLikelihoodObservation>(ensemble, request, tables);
}

DeviceTiming integrate_likelihood(Ensemble& ensemble, const RunRequest& request, const ObservationTables& tables,
                                  const std::string& backend) {
  if (backend == "cuda") return integrate_likelihood_cuda(ensemble, request, tables);
  integrate_likelihood_cpu(ensemble, request, tables);
  return DeviceTiming{};
}

const char* model_status_name(int code) {
  switch (code) {
    case kStatusMissedTransit: return "missed_transit";
    case kStatusInvalidParameters: return "invalid_parameters";
    case kStatusOutsidePrior: return "outside_prior";
    case kStatusUnstable: return "unstable";
    default: return status_name(code);
  }
}

}  // namespace swarmfit
