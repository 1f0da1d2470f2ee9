// Leapfrog in velocity-Verlet (kick-drift-kick) form, the simplest symplectic reference
// (Verlet 1967; e.g. Hairer, Lubich & Wanner 2003, Acta Numerica 12, eq. 1.4).
// One force evaluation per step: the closing kick's acceleration opens the next step.
#pragma once

#include "swarmfit/integrators/gravity.hpp"
#include "swarmfit/integrators/parameters.hpp"

namespace swarmfit {

template <int N, class T>
struct Leapfrog : InertialCoordinates<N, T> {
  using Mask = MaskOf<T>;
  static constexpr IntegratorEntry kIntegrators[] = {{"leapfrog", false, 2, true, 1, false,
                                                      "Verlet 1967 (Phys. Rev. 159, 98)",
                                                      "leapfrog, velocity Verlet (kick-drift-kick)", "time_step"}};
  struct Work {
    T acc[N][3];
  };
  SWARMFIT_HD static void begin(Bodies<N, T>& b, Work& w, const StepParams& p, T& h_next) {
    accelerations<N>(b.pos, b.mass, p.G, w.acc);
    h_next = p.time_step;
  }
  // One body's opening half kick and drift, and its closing half kick, with the roundings written
  // out: the thread-per-body CUDA kernel (cuda_body_kernels.cuh) calls the same functions.
  SWARMFIT_HD static void kick_drift(T (&x)[3], T (&v)[3], const T (&a)[3], T h, T half) {
    SWARMFIT_UNROLL
    for (int d = 0; d < 3; ++d) {
      v[d] = lane_fma(half, a[d], v[d]);
      x[d] = lane_fma(h, v[d], x[d]);
    }
  }
  SWARMFIT_HD static void kick(T (&v)[3], const T (&a)[3], T half) {
    SWARMFIT_UNROLL
    for (int d = 0; d < 3; ++d) v[d] = lane_fma(half, a[d], v[d]);
  }
  SWARMFIT_HD static Mask step(Bodies<N, T>& b, Work& w, T h, const StepParams& p, T& h_next, Mask& accepted) {
    const T half = 0.5 * h;
    SWARMFIT_UNROLL_BODIES(N)
    for (int i = 0; i < N; ++i) kick_drift(b.pos[i], b.vel[i], w.acc[i], h, half);
    accelerations<N>(b.pos, b.mass, p.G, w.acc);
    SWARMFIT_UNROLL_BODIES(N)
    for (int i = 0; i < N; ++i) kick(b.vel[i], w.acc[i], half);
    h_next = p.time_step;
    accepted = Mask(true);
    return Mask(true);
  }
};

}  // namespace swarmfit
