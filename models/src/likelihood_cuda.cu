// The likelihood's integrations on the GPU, host side: the tables to the device, the engine's
// launch and pipeline (integrators/backend.hpp), ln L and the model curves back.
#include <mutex>
#include <vector>

#include "swarmfit/integrators/cuda_memory.hpp"
#include "swarmfit/models/likelihood_kernels.hpp"

namespace swarmfit {

namespace {

// The parameter-independent rows of the tables (RVs, transits) in d, each through up(host, count).
template <class Upload>
void upload_rows(const ObservationTables& h, ObservationTables& d, Upload&& up) {
  d.rv_time = up(h.rv_time, h.num_rv);
  d.rv_value = up(h.rv_value, h.num_rv);
  d.rv_error = up(h.rv_error, h.num_rv);
  d.rv_instrument = up(h.rv_instrument, h.num_rv);
  d.transit_time = up(h.transit_time, h.num_transits);
  d.transit_error = up(h.transit_error, h.num_transits);
  d.transit_epoch = up(h.transit_epoch, h.num_transits);
}
constexpr int kTableRows = 7;

void check_bodies(int num_bodies) {
  if (num_bodies > kMaxObservedBodies)
    throw std::invalid_argument("observed integrations take at most " + std::to_string(kMaxObservedBodies) + " bodies");
}

}  // namespace

DeviceTiming integrate_likelihood_cuda(Ensemble& ensemble, const RunRequest& request, const ObservationTables& h) {
  check_bodies(ensemble.num_bodies());
  const std::size_t systems = ensemble.num_systems();
  GrowBuffer rows[kTableRows], offsets, jitters, log_likelihood, rv_model, transit_model;
  ObservationTables d = h;
  DeviceRun run;
  run.prepare = [&] {
    int row = 0;
    upload_rows(h, d, [&](const auto* host, std::size_t count) { return upload_into(rows[row++], host, count); });
    d.offsets = upload_into(offsets, h.offsets, systems * h.num_instruments);
    d.jitters = upload_into(jitters, h.jitters, systems * h.num_instruments);
    // Outputs start from the host's values (padding slots are not written).
    d.log_likelihood = const_cast<double*>(upload_into(log_likelihood, h.log_likelihood, systems));
    d.rv_model = const_cast<double*>(upload_into(rv_model, h.rv_model, systems * h.num_rv));
    d.transit_model = const_cast<double*>(upload_into(transit_model, h.transit_model, systems * h.num_transits));
  };
  run.launch = [&](const EnsembleView& view, const RunRequest& r) {
    launch_observed<LikelihoodObservation>(view, r, d);
  };
  run.collect = [&] {
    auto download = [](double* host, const double* device, std::size_t count) {
      if (host && device && count)
        SWARMFIT_CUDA_CHECK(cudaMemcpy(host, device, count * sizeof(double), cudaMemcpyDeviceToHost));
    };
    download(h.log_likelihood, d.log_likelihood, systems);
    download(h.rv_model, d.rv_model, systems * h.num_rv);
    download(h.transit_model, d.transit_model, systems * h.num_transits);
  };
  return run_on_device(ensemble, request, run);
}

struct LikelihoodPipeline::Impl {
  std::mutex mutex;  // one batch at a time: the buffers are shared
  CudaBatchPipeline batches;
  GrowBuffer rows[kTableRows], offsets, jitters;
};

LikelihoodPipeline::LikelihoodPipeline() : impl_(std::make_unique<Impl>()) {}
LikelihoodPipeline::~LikelihoodPipeline() = default;

DeviceTiming LikelihoodPipeline::run(long num_systems, const ModelShape& shape, const RvCentres& centres,
                                     const double* params, const RunRequest& request, const ObservationTables& h,
                                     int* status, double* log_likelihood, int slices) {
  if (!cuda_available()) throw std::runtime_error("backend=cuda: no CUDA device is available");
  check_bodies(shape.num_planets + 1);
  if (h.rv_model || h.transit_model) throw std::invalid_argument("LikelihoodPipeline: no model curves");
  if (num_systems <= 0) return DeviceTiming{};
  std::lock_guard<std::mutex> lock(impl_->mutex);
  Impl& m = *impl_;
  const int ni = h.num_instruments;
  ObservationTables d = h;
  int row = 0;
  upload_rows(h, d, [&](const auto* host, std::size_t count) { return upload_into(m.rows[row++], host, count); });
  double* offsets = ni > 0 ? m.offsets.get<double>(static_cast<std::size_t>(num_systems) * ni) : nullptr;
  double* jitters = ni > 0 ? m.jitters.get<double>(static_cast<std::size_t>(num_systems) * ni) : nullptr;
  const auto setup = [&](const double* device_params, long first, long count, EnsembleView view, void* stream) {
    launch_system_setup(shape, centres, device_params, count, view, offsets ? offsets + first * ni : nullptr,
                        jitters ? jitters + first * ni : nullptr, stream);
  };
  const auto launch = [&](EnsembleView view, long first, long, double* outputs, const RunRequest& r) {
    ObservationTables t = d;
    t.offsets = offsets ? offsets + first * ni : nullptr;
    t.jitters = jitters ? jitters + first * ni : nullptr;
    t.log_likelihood = outputs;
    launch_observed<LikelihoodObservation>(view, r, t);
  };
  return m.batches.run(num_systems, shape.num_planets + 1, shape.num_parameters(), params, request, setup, launch,
                       status, log_likelihood, slices);
}

}  // namespace swarmfit
