// The physics of the large-N engine, written once for the host and the device: the pairwise
// force with its time derivatives, the predictor, the Hermite correctors of 4th and 6th order and
// their time-step criteria. Block time steps and the force loops live in engine.cpp and the
// backends; everything here is per body or per pair.
//
// 4th order: Makino & Aarseth (1992, PASJ 44, 141), in the time-symmetric form of Kokubo,
// Yoshinaga & Makino (1998, MNRAS 297, 1067); Aarseth's time-step criterion (Aarseth 2003,
// "Gravitational N-body simulations", eq. 2.13). 6th order: Nitadori & Makino (2008, New Astron.
// 13, 498): corrector, the quintic interpolant's derivatives and the generalised Aarseth
// criterion as in Nitadori's code (github.com/nitadori/Hermite) and phi-GPU. Forces with Plummer
// softening eps: every r^2 is |r|^2 + eps^2 (the derivatives of the softened force keep the form).
#pragma once

#include <cmath>

#include "swarmfit/integrators/portability.hpp"

namespace swarmfit::nbody {

// Acceleration, jerk and (order 6) snap of body i from body j, and the potential term m_j / r:
// d = j minus i (predicted): dx dy dz, dvx dvy dvz, dax day daz; gm = G m_j; `self` zeroes the
// pair (a body's own entry, r = 0). Written into t: acc 0-2, jerk 3-5, snap 6-8, m/r 9.
// Nitadori & Makino 2008: A = m r / r^3, J = m v / r^3 - 3 alpha A,
// S = m a / r^3 - 6 alpha J - 3 beta A, alpha = r.v / r^2, beta = (v^2 + r.a) / r^2 + alpha^2.
// The reference form of the terms: the pair loops of orders 4 and 6 use accumulate_pair (below,
// the same terms as multiply-adds; a test holds them to round-off of this), order 8 this.
// Order 8 (used once, at the start: the predictor's snap and crackle of the first step) adds the
// crackle C = m j / r^3 - 9 alpha S - 9 beta J - 3 gamma A, gamma = (3 v.a + r.j) / r^2 +
// alpha (3 beta - 4 alpha^2), from the jerk difference dj, into t[10..12].
template <int Order>
SWARMFIT_HD void pair_terms(double dx, double dy, double dz, double dvx, double dvy, double dvz, double dax, double day,
                            double daz, double gm, double eps2, bool self, double t[], const double* dj = nullptr) {
  const double r2 = dx * dx + dy * dy + dz * dz + eps2;
#if defined(__CUDA_ARCH__)
  const double rinv = self ? 0.0 : rsqrt(r2);  // the device's reciprocal square root (1 ulp), not sqrt and a division
#else
  // (Computed for the pair with itself too and dropped by the select: a branch here keeps the
  // CPU's order-8 pass from vectorising.)
  const double y = 1.0 / std::sqrt(r2);
  const double rinv = self ? 0.0 : y;
#endif
  const double rinv2 = rinv * rinv;
  const double mr = gm * rinv;
  const double mr3 = mr * rinv2;
  const double alpha = (dx * dvx + dy * dvy + dz * dvz) * rinv2;
  t[0] = mr3 * dx;
  t[1] = mr3 * dy;
  t[2] = mr3 * dz;
  t[3] = mr3 * dvx - 3.0 * alpha * t[0];
  t[4] = mr3 * dvy - 3.0 * alpha * t[1];
  t[5] = mr3 * dvz - 3.0 * alpha * t[2];
  if constexpr (Order >= 6) {
    const double v2 = dvx * dvx + dvy * dvy + dvz * dvz;
    const double ra = dx * dax + dy * day + dz * daz;
    const double beta = (v2 + ra) * rinv2 + alpha * alpha;
    t[6] = mr3 * dax - 6.0 * alpha * t[3] - 3.0 * beta * t[0];
    t[7] = mr3 * day - 6.0 * alpha * t[4] - 3.0 * beta * t[1];
    t[8] = mr3 * daz - 6.0 * alpha * t[5] - 3.0 * beta * t[2];
    if constexpr (Order == 8) {
      const double va = dvx * dax + dvy * day + dvz * daz;
      const double rj = dx * dj[0] + dy * dj[1] + dz * dj[2];
      const double gamma = (3.0 * va + rj) * rinv2 + alpha * (3.0 * beta - 4.0 * alpha * alpha);
      // (Written out, not a loop: the CPU's order-8 pass vectorises over j only without inner loops.)
      t[10] = mr3 * dj[0] - 9.0 * alpha * t[6] - 9.0 * beta * t[3] - 3.0 * gamma * t[0];
      t[11] = mr3 * dj[1] - 9.0 * alpha * t[7] - 9.0 * beta * t[4] - 3.0 * gamma * t[1];
      t[12] = mr3 * dj[2] - 9.0 * alpha * t[8] - 9.0 * beta * t[5] - 3.0 * gamma * t[2];
    }
  } else {
    (void)dax, (void)day, (void)daz;
    t[6] = t[7] = t[8] = 0.0;
  }
  t[9] = mr;
}

// The reciprocal square root of the pair loops. Host: 1 / sqrt. Device: the hardware's
// double-precision estimate (PTX rsqrt.approx.ftz.f64, MUFU.RSQ64H: relative error ~1e-6, no
// conversions) refined by one third-order Newton-Raphson step, y (1 + h/2 + 3h^2/8) with
// h = 1 - x y^2 (the Taylor series of (1 - h)^(-1/2); error ~ 5/16 h^3, below double round-off).
// Why: the pair loop's FP64 instruction count bounds its speed, and this is five against the
// library rsqrt's longer sequence with its special cases.
// Subnormal x (a pair closer than 1e-154 without softening) is flushed to zero: 1/r infinite.
SWARMFIT_HD double pair_rsqrt(double x) {
#if defined(__CUDA_ARCH__)
  double y;
  asm("rsqrt.approx.ftz.f64 %0, %1;" : "=d"(y) : "d"(x));
  const double h = 1.0 - x * y * y;
  return y + y * h * (0.5 + 0.375 * h);
#else
  return 1.0 / std::sqrt(x);
#endif
}

// The pair loops' form of pair_terms (orders 4 and 6): the same terms, added into running sums
// with every product a multiply-add (nvcc contracts each `s += a * b` into one FMA; the host keeps
// them as written), and the constant factors (-3, -6, 3) applied once per body by
// finish_pair_sums instead of once per pair. With A = m r / r^3 and am = alpha m / r^3:
// J = m v / r^3 - 3 am r and S = m a / r^3 - 6 am v + 3 (6 alpha^2 - beta) m r / r^3 (S of
// pair_terms with J substituted). FP64 operations a pair: 31 for order 4 (38 in pair_terms'
// form), 55 for order 6 (60); the potential adds one where asked for.
// Sums: acc 0-2, m v / r^3 3-5, am r 6-8, pot 9; order 6: m a / r^3 10-12, am v 13-15,
// (6 alpha^2 - beta) m r / r^3 16-18.
constexpr int kPairSums = 19;
template <int Order, bool Potential>
SWARMFIT_HD void accumulate_pair(double dx, double dy, double dz, double dvx, double dvy, double dvz, double dax,
                                 double day, double daz, double gm, double eps2, bool self, double s[kPairSums]) {
  const double r2 = eps2 + dx * dx + dy * dy + dz * dz;
  // The pair with itself is zeroed by a select after the square root, not a branch around it (a
  // branch in the unrolled loop costs the GPU issue slots every pair); where its r2 is 0 the
  // estimate is inf or NaN, and the select drops it.
  const double y = pair_rsqrt(r2);
  const double rinv = self ? 0.0 : y;
  const double rinv2 = rinv * rinv;
  const double mr = gm * rinv;
  const double mr3 = mr * rinv2;
  const double rv = dx * dvx + dy * dvy + dz * dvz;
  const double alpha = rv * rinv2;
  const double am = alpha * mr3;
  s[0] += mr3 * dx;
  s[1] += mr3 * dy;
  s[2] += mr3 * dz;
  s[3] += mr3 * dvx;
  s[4] += mr3 * dvy;
  s[5] += mr3 * dvz;
  s[6] += am * dx;
  s[7] += am * dy;
  s[8] += am * dz;
  if constexpr (Potential) s[9] += mr;
  if constexpr (Order == 6) {
    const double v2 = dvx * dvx + dvy * dvy + dvz * dvz;
    const double ra = dx * dax + dy * day + dz * daz;
    const double alpha2 = alpha * alpha;
    const double beta = (v2 + ra) * rinv2 + alpha2;
    const double cr = (6.0 * alpha2 - beta) * mr3;
    s[10] += mr3 * dax;
    s[11] += mr3 * day;
    s[12] += mr3 * daz;
    s[13] += am * dvx;
    s[14] += am * dvy;
    s[15] += am * dvz;
    s[16] += cr * dx;
    s[17] += cr * dy;
    s[18] += cr * dz;
  } else {
    (void)dax, (void)day, (void)daz;
  }
}

// The sums of accumulate_pair as the backends pass them on (a ForceResult row): acc 0-2,
// jerk 3-5, then order 4: pot 6; order 6: snap 6-8, pot 9.
template <int Order>
SWARMFIT_HD void finish_pair_sums(const double s[kPairSums], double* out) {
  for (int d = 0; d < 3; ++d) {
    out[d] = s[d];
    out[3 + d] = s[3 + d] - 3.0 * s[6 + d];
    if constexpr (Order == 6) out[6 + d] = s[10 + d] - 6.0 * s[13 + d] + 3.0 * s[16 + d];
  }
  out[Order == 6 ? 9 : 6] = s[9];
}

// The state of one body that the integration carries: position, velocity and the acceleration's
// derivatives at its own time t (snap and crackle: measured, or from the last step's Hermite
// interpolation).
struct BodyState {
  double x[3], v[3], a[3], j[3], s[3], c[3];
};

// Predictor to time t0 + h: the Taylor series of the known derivatives (Makino & Aarseth 1992
// eq. 7-8 with the interpolated snap and crackle, as Nitadori & Makino 2008 eq. 20-21 for order 6;
// order 4 gains the two higher terms for the same cost of a load).
SWARMFIT_HD void predict(const BodyState& b, double h, double xp[3], double vp[3], double ap[3]) {
  const double h2 = h * h / 2, h3 = h2 * h / 3, h4 = h3 * h / 4, h5 = h4 * h / 5;
  for (int d = 0; d < 3; ++d) {
    xp[d] = b.x[d] + h * b.v[d] + h2 * b.a[d] + h3 * b.j[d] + h4 * b.s[d] + h5 * b.c[d];
    vp[d] = b.v[d] + h * b.a[d] + h2 * b.j[d] + h3 * b.s[d] + h4 * b.c[d];
    ap[d] = b.a[d] + h * b.j[d] + h2 * b.s[d] + h3 * b.c[d];
  }
}

// The predicted jerk (order 8 pair terms, at the start).
SWARMFIT_HD void predict_jerk(const BodyState& b, double h, double jp[3]) {
  for (int d = 0; d < 3; ++d) jp[d] = b.j[d] + h * b.s[d] + 0.5 * h * h * b.c[d];
}

SWARMFIT_HD double norm3(const double v[3]) { return std::sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]); }

