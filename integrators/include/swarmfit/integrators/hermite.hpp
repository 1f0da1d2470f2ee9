// Hermite 4th-order predictor-corrector, P(EC)^2 as in Swarm-NG (Dindar et al. 2013, sec. 3.1):
// predict with the Taylor series to the jerk, then evaluate and correct twice with the
// time-symmetric corrector of Hut, Makino & McMillan (1995, ApJ 443, L93, eq. 5-6):
//   v1 = v0 + h/2 (a0 + a1) + h^2/12 (j0 - j1),  x1 = x0 + h/2 (v0 + v1) + h^2/12 (a0 - a1).
// Two force evaluations per step: the last evaluation is reused as the next step's start.
// Hermite: fixed step. HermiteAdaptive: the step criterion of Swarm-NG eq. 5,
// tau(x) = t_f [sum_i |j_i|^2 / |a_i|^2]^(-1/2), made time-symmetric (Hut, Makino & McMillan 1995:
// a step h from x0 to x1 is kept when h = (tau(x0) + tau(x1)) / 2), with the increments added to
// the positions and velocities by compensated summation, and the positions corrected with the
// jerks as well (the modified corrector of Kokubo & Makino 2004, hermite_correct_compensated): an
// explicit criterion, and the rounding of x + dx, each make the energy error grow secularly
// (bench/RESULTS.md, "hermite_adaptive").
// The per-body parts (predictor, corrector, the body's term of eq. 5) are functions of one body,
// called here for every body of a system and by the CUDA kernels that give each body a thread.
#pragma once

#include "swarmfit/integrators/gravity.hpp"
#include "swarmfit/integrators/parameters.hpp"

namespace swarmfit {

// Taylor predictor of one body to the jerk; h2 = h/2, h3 = h/3 (products: a GPU division is
// ~10 FMAs). Horner's form with explicit FMAs (lane_fma), as nvcc contracts it: the CPU backend,
// built without contraction, then rounds as the GPU does and needs half the instructions.
template <class T>
SWARMFIT_HD void hermite_predict(const T (&x0)[3], const T (&v0)[3], const T (&a0)[3], const T (&j0)[3], T h, T h2,
                                 T h3, T (&x)[3], T (&v)[3]) {
  SWARMFIT_UNROLL
  for (int d = 0; d < 3; ++d) {
    x[d] = lane_fma(h, lane_fma(h2, lane_fma(h3, j0[d], a0[d]), v0[d]), x0[d]);
    v[d] = lane_fma(h, lane_fma(h2, j0[d], a0[d]), v0[d]);
  }
}

// Corrector of one body (Hut, Makino & McMillan 1995, eq. 5-6) from the start (x0, v0, a0, j0)
// and the end's acceleration and jerk (a1, j1); h2 = h/2, h6 = h/6 (h/2 * h/6 = h^2/12: four
// operations per component, two of them FMAs).
template <class T>
SWARMFIT_HD void hermite_correct(const T (&x0)[3], const T (&v0)[3], const T (&a0)[3], const T (&j0)[3],
                                 const T (&a1)[3], const T (&j1)[3], T h2, T h6, T (&x)[3], T (&v)[3]) {
  SWARMFIT_UNROLL
  for (int d = 0; d < 3; ++d) {
    v[d] = lane_fma(h2, lane_fma(h6, j0[d] - j1[d], a0[d] + a1[d]), v0[d]);
    x[d] = lane_fma(h2, lane_fma(h6, a0[d] - a1[d], v0[d] + v[d]), x0[d]);
  }
}

// One body's term |j|^2 / |a|^2 of Swarm-NG eq. 5 (0 for a body that feels no force: a
// test-particle star sets no scale), and the step from the sum of the terms.
template <class T>
SWARMFIT_HD T hermite_step_term(const T (&a)[3], const T (&j)[3]) {
  const T a2 = a[0] * a[0] + a[1] * a[1] + a[2] * a[2];
  const T j2 = j[0] * j[0] + j[1] * j[1] + j[2] * j[2];
  return select(a2 > 0.0, j2 / a2, T(0.0));
}
template <class T>
SWARMFIT_HD T hermite_step_from_terms(T sum, const StepParams& p) {
  const T h = p.time_step_factor / lane_sqrt(sum);
  return lane_min(lane_max(h, T(p.min_time_step)), T(p.max_time_step));
}

// The corrector of HermiteAdaptive, with compensated summation (Kahan 1965): the increments are
// added to x0 and v0 less the compensation c0 carried from the last step, and c = (sum - start) -
// increment keeps the low-order bits that the sum dropped, for the next step. The velocity is
// corrected as above; the position by the two-point Hermite quadrature of v that also uses the
// jerks, the "modified" Hermite corrector (Kokubo & Makino 2004, PASJ 56, 861):
//   x1 = x0 + h/2 (v0 + v1) + h^2/10 (a0 - a1) + h^3/120 (j0 + j1),
// exact for a quintic v(t), where the form above is exact for a cubic: the scheme stays 4th order
// and time-symmetric, with a smaller error. h2 = h/2, h6 = h/6; h/5 = 0.4 h2 and h/12 = 0.5 h6 are
// exact. The products are explicit FMAs, so every kernel rounds them alike.
template <class T>
SWARMFIT_HD void hermite_correct_compensated(const T (&x0)[3], const T (&v0)[3], const T (&a0)[3], const T (&j0)[3],
                                             const T (&a1)[3], const T (&j1)[3], T h2, T h6, const T (&cx0)[3],
                                             const T (&cv0)[3], T (&x)[3], T (&v)[3], T (&cx)[3], T (&cv)[3]) {
  const T h5 = 0.4 * h2, h12 = 0.5 * h6;
  SWARMFIT_UNROLL
  for (int d = 0; d < 3; ++d) {
    const T dv = lane_fma(h2, lane_fma(h6, j0[d] - j1[d], a0[d] + a1[d]), -cv0[d]);
    v[d] = v0[d] + dv;
    cv[d] = (v[d] - v0[d]) - dv;
    const T dx = lane_fma(h2, lane_fma(h5, lane_fma(h12, j0[d] + j1[d], a0[d] - a1[d]), v0[d] + v[d]), -cx0[d]);
    x[d] = x0[d] + dx;
    cx[d] = (x[d] - x0[d]) - dx;
  }
}

// The time-symmetrised step (Hut, Makino & McMillan 1995): a step h from a state of criterion
// tau0 to one of criterion tau1 is kept when |h - (tau0 + tau1) / 2| <= 1e-4 h (the symmetry
// condition solved to 1e-4: iterating further does not change the energy error),
// or when it was shortened to land on the destination (h < h_planned), or cannot shrink (the
// minimum step). Then the next step is the extrapolation tau1 + (tau1 - tau0) / 2 of the next
// symmetric step, which usually passes at once; else the step is taken again with
// (tau0 + tau1) / 2.
template <class T>
SWARMFIT_HD MaskOf<T> hermite_symmetric_step(T h, T h_planned, T tau0, T tau1, const StepParams& p, T& h_next) {
  const T symmetric = 0.5 * (tau0 + tau1);
  const MaskOf<T> accepted =
      mask_or(mask_or(h < h_planned * (1.0 - 1e-12), lane_abs(h - symmetric) <= 1e-4 * h), h <= p.min_time_step);
  const T extrapolated = lane_min(lane_max(tau1 + 0.5 * (tau1 - tau0), T(p.min_time_step)), T(p.max_time_step));
  h_next = select(accepted, extrapolated, symmetric);
  return accepted;
}

template <int N, class T>
struct Hermite : InertialCoordinates<N, T> {
  using Mask = MaskOf<T>;
  static constexpr IntegratorEntry kIntegrators[] = {
      {"hermite", false, 4, false, 2, false,
       "Makino & Aarseth 1992 (PASJ 44, 141); Hut, Makino & McMillan 1995 (ApJ 443, L93); "
       "Swarm-NG: Dindar et al. 2013 (New Astron. 23, 6)",
       "Hermite 4th order P(EC)^2, fixed step", "time_step"}};
  struct Work {
    T acc[N][3];
    T jerk[N][3];
  };

