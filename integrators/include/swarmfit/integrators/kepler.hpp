// Kepler drift in universal variables: advance one body on the two-body orbit about a fixed
// gravitational parameter mu by a time h, for elliptic, parabolic and hyperbolic orbits alike.
// Formulation: Danby (1988) "Fundamentals of Celestial Mechanics" sec. 6.9 (f and g functions in
// the universal anomaly s and Stumpff functions c_k); Stumpff functions by argument quartering
// and the double-angle relations as in Wisdom & Hernandez (2015, MNRAS 453, 3015) sec. 2 and
// REBOUND's WHFast (Rein & Tamayo 2015). The solve is Halley's method on the monotone function
// F(s) = r0 s + eta0 s^2 c2 + zeta0 s^3 c3 - h (F' = r > 0), safeguarded by a bracket and
// bisection, with a bounded number of iterations: the result is never NaN for finite input.
#pragma once

#include "swarmfit/integrators/dual.hpp"
#include "swarmfit/integrators/lanes.hpp"

namespace swarmfit {

constexpr int kKeplerMaxIterations = 64;

// (-1)^j / (2j + 2)! and (-1)^j / (2j + 3)!, j = 8 down to 0: the series of c2 and c3. In constant
// memory on the GPU, where an FMA reads a constant-bank operand directly (a literal double
// operand costs two moves into uniform registers at every use).
static SWARMFIT_CONSTANT double kStumpffSeries[2][9] = {
    {1.5619206968586225e-16, -4.779477332387385e-14, 1.1470745597729725e-11, -2.08767569878681e-09,
     2.755731922398589e-07, -2.48015873015873e-05, 0.001388888888888889, -0.041666666666666664, 0.5},
    {8.22063524662433e-18, -2.8114572543455206e-15, 7.647163731819816e-13, -1.6059043836821613e-10,
     2.505210838544172e-08, -2.7557319223985893e-06, 0.0001984126984126984, -0.008333333333333333,
     0.16666666666666666}};

// c0..c3 of z = beta s^2 (Stumpff functions), lane-wise. Series c_k(z) = sum_j (-z)^j / (2j+k)!
// in Horner form with reciprocal factorials (multiplications only: an FP64 division costs ~10
// FMAs on a GPU); |z| is quartered down to 0.5 first, where nine terms reach round-off (the first
// term left out is below 1e-21). A Wisdom-Holman step of P/20 has z ~ (2 pi / 20)^2 ~ 0.1, so the
// quartering loop normally does not run.
template <class T>
SWARMFIT_HD void stumpff(T z, T& c0, T& c1, T& c2, T& c3) {
  using Mask = MaskOf<T>;
  T quarterings = 0.0;
  SWARMFIT_ROLLED
  for (int k = 0; k < 40; ++k) {
    const Mask big = lane_abs(z) > 0.5;
    if (!any(big)) break;
    z = select(big, z * 0.25, z);
    quarterings = select(big, quarterings + 1.0, quarterings);
  }
  c2 = kStumpffSeries[0][0];
  c3 = kStumpffSeries[1][0];
  SWARMFIT_UNROLL
  for (int j = 1; j < 9; ++j) {
    c2 = c2 * z + kStumpffSeries[0][j];
    c3 = c3 * z + kStumpffSeries[1][j];
  }
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

// 1 / (2 pi mu): turns a time into periods of the orbit (KeplerSolve::start).
template <class T>
SWARMFIT_HD T kepler_period_factor(T mu) {
  return 1.0 / (6.283185307179586 * mu);
}

// One universal-variable solve, in three parts so that several independent solves can run in
// lock step (kepler_drift_bodies): start() sets up the bracket and the first guess, iterate()
// takes one safeguarded Halley step on the lanes not yet converged, finish() applies the f and g
// functions. A lane that did not converge keeps a finite state (the best bracketed estimate).
template <class T>
struct KeplerSolve {
  using Mask = MaskOf<T>;
  T mu, r0, inv_r0, eta0, zeta0, beta, hr, lo, hi, s;
  Mask converged;
  // G0..G3 at the s of the last iteration, and that iteration's Halley step: finish() updates
  // them to the final s by a Taylor series instead of evaluating the Stumpff functions again.
  T g0, g1, g2, g3, step;

  // inv_two_pi_mu: kepler_period_factor(gm), which callers that drift the same body many times
  // compute once (Mvs::Work): nvcc does not always keep it out of the loop by itself.
  SWARMFIT_HD void start(const T (&x)[3], const T (&v)[3], T gm, T h) { start(x, v, gm, kepler_period_factor(gm), h); }
  SWARMFIT_HD void start(const T (&x)[3], const T (&v)[3], T gm, T inv_two_pi_mu, T h) {
    mu = gm;
    // 1/r0 and 1/sqrt|beta| from rsqrt (on the GPU, one instruction sequence instead of a square
    // root and a division each): 1 ulp, the rounding the other operations have anyway.
    const T r2 = x[0] * x[0] + x[1] * x[1] + x[2] * x[2];
    inv_r0 = lane_rsqrt(r2);
    r0 = r2 * inv_r0;
    const T v2 = v[0] * v[0] + v[1] * v[1] + v[2] * v[2];
    eta0 = x[0] * v[0] + x[1] * v[1] + x[2] * v[2];
    beta = 2.0 * mu * inv_r0 - v2;
    zeta0 = mu - beta * r0;
    const Mask bound = beta > 0.0;

    // Bound orbits: remove whole periods (P = 2 pi mu / beta^1.5), so |h| <= P/2, and bracket s
    // by one period of the universal anomaly (2 pi / sqrt(beta)).
    const double two_pi = 6.283185307179586;
    const T inv_sqrt_beta = lane_rsqrt(lane_abs(beta));
    const T s_period = two_pi * inv_sqrt_beta;
    const T period = select(bound, mu * s_period * inv_sqrt_beta * inv_sqrt_beta, T(0.0));
    // h / period as a product: 1 / (2 pi mu) is a loop invariant of the integration (mu is the
    // planet's), and the count only has to be right away from half-integers.
    const T inv_period = beta * beta * inv_sqrt_beta * inv_two_pi_mu;
    const T whole = select(bound, lane_floor(h * inv_period + 0.5), T(0.0));
    hr = h - whole * period;
    const T s_span = select(bound, s_period, T(1e300));
    const Mask forward = hr >= 0.0;
    lo = select(forward, T(0.0), -s_span);
    hi = select(forward, s_span, T(0.0));

    // Fifth-order series of s(h), from inverting h = r0 s + eta0 G2(s) + zeta0 G3(s) term by term
    // (G_k(s) = s^k c_k(beta s^2)); with u = h/r0, e0 = eta0/r0, z0 = zeta0/r0:
    //   s = u [1 - e0 u/2 + (3 e0^2 - z0) u^2/6 + e0 (beta - 15 e0^2 + 10 z0) u^3/24
    //          + (beta (z0 - 15 e0^2) + 105 e0^4 - 105 e0^2 z0 + 10 z0^2) u^4/120 + O(u^5)],
    // exact for circular orbits. For steps of P/20 and moderate e its error is ~1e-6 of s, which
    // one Halley step takes to round-off (iterate's cubic test). Where the expansion parameters
    // are not small (long drifts, hyperbolic escapes) the terms of order 4 and 5 are dropped, a
    // safer start for the bracketed iteration; clamped into the bracket.
    const T u = hr * inv_r0;
    const T e0 = eta0 * inv_r0, z0 = zeta0 * inv_r0;
    const T e02 = e0 * e0, u2 = u * u;
    const Mask small = mask_and(mask_and(lane_abs(beta) * u2 <= 0.5, lane_abs(z0) * u2 <= 0.5), e02 * u2 <= 0.25);
    const T a4 = (1.0 / 120.0) * (beta * (z0 - 15.0 * e02) + e02 * (105.0 * e02 - 105.0 * z0) + 10.0 * z0 * z0);
    const T a3 = select(small, (1.0 / 24.0) * e0 * (beta - 15.0 * e02 + 10.0 * z0), T(0.0));
    const T a2 = (1.0 / 6.0) * (3.0 * e02 - z0);
    s = u * (1.0 + u * (-0.5 * e0 + u * (a2 + u * (a3 + u * select(small, a4, T(0.0))))));
    s = lane_min(lane_max(s, lo), hi);
    converged = hr == 0.0;
    s = select(converged, T(0.0), s);
    g0 = 1.0;
    g1 = g2 = g3 = step = 0.0;
  }

  SWARMFIT_HD void iterate() {
    T c0, c1, c2, c3;
    stumpff(beta * s * s, c0, c1, c2, c3);
    const T s2 = s * s;
    const T G1 = s * c1, G2 = s2 * c2, G3 = s2 * s * c3;
    const T f = r0 * s + eta0 * G2 + zeta0 * G3 - hr;
    const T fp = r0 + eta0 * G1 + zeta0 * G2;
    const T fpp = eta0 * c0 + zeta0 * G1;
    const Mask finite = mask_and(lane_isfinite(f), lane_isfinite(fp));
    // F is increasing: the sign of F moves one side of the bracket (an overflow counts as > 0).
    const Mask below = mask_and(finite, f < 0.0);
    const Mask active = mask_not(converged);
    lo = select(mask_and(active, below), s, lo);
    hi = select(mask_and(active, mask_not(below)), s, hi);
    // Halley step (cubic convergence), then bisection wherever it leaves the bracket. F' / (...)
    // rather than F F' / (...): F is often exactly 0 after the series guess (circular orbits),
    // and a GPU division with a zero numerator leaves the fast path for a ~100-instruction one.
    T next = s - 2.0 * f * (fp / (2.0 * fp * fp - f * fpp));
    const Mask inside = mask_and(mask_and(lane_isfinite(next), next >= lo), next <= hi);
    next = select(inside, next, 0.5 * (lo + hi));
    next = select(f == 0.0, s, next);
    const T d = next - s;
    const T step_size = lane_abs(d);
    // Converged when the update is a few ulps: with contracted (FMA) arithmetic Halley's iterate
    // can wander by an ulp or two around the root instead of settling on one value. Or, saving
    // that confirming iteration, when a small Halley step leaves an error below round-off: the
    // next error is A d^3 for a step d, with Halley's error constant A = F''^2/(4F'^2) -
    // F'''/(6F') (F''' = zeta0 c0 - beta eta0 s c1), i.e. |3F''^2 - 2F'F'''| d^3 <= 12F'^2 1e-16 |s|.
    const T fppp = zeta0 * c0 - beta * eta0 * G1;
    const Mask cubic = mask_and(mask_and(inside, step_size <= 1e-5 * lane_abs(next)),
                                lane_abs(3.0 * fpp * fpp - 2.0 * fp * fppp) * step_size * step_size * step_size <=
                                    1.2e-15 * fp * fp * lane_abs(next));
    const Mask done = mask_or(mask_or(step_size <= 2e-15 * lane_abs(s), cubic), f == 0.0);
    g0 = select(active, c0, g0);
    g1 = select(active, G1, g1);
    g2 = select(active, G2, g2);
    g3 = select(active, G3, g3);
    step = select(active, d, step);
    s = select(active, next, s);
    converged = mask_or(converged, mask_and(active, mask_and(finite, done)));
    // An empty bracket means s is determined to round-off.
    converged = mask_or(converged, mask_and(active, hi - lo <= 2e-15 * lane_abs(s)));
  }

  SWARMFIT_HD Mask finish(T (&x)[3], T (&v)[3]) const {
    // G1..G3 at s = s_last + d from those at s_last: G_k' = G_(k-1), G0' = -beta G1, to third
    // order; with |d| <= 1e-5 |s| (the cubic test) the first term left out is ~1e-20 relative.
    const T d1 = step, d2 = 0.5 * step * step, d3 = (1.0 / 6.0) * step * step * step;
    T G1 = g1 + d1 * g0 - beta * (d2 * g1 + d3 * g0);
    T G2 = g2 + d1 * g1 + d2 * g0 - beta * d3 * g1;
    T G3 = g3 + d1 * g2 + d2 * g1 + d3 * g0;
    const Mask taylor = lane_abs(step) <= 1e-5 * lane_abs(s);
    if (!all(taylor)) {  // a bisection or bracket-bound end: evaluate afresh
      T c0, c1, c2, c3;
      stumpff(beta * s * s, c0, c1, c2, c3);
      G1 = select(taylor, G1, s * c1);
      G2 = select(taylor, G2, s * s * c2);
      G3 = select(taylor, G3, s * s * s * c3);
    }
    const T r = r0 + eta0 * G1 + zeta0 * G2;
    const T inv_r = 1.0 / r;
    const T f = 1.0 - mu * G2 * inv_r0;
    const T g = hr - mu * G3;
    const T fdot = -mu * G1 * inv_r0 * inv_r;
    const T gdot = 1.0 - mu * G2 * inv_r;
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
};

// Advances (x, v) by time h about gravitational parameter mu. Returns the lanes whose solve
// converged; a lane that did not keeps a finite state (the best bracketed estimate).
template <class T>
SWARMFIT_HD MaskOf<T> kepler_drift(T (&x)[3], T (&v)[3], T mu, T h) {
  KeplerSolve<T> k;
  k.start(x, v, mu, h);
  SWARMFIT_ROLLED
  for (int iteration = 0; iteration < kKeplerMaxIterations; ++iteration) {
    if (all(k.converged)) break;
    k.iterate();
  }
  return k.finish(x, v);
}

// The solves of bodies 1..last in lock step until all have converged (or the iteration bound).
template <int N, class T>
SWARMFIT_HD void iterate_bodies(KeplerSolve<T> (&k)[N], int last) {
  using Mask = MaskOf<T>;
  SWARMFIT_ROLLED
  for (int iteration = 0; iteration < kKeplerMaxIterations; ++iteration) {
    Mask done = Mask(true);
    SWARMFIT_UNROLL_BODIES(N)
    for (int i = 1; i < N; ++i)
      if (i <= last) done = mask_and(done, k[i].converged);
    if (all(done)) break;
    SWARMFIT_UNROLL_BODIES(N)
    for (int i = 1; i < N; ++i)
      if (i <= last) k[i].iterate();
  }
}

// Bodies 1..N-1 drifted by h about their own mu[i], the solves in lock step: each iteration
// takes a Halley step of every body, so the N - 1 independent dependency chains interleave (one
// GPU thread, or one SIMD pack, has N - 1 times the instruction-level parallelism of solving
// them one after the other). Each body's result is the one kepler_drift gives it.
// inv_two_pi_mu[i] = kepler_period_factor(mu[i]). Only bodies 1..last move (a dense output that
// needs the inner ones only: Mvs::dense_relative).
template <int N, class T>
SWARMFIT_HD MaskOf<T> kepler_drift_bodies(T (&x)[N][3], T (&v)[N][3], const T (&mu)[N], const T (&inv_two_pi_mu)[N],
                                          T h, int last = N - 1) {
  using Mask = MaskOf<T>;
  KeplerSolve<T> k[N];
  SWARMFIT_UNROLL_BODIES(N)
  for (int i = 1; i < N; ++i)
    if (i <= last) k[i].start(x[i], v[i], mu[i], inv_two_pi_mu[i], h);
  iterate_bodies<N>(k, last);
  Mask ok = Mask(true);
  SWARMFIT_UNROLL_BODIES(N)
  for (int i = 1; i < N; ++i)
    if (i <= last) ok = mask_and(ok, k[i].finish(x[i], v[i]));
  return ok;
}

// Tangent lanes (dual.hpp): the universal anomaly is solved on the values alone, the iteration the
// T lanes take (so the values are bitwise those of kepler_drift_bodies on T), and the tangent map
// is that of the converged solve: at the root F(s; r0, eta0, zeta0, beta, hr) = 0 the implicit
// function theorem gives ds = -(dF at fixed s) / F'(s), with dG_k = (dG_k at fixed s) + G_(k-1) ds
// (Danby 1988, sec. 6.9: dG_k/ds = G_(k-1)); then the f and g functions are differentiated once.
// This is the derivative REBOUND's WHFast variational particles take of the drift (Rein & Tamayo
// 2016, MNRAS 459, 2275, sec. 2.3); differentiating every Halley iteration instead (Dual through
// KeplerSolve) tends to it as the solve converges, at twice the registers and arithmetic.
template <class T>
SWARMFIT_HD void kepler_tangent(const KeplerSolve<T>& k, const Dual<T> (&x)[3], const Dual<T> (&v)[3],
                                const Dual<T>& gm, const Dual<T>& h, T (&dx)[3], T (&dv)[3]) {
  using D = Dual<T>;
  const D r2 = x[0] * x[0] + x[1] * x[1] + x[2] * x[2];
  const D inv_r0 = lane_rsqrt(r2);
  const D r0 = r2 * inv_r0;
  const D v2 = v[0] * v[0] + v[1] * v[1] + v[2] * v[2];
  const D eta0 = x[0] * v[0] + x[1] * v[1] + x[2] * v[2];
  const D beta = 2.0 * gm * inv_r0 - v2;
  const D zeta0 = gm - beta * r0;
  // hr = h - n P(mu, beta), n whole periods (piecewise constant), P = 2 pi mu beta^-3/2.
  const T removed = h.v - k.hr;  // n P; exactly 0 where no period was removed
  const T dlog_period = select(removed != 0.0, gm.d / gm.v - 1.5 * beta.d / beta.v, T(0.0));
  const D hr(k.hr, h.d - removed * dlog_period);
  // G_k at the root with s held fixed (their beta dependence only).
  const D s(k.s, T(0.0));
  D c0, c1, c2, c3;
  stumpff(beta * s * s, c0, c1, c2, c3);
  const D s2(k.s * k.s, T(0.0)), s3(k.s * k.s * k.s, T(0.0));
  D G1 = s * c1, G2 = s2 * c2, G3 = s3 * c3;
  const D F = r0 * s + eta0 * G2 + zeta0 * G3 - hr;
  const T fp = r0.v + eta0.v * G1.v + zeta0.v * G2.v;  // F'(s) = r > 0
  const T ds = -F.d / fp;
  G3.d = G3.d + G2.v * ds;
  G2.d = G2.d + G1.v * ds;
  G1.d = G1.d + c0.v * ds;
  const D r = r0 + eta0 * G1 + zeta0 * G2;
  const D f = 1.0 - gm * G2 * inv_r0;
  const D g = hr - gm * G3;
  const D fdot = -gm * G1 * inv_r0 / r;
  const D gdot = 1.0 - gm * G2 / r;
  SWARMFIT_UNROLL
  for (int d = 0; d < 3; ++d) {
    dx[d] = (f * x[d] + g * v[d]).d;
    dv[d] = (fdot * x[d] + gdot * v[d]).d;
  }
}

template <int N, class T>
SWARMFIT_HD MaskOf<T> kepler_drift_bodies(Dual<T> (&x)[N][3], Dual<T> (&v)[N][3], const Dual<T> (&mu)[N],
                                          const Dual<T> (&inv_two_pi_mu)[N], Dual<T> h, int last = N - 1) {
  using Mask = MaskOf<T>;
  KeplerSolve<T> k[N];
  SWARMFIT_UNROLL_BODIES(N)
  for (int i = 1; i < N; ++i)
    if (i <= last) {
      const T xv[3] = {x[i][0].v, x[i][1].v, x[i][2].v};
      const T vv[3] = {v[i][0].v, v[i][1].v, v[i][2].v};
      k[i].start(xv, vv, mu[i].v, inv_two_pi_mu[i].v, h.v);
    }
  iterate_bodies<N>(k, last);
  Mask ok = Mask(true);
  SWARMFIT_UNROLL_BODIES(N)
  for (int i = 1; i < N; ++i)
    if (i <= last) {
      T dx[3], dv[3];
      kepler_tangent(k[i], x[i], v[i], mu[i], h, dx, dv);
      T xv[3] = {x[i][0].v, x[i][1].v, x[i][2].v};
      T vv[3] = {v[i][0].v, v[i][1].v, v[i][2].v};
      const Mask moved = k[i].finish(xv, vv);
      ok = mask_and(ok, moved);
      SWARMFIT_UNROLL
      for (int d = 0; d < 3; ++d) {
        x[i][d] = Dual<T>(xv[d], select(moved, dx[d], x[i][d].d));
        v[i][d] = Dual<T>(vv[d], select(moved, dv[d], v[i][d].d));
      }
    }
  return ok;
}

}  // namespace swarmfit
