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
  struct Work {
    T acc[N][3];
  };
  SWARMFIT_HD static void begin(Bodies<N, T>& b, Work& w, const StepParams& p, T& h_next) {
    accelerations<N>(b.pos, b.mass, p.G, w.acc);
    h_next = p.time_step;
  }
  SWARMFIT_HD static Mask step(Bodies<N, T>& b, Work& w, T h, const StepParams& p, T& h_next, Mask& accepted) {
    const T half = 0.5 * h;
    SWARMFIT_UNROLL_BODIES(N)
    for (int i = 0; i < N; ++i) {
      SWARMFIT_UNROLL
      for (int d = 0; d < 3; ++d) {
        b.vel[i][d] = b.vel[i][d] + half * w.acc[i][d];
        b.pos[i][d] = b.pos[i][d] + h * b.vel[i][d];
      }
    }
    accelerations<N>(b.pos, b.mass, p.G, w.acc);
    SWARMFIT_UNROLL_BODIES(N)
    for (int i = 0; i < N; ++i) {
      SWARMFIT_UNROLL
      for (int d = 0; d < 3; ++d) b.vel[i][d] = b.vel[i][d] + half * w.acc[i][d];
    }
    h_next = p.time_step;
    accepted = Mask(true);
    return Mask(true);
  }
};

}  // namespace swarmfit
