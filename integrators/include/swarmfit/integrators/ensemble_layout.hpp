// Memory layout of an ensemble, shared by the host container and the kernels.
// Structure of arrays in chunks of kChunk systems: for every (field, body) the kChunk systems of
// a chunk are consecutive, so a GPU warp (32 threads, one system each) or a CPU SIMD vector reads
// one contiguous, aligned run of memory.
#pragma once

#include <cstddef>

#include "swarmfit/integrators/driver.hpp"

namespace swarmfit {

constexpr int kChunk = 32;
enum BodyField : int {
  kFieldX = 0,
  kFieldY,
  kFieldZ,
  kFieldVx,
  kFieldVy,
  kFieldVz,
  kFieldMass,
  kFieldRadius,
  kBodyFields
};
enum ClockField : int { kClockTime = 0, kClockTimeStep, kClockStatus, kClockSteps, kClockFields };

struct EnsembleView {
  double* bodies;  // [chunk][field][body][lane]
  double* clocks;  // [chunk][clock field][lane]
  long num_chunks;
  int num_bodies;
};

SWARMFIT_HD std::size_t body_offset(long chunk, int field, int body, int lane, int num_bodies) {
  return ((static_cast<std::size_t>(chunk) * kBodyFields + field) * num_bodies + body) * kChunk + lane;
}
SWARMFIT_HD std::size_t clock_offset(long chunk, int field, int lane) {
  return (static_cast<std::size_t>(chunk) * kClockFields + field) * kChunk + lane;
}

// Load W = width(T) consecutive systems starting at `lane` of `chunk`.
template <int N, class T>
SWARMFIT_HD void load_lanes(const EnsembleView& e, long chunk, int lane, Bodies<N, T>& b, T (&radius)[N],
                            Clock<T>& clock) {
  using L = LaneTraits<T>;
  SWARMFIT_UNROLL_BODIES(N)
  for (int i = 0; i < N; ++i) {
    SWARMFIT_UNROLL
    for (int d = 0; d < 3; ++d) {
      b.pos[i][d] = L::load(e.bodies + body_offset(chunk, kFieldX + d, i, lane, N));
      b.vel[i][d] = L::load(e.bodies + body_offset(chunk, kFieldVx + d, i, lane, N));
    }
    b.mass[i] = L::load(e.bodies + body_offset(chunk, kFieldMass, i, lane, N));
    radius[i] = L::load(e.bodies + body_offset(chunk, kFieldRadius, i, lane, N));
  }
  clock.time = L::load(e.clocks + clock_offset(chunk, kClockTime, lane));
  clock.time_step = L::load(e.clocks + clock_offset(chunk, kClockTimeStep, lane));
  clock.status = L::load(e.clocks + clock_offset(chunk, kClockStatus, lane));
  clock.steps = L::load(e.clocks + clock_offset(chunk, kClockSteps, lane));
}

template <int N, class T>
SWARMFIT_HD void store_lanes(const EnsembleView& e, long chunk, int lane, const Bodies<N, T>& b,
                             const Clock<T>& clock) {
  using L = LaneTraits<T>;
  SWARMFIT_UNROLL_BODIES(N)
  for (int i = 0; i < N; ++i) {
    SWARMFIT_UNROLL
    for (int d = 0; d < 3; ++d) {
      L::store(e.bodies + body_offset(chunk, kFieldX + d, i, lane, N), b.pos[i][d]);
      L::store(e.bodies + body_offset(chunk, kFieldVx + d, i, lane, N), b.vel[i][d]);
    }
  }
  L::store(e.clocks + clock_offset(chunk, kClockTime, lane), clock.time);
  L::store(e.clocks + clock_offset(chunk, kClockTimeStep, lane), clock.time_step);
  L::store(e.clocks + clock_offset(chunk, kClockStatus, lane), clock.status);
  L::store(e.clocks + clock_offset(chunk, kClockSteps, lane), clock.steps);
}

}  // namespace swarmfit
