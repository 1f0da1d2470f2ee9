// Runge-Kutta-Cash-Karp 4(5) (Cash & Karp 1990, ACM TOMS 16, 201, Table 6; Press et al.,
// Numerical Recipes 2nd ed., sec. 16.2). The fifth-order solution is propagated (local
// extrapolation); the embedded fourth-order one gives the error estimate. Adaptive control:
// err = max over bodies of |dx_i| / (|x_i| + h|v_i|) and |dv_i| / (|v_i| + h|a_i|), relative to
// error_tolerance; accept if err <= 1; h_next = 0.9 h err^(-1/5) (grow at most 5x), after a
// rejection 0.9 h err^(-1/4) (shrink at most 10x), as in Numerical Recipes eq. 16.2.10.
// The accepted increments are added to positions and velocities with compensated (Kahan)
// summation (Kahan 1965, CACM 8, 40; as IAS15, Rein & Spiegel 2015, MNRAS 446, 1424): with
// steps far below the truncation limit (error_tolerance 1e-13), the round-off of x + h dx,
// biased over 1e8+ steps, is what grows the energy error, not the scheme.
#pragma once

#include "swarmfit/integrators/gravity.hpp"
#include "swarmfit/integrators/parameters.hpp"

namespace swarmfit {

template <int N, class T>
struct Rkck : InertialCoordinates<N, T> {
  using Mask = MaskOf<T>;
  static constexpr IntegratorEntry kIntegrators[] = {
      {"rkck", false, 5, false, 6, false, "Cash & Karp 1990 (ACM TOMS 16, 201)",
       "Runge-Kutta-Cash-Karp 5(4), fixed step", "time_step"},
      {"rkck_adaptive", true, 5, false, 6, false, "Cash & Karp 1990 (ACM TOMS 16, 201); Press et al. 1992 sec. 16.2",
       "Runge-Kutta-Cash-Karp 5(4), adaptive step", "time_step error_tolerance min_time_step max_time_step"}};
  struct Work {
    T acc[N][3];     // derivative at the start of the step (first stage)
    T comp_x[N][3];  // Kahan compensations: the low-order part lost from pos and vel so far
    T comp_v[N][3];
  };

  SWARMFIT_HD static void begin(Bodies<N, T>& b, Work& w, const StepParams& p, T& h_next) {
    accelerations<N>(b.pos, b.mass, p.G, w.acc);
    for (int i = 0; i < N; ++i)
      for (int d = 0; d < 3; ++d) w.comp_x[i][d] = w.comp_v[i][d] = 0.0;
    h_next = p.time_step;
  }

  // Compensated s + y (Kahan): returns the new sum and updates the running compensation c.
  SWARMFIT_HD static T kahan_add(T s, T y, T& c) {
    const T corrected = y - c;
    const T t = s + corrected;
    c = (t - s) - corrected;
    return t;
  }

  // Stage state y + h sum_k coef_k f_k of one body, for stages 0..S-1 already computed (kx, kv:
  // that body's stage derivatives). One body at a time, so that the CUDA thread-per-body kernel
  // (cuda_body_kernels.cuh) forms the same sums.
  template <int S, class Stages>
  SWARMFIT_HD static void body_stage_state(const T (&pos)[3], const T (&vel)[3], const Stages& kx, const Stages& kv,
                                           const double (&coef)[5], T h, T (&x)[3], T (&v)[3]) {
    SWARMFIT_UNROLL
    for (int d = 0; d < 3; ++d) {
      T dx = 0.0, dv = 0.0;
      SWARMFIT_UNROLL
      for (int k = 0; k < S; ++k) {
        dx += coef[k] * kx[k][d];
        dv += coef[k] * kv[k][d];
      }
      x[d] = pos[d] + h * dx;
      v[d] = vel[d] + h * dv;
    }
  }

  // Stage state y + h sum_k coef_k f_k, for stages 0..S-1 already computed.
  template <int S>
  SWARMFIT_HD static void stage_state(const Bodies<N, T>& b, const T (&kx)[6][N][3], const T (&kv)[6][N][3],
                                      const double (&coef)[5], T h, T (&x)[N][3], T (&v)[N][3]) {
    SWARMFIT_UNROLL_BODIES(N)
    for (int i = 0; i < N; ++i) {
      T bx[6][3], bv[6][3];
      SWARMFIT_UNROLL
      for (int k = 0; k < S; ++k) {
        SWARMFIT_UNROLL
        for (int d = 0; d < 3; ++d) {
          bx[k][d] = kx[k][i][d];
          bv[k][d] = kv[k][i][d];
        }
      }
      body_stage_state<S>(b.pos[i], b.vel[i], bx, bv, coef, h, x[i], v[i]);
    }
  }