// Corrector: b (at t0) to t0 + h, given the forces a1, j1 (and s1 for order 6) at the predicted
// positions. Returns the step the criterion asks for next (before block quantisation), and leaves
// in b the derivatives at t0 + h (snap and crackle interpolated for order 4, crackle for order 6).
template <int Order>
SWARMFIT_HD double correct(BodyState& b, double h, const double a1[3], const double j1[3], const double s1[3],
                           double eta) {
  double a2[3], a3[3], a4[3], a5[3];
  if constexpr (Order == 4) {
    // Time-symmetric Hermite (Kokubo et al. 1998 eq. 3-4): v first, x with the new v.
    const double h2 = h * h / 12;
    for (int d = 0; d < 3; ++d) {
      const double v1 = b.v[d] + 0.5 * h * (b.a[d] + a1[d]) + h2 * (b.j[d] - j1[d]);
      b.x[d] = b.x[d] + 0.5 * h * (b.v[d] + v1) + h2 * (b.a[d] - a1[d]);
      b.v[d] = v1;
      // The cubic Hermite interpolant of a through (a0, j0, a1, j1) (Makino & Aarseth 1992
      // eq. 9-10): its second and third derivatives at t0 + h.
      const double third = (12.0 * (b.a[d] - a1[d]) + 6.0 * h * (b.j[d] + j1[d])) / (h * h * h);
      const double second0 = (-6.0 * (b.a[d] - a1[d]) - h * (4.0 * b.j[d] + 2.0 * j1[d])) / (h * h);
      a2[d] = second0 + h * third;
      a3[d] = third;
      b.a[d] = a1[d];
      b.j[d] = j1[d];
      b.s[d] = a2[d];
      b.c[d] = a3[d];
    }
    // Aarseth's criterion: dt = sqrt(eta (|a||a2| + |j|^2) / (|j||a3| + |a2|^2)).
    const double num = norm3(b.a) * norm3(a2) + norm3(b.j) * norm3(b.j);
    const double den = norm3(b.j) * norm3(a3) + norm3(a2) * norm3(a2);
    return den > 0 ? std::sqrt(eta * num / den) : HUGE_VAL;
  } else {
    // Nitadori & Makino 2008: v1 first, x1 with the new v1.
    const double h2 = h * h / 10, h3 = h * h * h / 120;
    for (int d = 0; d < 3; ++d) {
      const double v1 = b.v[d] + 0.5 * h * (a1[d] + b.a[d]) - h2 * (j1[d] - b.j[d]) + h3 * (s1[d] + b.s[d]);
      b.x[d] = b.x[d] + 0.5 * h * (v1 + b.v[d]) - h2 * (a1[d] - b.a[d]) + h3 * (j1[d] + b.j[d]);
      b.v[d] = v1;
      // The quintic Hermite interpolant of a through (a, j, s) at both ends, expanded about the
      // midpoint (tau = h / 2): its 3rd, 4th and 5th derivatives at t0 + h.
      const double tau = 0.5 * h;
      const double ap = a1[d] - b.a[d], jp = j1[d] + b.j[d], jm = j1[d] - b.j[d];
      const double sp = s1[d] + b.s[d], sm = s1[d] - b.s[d];
      const double p_mid = 1.5 / (tau * tau) * (sp - jm / tau);
      const double q_mid = 45.0 / (tau * tau * tau * tau) * (sm * tau / 6.0 - 0.5 * jp + 0.5 * ap / tau);
      const double c_mid = (0.5 * sm - q_mid * tau * tau * tau / 6.0) / tau;
      a3[d] = c_mid + p_mid * tau + 0.5 * q_mid * tau * tau;
      a4[d] = p_mid + q_mid * tau;
      a5[d] = q_mid;
      b.a[d] = a1[d];
      b.j[d] = j1[d];
      b.s[d] = s1[d];
      b.c[d] = a3[d];
    }
    // Generalised Aarseth criterion (Nitadori & Makino 2008) for p = 6:
    // dt = eta (A1 / A4)^(1/3), A_k = sqrt(|a^(k-1)| |a^(k+1)| + |a^(k)|^2); eta ~ 0.5.
    const double A1 = std::sqrt(norm3(b.a) * norm3(b.s) + norm3(b.j) * norm3(b.j));
    const double A4 = std::sqrt(norm3(a3) * norm3(a5) + norm3(a4) * norm3(a4));
    return A4 > 0 ? eta * std::cbrt(A1 / A4) : HUGE_VAL;
  }
}