  SWARMFIT_HD static void begin(Bodies<N, T>& b, Work& w, const StepParams& p, T& h_next) {
    accelerations_and_jerks<N>(b.pos, b.vel, b.mass, p.G, w.acc, w.jerk);
    h_next = p.time_step;
  }

  SWARMFIT_HD static Mask step(Bodies<N, T>& b, Work& w, T h, const StepParams& p, T& h_next, Mask& accepted) {
    T x0[N][3], v0[N][3], a0[N][3], j0[N][3];
    const T h2 = 0.5 * h;
    const T h3 = h * (1.0 / 3.0);
    const T h6 = h * (1.0 / 6.0);
    SWARMFIT_UNROLL_BODIES(N)
    for (int i = 0; i < N; ++i) {
      SWARMFIT_UNROLL
      for (int d = 0; d < 3; ++d) {
        x0[i][d] = b.pos[i][d];
        v0[i][d] = b.vel[i][d];
        a0[i][d] = w.acc[i][d];
        j0[i][d] = w.jerk[i][d];
      }
      hermite_predict(x0[i], v0[i], a0[i], j0[i], h, h2, h3, b.pos[i], b.vel[i]);
    }
    // Unrolled up to 4 bodies, where nvcc then schedules the two evaluations together; from 5 bodies
    // the unrolled step is slower (bench/RESULTS.md, run 5).
    SWARMFIT_UNROLL_IF(N <= 4)
    for (int iteration = 0; iteration < 2; ++iteration) {
      accelerations_and_jerks<N>(b.pos, b.vel, b.mass, p.G, w.acc, w.jerk);
      SWARMFIT_UNROLL_BODIES(N)
      for (int i = 0; i < N; ++i)
        hermite_correct(x0[i], v0[i], a0[i], j0[i], w.acc[i], w.jerk[i], h2, h6, b.pos[i], b.vel[i]);
    }
    h_next = p.time_step;
    accepted = Mask(true);
    return Mask(true);
  }
};

template <int N, class T>
struct HermiteAdaptive : InertialCoordinates<N, T> {
  using Mask = MaskOf<T>;
  static constexpr IntegratorEntry kIntegrators[] = {
      {"hermite_adaptive", true, 4, false, 2, false,
       "as hermite; step from Swarm-NG eq. 5, h = tau [sum |j|^2/|a|^2]^(-1/2), time-symmetrised as in "
       "Hut, Makino & McMillan 1995; compensated summation (Kahan 1965); position corrector with the jerks "
       "(Kokubo & Makino 2004, PASJ 56, 861)",
       "Hermite 4th order P(EC)^2, adaptive time-symmetric step", "time_step_factor min_time_step max_time_step"}};
  struct Work {
    T acc[N][3];
    T jerk[N][3];
    T comp_x[N][3];  // compensation terms of the positions and velocities (Kahan 1965)
    T comp_v[N][3];
    T tau;  // the step criterion at the current state
  };