  // One body's fifth-order update, added compensated into (x, v) with compensations (cx, cv) (in:
  // the running ones, out: the new ones), and its error term: max(|dx5 - dx4| / (|x| + h|v|),
  // |dv5 - dv4| / (|v| + h|a|)).
  template <class Stages>
  SWARMFIT_HD static T body_update(const T (&pos)[3], const T (&vel)[3], const T (&acc)[3], const Stages& kx,
                                   const Stages& kv, T h, T (&x)[3], T (&v)[3], T (&cx)[3], T (&cv)[3]) {
    const double c5th[6] = {37.0 / 378.0, 0.0, 250.0 / 621.0, 125.0 / 594.0, 0.0, 512.0 / 1771.0};
    const double c4th[6] = {2825.0 / 27648.0, 0.0, 18575.0 / 48384.0, 13525.0 / 55296.0, 277.0 / 14336.0, 0.25};
    T ex2 = 0.0, ev2 = 0.0, x2 = 0.0, v2 = 0.0, a2 = 0.0;
    SWARMFIT_UNROLL
    for (int d = 0; d < 3; ++d) {
      T dx5 = 0.0, dv5 = 0.0, dx4 = 0.0, dv4 = 0.0;
      SWARMFIT_UNROLL
      for (int k = 0; k < 6; ++k) {
        dx5 += c5th[k] * kx[k][d];
        dv5 += c5th[k] * kv[k][d];
        dx4 += c4th[k] * kx[k][d];
        dv4 += c4th[k] * kv[k][d];
      }
      // The new state, added compensated: the increment's low-order bits that a plain sum
      // drops are carried to the next step.
      x[d] = kahan_add(pos[d], h * dx5, cx[d]);
      v[d] = kahan_add(vel[d], h * dv5, cv[d]);
      const T ex = h * (dx5 - dx4), ev = h * (dv5 - dv4);
      ex2 += ex * ex;
      ev2 += ev * ev;
      x2 += pos[d] * pos[d];
      v2 += vel[d] * vel[d];
      a2 += acc[d] * acc[d];
    }
    const T scale_x = lane_sqrt(x2) + lane_abs(h) * lane_sqrt(v2) + 1e-300;
    const T scale_v = lane_sqrt(v2) + lane_abs(h) * lane_sqrt(a2) + 1e-300;
    return lane_max(lane_sqrt(ex2) / scale_x, lane_sqrt(ev2) / scale_v);
  }

  // Step control from the system's error (the max over its bodies of body_update's terms).
  SWARMFIT_HD static void control(T err, T h, const StepParams& p, T& h_next, Mask& accepted) {
    if (p.adaptive) {
      err = err / p.error_tolerance;
      accepted = err <= 1.0;
      const T safe_err = lane_max(err, T(1e-30));
      // err^(-1/5) and err^(-1/4) with +, -, *, /, sqrt only: rounded alike on the CPU and the GPU
      // (lanes.hpp), so reproducible runs take the same steps on both.
      const T grow = lane_min(T(5.0), 0.9 * inverse_fifth_root(safe_err));
      const T shrink = lane_max(T(0.1), 0.9 / lane_sqrt(lane_sqrt(safe_err)));
      h_next = h * select(accepted, grow, shrink);
      h_next = lane_min(lane_max(h_next, T(p.min_time_step)), T(p.max_time_step));
      // At the minimum step, accept rather than loop forever.
      accepted = mask_or(accepted, h <= p.min_time_step);
    } else {
      accepted = Mask(true);
      h_next = p.time_step;
    }
  }

