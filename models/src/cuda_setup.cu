#include <vector>

#include "swarmfit/models/cuda_setup.hpp"

namespace swarmfit {

namespace {

constexpr int kSetupBlock = 128;

// One thread per slot; arrays indexed at run time live in local memory, which is fine for a
// kernel that runs once per batch and takes a few microseconds.
__global__ void setup_kernel(ModelShape shape, RvCentres centres, const double* params, long count, EnsembleView view,
                             double* offsets, double* jitters) {
  const long s = static_cast<long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (s >= view.num_chunks * kChunk) return;
  const int nb = shape.num_planets + 1;
  const int np = shape.num_parameters();
  const double* p = params + (s < count ? s : 0) * np;  // padding: a copy of system 0
  double mass[kMaxObservedBodies], pos[kMaxObservedBodies][3], vel[kMaxObservedBodies][3];
  PlanetState states[kMaxObservedBodies - 1];
  const bool valid = planet_states_of(shape, p, states).failure == kSetupOk;
  if (valid) {
    system_state_of(shape, p[0], states, pos, vel, mass);
  } else {
    stand_in_state(nb, pos, vel, mass);
  }
  const long chunk = s / kChunk;
  const int lane = static_cast<int>(s % kChunk);
  for (int i = 0; i < nb; ++i) {
    for (int d = 0; d < 3; ++d) {
      view.bodies[body_offset(chunk, kFieldX + d, i, lane, nb)] = pos[i][d];
      view.bodies[body_offset(chunk, kFieldVx + d, i, lane, nb)] = vel[i][d];
    }
    view.bodies[body_offset(chunk, kFieldMass, i, lane, nb)] = mass[i];
    view.bodies[body_offset(chunk, kFieldRadius, i, lane, nb)] = 0.0;
  }
  view.clocks[clock_offset(chunk, kClockTime, lane)] = 0.0;
  view.clocks[clock_offset(chunk, kClockTimeStep, lane)] = 0.0;
  view.clocks[clock_offset(chunk, kClockSteps, lane)] = 0.0;
  view.clocks[clock_offset(chunk, kClockStatus, lane)] =
      s >= count ? kStatusPadding : (valid ? kStatusOk : kStatusInvalidParameters);
  if (s >= count) return;
  for (int j = 0; j < shape.num_instruments; ++j) {
    if (offsets) offsets[s * shape.num_instruments + j] = p[shape.offset_parameter(j)] - centres.value[j];
    if (jitters) jitters[s * shape.num_instruments + j] = p[shape.jitter_parameter(j)];
  }
}

}  // namespace

void launch_system_setup(const ModelShape& shape, const RvCentres& centres, const double* params, long count,
                         EnsembleView view, double* offsets, double* jitters, void* stream) {
  if (shape.num_planets + 1 > kMaxObservedBodies || shape.num_instruments > kMaxInstruments)
    throw std::invalid_argument("launch_system_setup: too many planets or instruments");
  const long slots = view.num_chunks * kChunk;
  const unsigned grid = static_cast<unsigned>((slots + kSetupBlock - 1) / kSetupBlock);
  setup_kernel<<<grid, kSetupBlock, 0, static_cast<cudaStream_t>(stream)>>>(shape, centres, params, count, view,
                                                                            offsets, jitters);
  SWARMFIT_CUDA_CHECK(cudaGetLastError());
}

void setup_systems_cuda(const ModelShape& shape, const double* params, long count, Ensemble& out) {
  const std::size_t np = shape.num_parameters();
  double *d_params = nullptr, *d_bodies = nullptr, *d_clocks = nullptr;
  SWARMFIT_CUDA_CHECK(cudaMalloc(&d_params, count * np * sizeof(double)));
  SWARMFIT_CUDA_CHECK(cudaMalloc(&d_bodies, out.body_data().size() * sizeof(double)));
  SWARMFIT_CUDA_CHECK(cudaMalloc(&d_clocks, out.clock_data().size() * sizeof(double)));
  SWARMFIT_CUDA_CHECK(cudaMemcpy(d_params, params, count * np * sizeof(double), cudaMemcpyHostToDevice));
  launch_system_setup(shape, RvCentres{}, d_params, count,
                      EnsembleView{d_bodies, d_clocks, out.num_chunks(), out.num_bodies()}, nullptr, nullptr, nullptr);
  SWARMFIT_CUDA_CHECK(
      cudaMemcpy(out.body_data().data(), d_bodies, out.body_data().size() * sizeof(double), cudaMemcpyDeviceToHost));
  SWARMFIT_CUDA_CHECK(
      cudaMemcpy(out.clock_data().data(), d_clocks, out.clock_data().size() * sizeof(double), cudaMemcpyDeviceToHost));
  for (double* p : {d_params, d_bodies, d_clocks}) SWARMFIT_CUDA_CHECK(cudaFree(p));
}

}  // namespace swarmfit
