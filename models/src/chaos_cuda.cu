// Chaos runs on the GPU, host side: the fields to the device, the engine's launch, the fields back.
#include "swarmfit/integrators/cuda_memory.hpp"
#include "swarmfit/models/chaos.hpp"

namespace swarmfit {

void integrate_chaos_cuda(Ensemble& ensemble, ChaosState& state, const RunRequest& request) {
  GrowBuffer fields;
  ChaosObservation::Params d{nullptr, state.stride()};
  DeviceRun run;
  run.prepare = [&] { d.fields = const_cast<double*>(upload_into(fields, state.fields(), state.data().size())); };
  run.launch = [&](const EnsembleView& view, const RunRequest& r) { launch_observed<ChaosObservation>(view, r, d); };
  run.collect = [&] { download_from(state.fields(), static_cast<const double*>(d.fields), state.data().size()); };
  run_on_device(ensemble, request, run);
}

}  // namespace swarmfit