  SWARMFIT_HD static T criterion(const Work& w, const StepParams& p) {
    T sum = 0.0;
    SWARMFIT_UNROLL_BODIES(N)
    for (int i = 0; i < N; ++i) sum += hermite_step_term(w.acc[i], w.jerk[i]);
    return hermite_step_from_terms(sum, p);
  }

  SWARMFIT_HD static void begin(Bodies<N, T>& b, Work& w, const StepParams& p, T& h_next) {
    accelerations_and_jerks<N>(b.pos, b.vel, b.mass, p.G, w.acc, w.jerk);
    SWARMFIT_UNROLL_BODIES(N)
    for (int i = 0; i < N; ++i) {
      SWARMFIT_UNROLL
      for (int d = 0; d < 3; ++d) w.comp_x[i][d] = w.comp_v[i][d] = 0.0;
    }
    w.tau = criterion(w, p);
    h_next = w.tau;
  }

  // h_next: on entry the step the driver planned (h is shorter only on the last step).
  SWARMFIT_HD static Mask step(Bodies<N, T>& b, Work& w, T h, const StepParams& p, T& h_next, Mask& accepted) {
    const Work w0 = w;
    T x0[N][3], v0[N][3];
    const T h2 = 0.5 * h;
    const T h3 = h * (1.0 / 3.0);
    const T h6 = h * (1.0 / 6.0);
    SWARMFIT_UNROLL_BODIES(N)
    for (int i = 0; i < N; ++i) {
      SWARMFIT_UNROLL
      for (int d = 0; d < 3; ++d) {
        x0[i][d] = b.pos[i][d];
        v0[i][d] = b.vel[i][d];
      }
      hermite_predict(x0[i], v0[i], w0.acc[i], w0.jerk[i], h, h2, h3, b.pos[i], b.vel[i]);
    }
    SWARMFIT_UNROLL_IF(N <= 4)
    for (int iteration = 0; iteration < 2; ++iteration) {
      accelerations_and_jerks<N>(b.pos, b.vel, b.mass, p.G, w.acc, w.jerk);
      SWARMFIT_UNROLL_BODIES(N)
      for (int i = 0; i < N; ++i)
        hermite_correct_compensated(x0[i], v0[i], w0.acc[i], w0.jerk[i], w.acc[i], w.jerk[i], h2, h6, w0.comp_x[i],
                                    w0.comp_v[i], b.pos[i], b.vel[i], w.comp_x[i], w.comp_v[i]);
    }
    w.tau = criterion(w, p);
    accepted = hermite_symmetric_step(h, h_next, w0.tau, w.tau, p, h_next);
    // A rejected step is taken again from the same state with the step h_next.
    if (!all(accepted)) {
      SWARMFIT_UNROLL_BODIES(N)
      for (int i = 0; i < N; ++i) {
        SWARMFIT_UNROLL
        for (int d = 0; d < 3; ++d) {
          b.pos[i][d] = select(accepted, b.pos[i][d], x0[i][d]);
          b.vel[i][d] = select(accepted, b.vel[i][d], v0[i][d]);
        }
      }
      blend_work(w, w0, accepted);
    }
    return Mask(true);
  }

  SWARMFIT_HD static void blend_work(Work& w, const Work& w0, Mask keep) {
    SWARMFIT_UNROLL_BODIES(N)
    for (int i = 0; i < N; ++i) {
      SWARMFIT_UNROLL
      for (int d = 0; d < 3; ++d) {
        w.acc[i][d] = select(keep, w.acc[i][d], w0.acc[i][d]);
        w.jerk[i][d] = select(keep, w.jerk[i][d], w0.jerk[i][d]);
        w.comp_x[i][d] = select(keep, w.comp_x[i][d], w0.comp_x[i][d]);
        w.comp_v[i][d] = select(keep, w.comp_v[i][d], w0.comp_v[i][d]);
      }
    }
    w.tau = select(keep, w.tau, w0.tau);
  }
};

}  // namespace swarmfit