  // The Cash-Karp tableau's stage coefficients: rows b2..b6 (Cash & Karp 1990, Table 6).
  struct Tableau {
    double row[5][5];
  };
  SWARMFIT_HD static Tableau tableau() {
    return Tableau{{{1.0 / 5.0, 0, 0, 0, 0},
                    {3.0 / 40.0, 9.0 / 40.0, 0, 0, 0},
                    {3.0 / 10.0, -9.0 / 10.0, 6.0 / 5.0, 0, 0},
                    {-11.0 / 54.0, 5.0 / 2.0, -70.0 / 27.0, 35.0 / 27.0, 0},
                    {1631.0 / 55296.0, 175.0 / 512.0, 575.0 / 13824.0, 44275.0 / 110592.0, 253.0 / 4096.0}}};
  }

  SWARMFIT_HD static Mask step(Bodies<N, T>& b, Work& w, T h, const StepParams& p, T& h_next, Mask& accepted) {
    const Tableau t = tableau();
    T kx[6][N][3], kv[6][N][3];
    T x[N][3], v[N][3];
    SWARMFIT_UNROLL_BODIES(N)
    for (int i = 0; i < N; ++i) {
      SWARMFIT_UNROLL
      for (int d = 0; d < 3; ++d) {
        kx[0][i][d] = b.vel[i][d];
        kv[0][i][d] = w.acc[i][d];
      }
    }
    stage_state<1>(b, kx, kv, t.row[0], h, x, v);
    accelerations<N>(x, b.mass, p.G, kv[1]);
    for (int i = 0; i < N; ++i)
      for (int d = 0; d < 3; ++d) kx[1][i][d] = v[i][d];
    stage_state<2>(b, kx, kv, t.row[1], h, x, v);
    accelerations<N>(x, b.mass, p.G, kv[2]);
    for (int i = 0; i < N; ++i)
      for (int d = 0; d < 3; ++d) kx[2][i][d] = v[i][d];
    stage_state<3>(b, kx, kv, t.row[2], h, x, v);
    accelerations<N>(x, b.mass, p.G, kv[3]);
    for (int i = 0; i < N; ++i)
      for (int d = 0; d < 3; ++d) kx[3][i][d] = v[i][d];
    stage_state<4>(b, kx, kv, t.row[3], h, x, v);
    accelerations<N>(x, b.mass, p.G, kv[4]);
    for (int i = 0; i < N; ++i)
      for (int d = 0; d < 3; ++d) kx[4][i][d] = v[i][d];
    stage_state<5>(b, kx, kv, t.row[4], h, x, v);
    accelerations<N>(x, b.mass, p.G, kv[5]);
    for (int i = 0; i < N; ++i)
      for (int d = 0; d < 3; ++d) kx[5][i][d] = v[i][d];

    T err = 0.0;
    T cx[N][3], cv[N][3];
    SWARMFIT_UNROLL_BODIES(N)
    for (int i = 0; i < N; ++i) {
      T bx[6][3], bv[6][3];
      SWARMFIT_UNROLL
      for (int k = 0; k < 6; ++k) {
        SWARMFIT_UNROLL
        for (int d = 0; d < 3; ++d) {
          bx[k][d] = kx[k][i][d];
          bv[k][d] = kv[k][i][d];
        }
      }
      SWARMFIT_UNROLL
      for (int d = 0; d < 3; ++d) {
        cx[i][d] = w.comp_x[i][d];
        cv[i][d] = w.comp_v[i][d];
      }
      err = lane_max(err, body_update(b.pos[i], b.vel[i], w.acc[i], bx, bv, h, x[i], v[i], cx[i], cv[i]));
    }
    control(err, h, p, h_next, accepted);
    T acc_new[N][3];
    accelerations<N>(x, b.mass, p.G, acc_new);  // first stage of the next step (FSAL-like reuse)
    SWARMFIT_UNROLL_BODIES(N)
    for (int i = 0; i < N; ++i) {
      SWARMFIT_UNROLL
      for (int d = 0; d < 3; ++d) {
        b.pos[i][d] = select(accepted, x[i][d], b.pos[i][d]);
        b.vel[i][d] = select(accepted, v[i][d], b.vel[i][d]);
        w.comp_x[i][d] = select(accepted, cx[i][d], w.comp_x[i][d]);
        w.comp_v[i][d] = select(accepted, cv[i][d], w.comp_v[i][d]);
        w.acc[i][d] = select(accepted, acc_new[i][d], w.acc[i][d]);
      }
    }
    return Mask(true);
  }
};

}  // namespace swarmfit
