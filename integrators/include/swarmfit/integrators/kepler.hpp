// Kepler drift in universal variables: advance one body on the two-body orbit about a fixed
// gravitational parameter mu by a time h, for elliptic, parabolic and hyperbolic orbits alike.
// Formulation: Danby (1988) "Fundamentals of Celestial Mechanics" sec. 6.9 (f and g functions in
// the universal anomaly s and Stumpff functions c_k); Stumpff functions by argument quartering
// and the double-angle relations as in Wisdom & Hernandez (2015, MNRAS 453, 3015) sec. 2 and
// REBOUND's WHFast (Rein & Tamayo 2015). The solve is Halley's method on the monotone function
// F(s) = r0 s + eta0 s^2 c2 + zeta0 s^3 c3 - h (F' = r > 0), safeguarded by a bracket and
// bisection, with a bounded number of iterations: the result is never NaN for finite input.
#pragma once

#include "swarmfit/integrators/lanes.hpp"

namespace swarmfit {

constexpr int kKeplerMaxIterations = 64;

// c0..c3 of z = beta s^2 (Stumpff functions), lane-wise.
template <class T>
SWARMFIT_HD void stumpff(T z, T& c0, T& c1, T& c2, T& c3) {
  using Mask = MaskOf<T>;
  T quarterings = 0.0;
  // Quarter the argument until |z| <= 0.1, where the series below converge to round-off.
  SWARMFIT_ROLLED
  for (int k = 0; k < 40; ++k) {
    const Mask big = lane_abs(z) > 0.1;
    if (!any(big)) break;
    z = select(big, z * 0.25, z);
    quarterings = select(big, quarterings + 1.0, quarterings);
  }
  c3 = (1.0 / 6.0) *
       (1.0 -
        z / 20.0 * (1.0 - z / 42.0 * (1.0 - z / 72.0 * (1.0 - z / 110.0 * (1.0 - z / 156.0 * (1.0 - z / 210.0))))));
  c2 = 0.5 * (1.0 - z / 12.0 *
                        (1.0 - z / 30.0 * (1.0 - z / 56.0 * (1.0 - z / 90.0 * (1.0 - z / 132.0 * (1.0 - z / 182.0))))));
  c1 = 1.0 - z * c3;
  c0 = 1.0 - z * c2;
  // Undo the quartering: z -> 4z doubles the angle (cos 2x, sin 2x / 2x, ...).
  SWARMFIT_ROLLED
  for (int k = 0; k < 40; ++k) {
    const Mask more = quarterings > 0.5;
    if (!any(more)) break;
    const T n3 = 0.25 * (c2 + c0 * c3);
    const T n2 = 0.5 * c1 * c1;
    const T n1 = c0 * c1;
    const T n0 = 2.0 * c0 * c0 - 1.0;
    c3 = select(more, n3, c3);
    c2 = select(more, n2, c2);
    c1 = select(more, n1, c1);
    c0 = select(more, n0, c0);
    quarterings = select(more, quarterings - 1.0, quarterings);
  }
}

// Advances (x, v) by time h about gravitational parameter mu. Returns the lanes whose solve
// converged; a lane that did not keeps a finite state (the best bracketed estimate).
template <class T>
SWARMFIT_HD MaskOf<T> kepler_drift(T (&x)[3], T (&v)[3], T mu, T h) {
  using Mask = MaskOf<T>;
  const T r0 = lane_sqrt(x[0] * x[0] + x[1] * x[1] + x[2] * x[2]);
  const T v2 = v[0] * v[0] + v[1] * v[1] + v[2] * v[2];
  const T eta0 = x[0] * v[0] + x[1] * v[1] + x[2] * v[2];
  const T beta = 2.0 * mu / r0 - v2;
  const T zeta0 = mu - beta * r0;
  const Mask bound = beta > 0.0;

  // Bound orbits: remove whole periods (P = 2 pi mu / beta^1.5), so |h| <= P/2, and bracket s by
  // one period of the universal anomaly (2 pi / sqrt(beta)).
  const double two_pi = 6.283185307179586;
  const T sqrt_beta = lane_sqrt(lane_abs(beta));
  const T period = select(bound, two_pi * mu / (beta * sqrt_beta), T(0.0));
  const T whole = select(bound, lane_floor(h / period + 0.5), T(0.0));
  const T hr = h - whole * period;
  const T s_span = select(bound, two_pi / sqrt_beta, T(1e300));
  const Mask forward = hr >= 0.0;
  T lo = select(forward, T(0.0), -s_span);
  T hi = select(forward, s_span, T(0.0));

  // Second-order series guess s ~ h/r0 - eta0 h^2 / (2 r0^3), clamped into the bracket.
  const T inv_r0 = 1.0 / r0;
  T s = hr * inv_r0 - 0.5 * eta0 * hr * hr * inv_r0 * inv_r0 * inv_r0;
  s = lane_min(lane_max(s, lo), hi);

  Mask converged = hr == 0.0;
  s = select(converged, T(0.0), s);
  SWARMFIT_ROLLED
  for (int iteration = 0; iteration < kKeplerMaxIterations; ++iteration) {
    if (all(converged)) break;
    T c0, c1, c2, c3;
    stumpff(beta * s * s, c0, c1, c2, c3);
    const T g1 = s * c1;
    const T g2 = s * s * c2;
    const T g3 = s * s * s * c3;
    const T f = r0 * s + eta0 * g2 + zeta0 * g3 - hr;
    const T fp = r0 + eta0 * g1 + zeta0 * g2;
    const T fpp = eta0 * c0 + zeta0 * g1;
    const Mask finite = mask_and(lane_isfinite(f), lane_isfinite(fp));
    // F is increasing: the sign of F moves one side of the bracket (an overflow counts as > 0).
    const Mask below = mask_and(finite, f < 0.0);
    const Mask active = mask_not(converged);
    lo = select(mask_and(active, below), s, lo);
    hi = select(mask_and(active, mask_not(below)), s, hi);
    // Halley step (cubic convergence), then bisection wherever it leaves the bracket.
    T next = s - 2.0 * f * fp / (2.0 * fp * fp - f * fpp);
    const Mask inside = mask_and(mask_and(lane_isfinite(next), next >= lo), next <= hi);
    next = select(inside, next, 0.5 * (lo + hi));
    next = select(f == 0.0, s, next);
    // Converged when the update is a few ulps: with contracted (FMA) arithmetic Halley's iterate
    // can wander by an ulp or two around the root instead of settling on one value.
    const Mask done = mask_or(lane_abs(next - s) <= 2e-15 * lane_abs(s), f == 0.0);
    s = select(active, next, s);
    converged = mask_or(converged, mask_and(active, mask_and(finite, done)));
    // An empty bracket means s is determined to round-off.
    converged = mask_or(converged, mask_and(active, hi - lo <= 2e-15 * lane_abs(s)));
  }

  T c0, c1, c2, c3;
  stumpff(beta * s * s, c0, c1, c2, c3);
  const T g1 = s * c1;
  const T g2 = s * s * c2;
  const T g3 = s * s * s * c3;
  const T r = r0 + eta0 * g1 + zeta0 * g2;
  const T f = 1.0 - mu * g2 * inv_r0;
  const T g = hr - mu * g3;
  const T fdot = -mu * g1 * inv_r0 / r;
  const T gdot = 1.0 - mu * g2 / r;
  const Mask ok = mask_and(converged, mask_and(lane_isfinite(f * gdot), lane_isfinite(g * fdot)));
  SWARMFIT_UNROLL
  for (int d = 0; d < 3; ++d) {
    const T xn = f * x[d] + g * v[d];
    const T vn = fdot * x[d] + gdot * v[d];
    x[d] = select(ok, xn, x[d]);
    v[d] = select(ok, vn, v[d]);
  }
  return ok;
}

}  // namespace swarmfit
