// Hermite 4th-order predictor-corrector, P(EC)^2 as in Swarm-NG (Dindar et al. 2013, sec. 3.1):
// predict with the Taylor series to the jerk, then evaluate and correct twice with the
// time-symmetric corrector of Hut, Makino & McMillan (1995, ApJ 443, L93, eq. 5-6):
//   v1 = v0 + h/2 (a0 + a1) + h^2/12 (j0 - j1),  x1 = x0 + h/2 (v0 + v1) + h^2/12 (a0 - a1).
// Two force evaluations per step: the last evaluation is reused as the next step's start.
// Adaptive step: Swarm-NG eq. 5, h = tau [sum_i |j_i|^2 / |a_i|^2]^(-1/2).
#pragma once

#include "swarmfit/integrators/gravity.hpp"
#include "swarmfit/integrators/parameters.hpp"

namespace swarmfit {

template <int N, class T>
struct Hermite : InertialCoordinates<N, T> {
  using Mask = MaskOf<T>;
  struct Work {
    T acc[N][3];
    T jerk[N][3];
  };

  SWARMFIT_HD static T adaptive_step(const Work& w, const StepParams& p) {
    T sum = 0.0;
    SWARMFIT_UNROLL_BODIES(N)
    for (int i = 0; i < N; ++i) {
      const T a2 = w.acc[i][0] * w.acc[i][0] + w.acc[i][1] * w.acc[i][1] + w.acc[i][2] * w.acc[i][2];
      const T j2 = w.jerk[i][0] * w.jerk[i][0] + w.jerk[i][1] * w.jerk[i][1] + w.jerk[i][2] * w.jerk[i][2];
      sum += select(a2 > 0.0, j2 / a2, T(0.0));  // a body feeling no force (test-particle star) sets no scale
    }
    const T h = p.time_step_factor / lane_sqrt(sum);
    return lane_min(lane_max(h, T(p.min_time_step)), T(p.max_time_step));
  }

  SWARMFIT_HD static void begin(Bodies<N, T>& b, Work& w, const StepParams& p, T& h_next) {
    accelerations_and_jerks<N>(b.pos, b.vel, b.mass, p.G, w.acc, w.jerk);
    h_next = p.adaptive ? adaptive_step(w, p) : T(p.time_step);
  }

  SWARMFIT_HD static Mask step(Bodies<N, T>& b, Work& w, T h, const StepParams& p, T& h_next, Mask& accepted) {
    T x0[N][3], v0[N][3], a0[N][3], j0[N][3];
    const T h2 = 0.5 * h;
    const T h3 = h * (1.0 / 3.0);  // products: a GPU division is ~10 FMAs
    SWARMFIT_UNROLL_BODIES(N)
    for (int i = 0; i < N; ++i) {
      SWARMFIT_UNROLL
      for (int d = 0; d < 3; ++d) {
        x0[i][d] = b.pos[i][d];
        v0[i][d] = b.vel[i][d];
        a0[i][d] = w.acc[i][d];
        j0[i][d] = w.jerk[i][d];
        b.pos[i][d] = x0[i][d] + h * (v0[i][d] + h2 * (a0[i][d] + h3 * j0[i][d]));
        b.vel[i][d] = v0[i][d] + h * (a0[i][d] + h2 * j0[i][d]);
      }
    }
    const T h6 = h * (1.0 / 6.0);  // h/2 * h/6 = h^2/12: four operations per component
    for (int iteration = 0; iteration < 2; ++iteration) {
      accelerations_and_jerks<N>(b.pos, b.vel, b.mass, p.G, w.acc, w.jerk);
      SWARMFIT_UNROLL_BODIES(N)
      for (int i = 0; i < N; ++i) {
        SWARMFIT_UNROLL
        for (int d = 0; d < 3; ++d) {
          b.vel[i][d] = v0[i][d] + h2 * ((a0[i][d] + w.acc[i][d]) + h6 * (j0[i][d] - w.jerk[i][d]));
          b.pos[i][d] = x0[i][d] + h2 * ((v0[i][d] + b.vel[i][d]) + h6 * (a0[i][d] - w.acc[i][d]));
        }
      }
    }
    h_next = p.adaptive ? adaptive_step(w, p) : T(p.time_step);
    accepted = Mask(true);
    return Mask(true);
  }
};

}  // namespace swarmfit