// The first step of a body. The start's force passes give a, j, s and c exactly (engine.cpp), so
// the first step uses the generalised Aarseth criterion of order 4 with them,
// eta_s (A1 / A2), A1 = sqrt(|a||s| + |j|^2), A2 = sqrt(|j||c| + |s|^2) (Nitadori & Makino 2008),
// for both orders. The usual eta_s |a| / |j| (Aarseth 2003 eq. 2.14) is zero for a body whose
// forces cancel (the middle body of the figure-eight orbit).
SWARMFIT_HD double initial_step(const BodyState& b, double eta_s) {
  const double A1 = std::sqrt(norm3(b.a) * norm3(b.s) + norm3(b.j) * norm3(b.j));
  const double A2 = std::sqrt(norm3(b.j) * norm3(b.c) + norm3(b.s) * norm3(b.s));
  return A2 > 0 ? eta_s * A1 / A2 : HUGE_VAL;
}

// A body's next block step (a power of two) after a step `old_step` that ended at new_time, given
// the step its criterion asks for: halved until it fits; doubled (once a step, up to max_step)
// only where new_time is a multiple of the doubled step, which keeps the block structure
// (Makino 1991; Aarseth 2003 sec. 2.5).
SWARMFIT_HD double quantise_step(double requested, double old_step, double new_time, double max_step) {
  double dt = old_step;
  if (requested < dt) {
    while (dt > requested) dt *= 0.5;
  } else if (requested >= 2 * dt && 2 * dt <= max_step && std::fmod(new_time, 2 * dt) == 0.0) {
    dt *= 2;
  }
  return dt;
}

}  // namespace swarmfit::nbody
