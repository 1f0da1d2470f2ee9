// Newtonian point-mass gravity for ONE system of N bodies, written once for every lane type.
// Pairs are visited once (i < j) and applied to both bodies (Newton's third law).
#pragma once

#include "swarmfit/integrators/lanes.hpp"

namespace swarmfit {

// State of one system (or of W systems in SIMD lanes): inertial positions, velocities, masses.
template <int N, class T>
struct Bodies {
  T pos[N][3];
  T vel[N][3];
  T mass[N];
};

template <int N, class T>
SWARMFIT_HD void zero3(T (&a)[N][3]) {
  SWARMFIT_UNROLL_BODIES(N)
  for (int i = 0; i < N; ++i) {
    a[i][0] = 0.0;
    a[i][1] = 0.0;
    a[i][2] = 0.0;
  }
}

// The force loops write their FMAs out (lane_fma): the CPU is built without contraction
// (-ffp-contract=off, so that its results do not hang on the compiler's choices) and would
// otherwise round every product; the GPU contracts the same expressions into the same FMAs. Each
// pair's terms stay exact negatives under i <-> j (round to nearest is symmetric), which the
// bitwise equality of the per-system and per-body loops rests on.
template <class T>
SWARMFIT_HD T norm2_fused(const T (&d)[3]) {
  return lane_fma(d[2], d[2], lane_fma(d[1], d[1], d[0] * d[0]));
}
template <class T>
SWARMFIT_HD T dot_fused(const T (&d)[3], const T (&u)[3]) {
  return lane_fma(d[2], u[2], lane_fma(d[1], u[1], d[0] * u[0]));
}

// Accelerations a_i = sum_j G m_j (x_j - x_i) / |x_j - x_i|^3, over bodies First..N-1.
// First = 1 leaves out every term involving body 0 (the interaction part of the democratic
// heliocentric splitting, Duncan, Levison & Lee 1998 eq. 5).
template <int N, int First = 0, class T>
SWARMFIT_HD void accelerations(const T (&pos)[N][3], const T (&mass)[N], double G, T (&acc)[N][3]) {
  zero3<N>(acc);
  T gm[N];  // G m_k: loop invariants of the integration, hoisted out of it by the compiler
  SWARMFIT_UNROLL_BODIES(N)
  for (int k = 0; k < N; ++k) gm[k] = G * mass[k];
  SWARMFIT_UNROLL_BODIES(N)
  for (int i = First; i < N; ++i) {
    SWARMFIT_UNROLL_BODIES(N)
    for (int j = 0; j < N; ++j) {
      if (j <= i) continue;
      const T d[3] = {pos[j][0] - pos[i][0], pos[j][1] - pos[i][1], pos[j][2] - pos[i][2]};
      const T rinv = lane_rsqrt(norm2_fused(d));
      const T rinv3 = rinv * rinv * rinv;
      const T fi = gm[j] * rinv3;
      const T fj = gm[i] * rinv3;
      SWARMFIT_UNROLL
      for (int k = 0; k < 3; ++k) {
        acc[i][k] = lane_fma(fi, d[k], acc[i][k]);
        acc[j][k] = lane_fma(-fj, d[k], acc[j][k]);
      }
    }
  }
}

// One pair's part of the accelerations and jerks (Makino & Aarseth 1992, eq. 2-3): for
// d = x_j - x_i and u = v_j - v_i, returns |d|^-3 and sets jdir = u - 3 (d.u) d / |d|^2, so that
// body i gets G m_j |d|^-3 (d, jdir) and body j the opposite with G m_i. Both force loops below
// (pairs once, for one thread per system; every partner of one body, for one thread per body)
// use it: swapping i and j negates d, u and jdir exactly, so the two give bitwise equal sums.
template <class T>
SWARMFIT_HD T pair_jerk_terms(const T (&d)[3], const T (&u)[3], T (&jdir)[3]) {
  const T rinv = lane_rsqrt(norm2_fused(d));
  const T rinv2 = rinv * rinv;
  const T alpha = 3.0 * dot_fused(d, u) * rinv2;
  SWARMFIT_UNROLL
  for (int k = 0; k < 3; ++k) jdir[k] = lane_fma(-alpha, d[k], u[k]);
  return rinv * rinv2;
}

// Accelerations and their time derivatives (jerks), as needed by the Hermite scheme
// (Makino & Aarseth 1992, eq. 2-3): j_i = sum_j G m_j [dv/r^3 - 3 (dx.dv) dx / r^5].
template <int N, class T>
SWARMFIT_HD void accelerations_and_jerks(const T (&pos)[N][3], const T (&vel)[N][3], const T (&mass)[N], double G,
                                         T (&acc)[N][3], T (&jerk)[N][3]) {
  zero3<N>(acc);
  zero3<N>(jerk);
  T gm[N];  // G m_k: loop invariants of the integration, hoisted out of it by the compiler
  SWARMFIT_UNROLL_BODIES(N)
  for (int k = 0; k < N; ++k) gm[k] = G * mass[k];
  SWARMFIT_UNROLL_BODIES(N)
  for (int i = 0; i < N; ++i) {
    SWARMFIT_UNROLL_BODIES(N)
    for (int j = 0; j < N; ++j) {
      if (j <= i) continue;
      T d[3], u[3], jdir[3];
      SWARMFIT_UNROLL
      for (int k = 0; k < 3; ++k) {
        d[k] = pos[j][k] - pos[i][k];
        u[k] = vel[j][k] - vel[i][k];
      }
      const T rinv3 = pair_jerk_terms(d, u, jdir);
      const T fi = gm[j] * rinv3;
      const T fj = gm[i] * rinv3;
      SWARMFIT_UNROLL
      for (int k = 0; k < 3; ++k) {
        acc[i][k] = lane_fma(fi, d[k], acc[i][k]);
        acc[j][k] = lane_fma(-fj, d[k], acc[j][k]);
        jerk[i][k] = lane_fma(fi, jdir[k], jerk[i][k]);
        jerk[j][k] = lane_fma(-fj, jdir[k], jerk[j][k]);
      }
    }
  }
}

// The acceleration and jerk of body `self` alone, from every other body's state as
// partner(j, x_j, v_j) gives it: the loop of a thread that owns one body of a system (the CUDA
// thread-per-body kernels). Partners are visited in the order j = 0..N-1, the order in which
// accelerations_and_jerks adds them up, so the sums agree bitwise.
template <int N, class T, class Partner>
SWARMFIT_HD void acceleration_and_jerk_of(int self, const T (&x)[3], const T (&v)[3], const T (&gm)[N],
                                          Partner&& partner, T (&acc)[3], T (&jerk)[3]) {
  SWARMFIT_UNROLL
  for (int k = 0; k < 3; ++k) acc[k] = jerk[k] = 0.0;
  SWARMFIT_UNROLL
  for (int j = 0; j < N; ++j) {
    if (j == self) continue;
    T xj[3], vj[3];
    partner(j, xj, vj);
    T d[3], u[3], jdir[3];
    SWARMFIT_UNROLL
    for (int k = 0; k < 3; ++k) {
      d[k] = xj[k] - x[k];
      u[k] = vj[k] - v[k];
    }
    const T f = gm[j] * pair_jerk_terms(d, u, jdir);
    SWARMFIT_UNROLL
    for (int k = 0; k < 3; ++k) {
      acc[k] = lane_fma(f, d[k], acc[k]);
      jerk[k] = lane_fma(f, jdir[k], jerk[k]);
    }
  }
}

// The acceleration of body `self` alone, accelerations<N, First>'s sum for that body, from the
// other bodies' positions as partner(j, x_j) gives them (the CUDA thread-per-body kernels of MVS
// and leapfrog). Partners j = First..N-1 in the order the pair loop adds them; a pair's terms with
// i and j swapped are exact negatives, so the sums agree bitwise.
template <int N, int First = 0, class T, class Partner>
SWARMFIT_HD void acceleration_of(int self, const T (&x)[3], const T (&gm)[N], Partner&& partner, T (&acc)[3]) {
  acc[0] = acc[1] = acc[2] = 0.0;
  SWARMFIT_UNROLL
  for (int j = First; j < N; ++j) {
    if (j == self) continue;
    T xj[3];
    partner(j, xj);
    const T d[3] = {xj[0] - x[0], xj[1] - x[1], xj[2] - x[2]};
    const T rinv = lane_rsqrt(norm2_fused(d));
    const T rinv3 = rinv * rinv * rinv;
    const T f = gm[j] * rinv3;
    SWARMFIT_UNROLL
    for (int k = 0; k < 3; ++k) acc[k] = lane_fma(f, d[k], acc[k]);
  }
}

// Total energy (kinetic + potential) in the inertial frame.
template <int N, class T>
SWARMFIT_HD T total_energy(const Bodies<N, T>& s, double G) {
  T kinetic = 0.0;
  T potential = 0.0;
  SWARMFIT_UNROLL_BODIES(N)
  for (int i = 0; i < N; ++i) {
    const T v2 = s.vel[i][0] * s.vel[i][0] + s.vel[i][1] * s.vel[i][1] + s.vel[i][2] * s.vel[i][2];
    kinetic += 0.5 * s.mass[i] * v2;
    SWARMFIT_UNROLL_BODIES(N)
    for (int j = 0; j < N; ++j) {
      if (j <= i) continue;
      const T dx = s.pos[j][0] - s.pos[i][0];
      const T dy = s.pos[j][1] - s.pos[i][1];
      const T dz = s.pos[j][2] - s.pos[i][2];
      potential -= G * s.mass[i] * s.mass[j] / lane_sqrt(dx * dx + dy * dy + dz * dz);
    }
  }
  return kinetic + potential;
}

// Positions and velocities relative to body 0 (the star), for the monitors.
template <int N, class T>
SWARMFIT_HD void relative_to_body0(const Bodies<N, T>& b, T (&rp)[N][3], T (&rv)[N][3]) {
  SWARMFIT_UNROLL_BODIES(N)
  for (int i = 0; i < N; ++i) {
    SWARMFIT_UNROLL
    for (int d = 0; d < 3; ++d) {
      rp[i][d] = b.pos[i][d] - b.pos[0][d];
      rv[i][d] = b.vel[i][d] - b.vel[0][d];
    }
  }
}

// What the schemes that work in inertial coordinates (Hermite, RKCK, leapfrog) share: nothing to
// undo at the end of a call, and star-relative states by subtraction.
template <int N, class T>
struct InertialCoordinates {
  template <class Work, class Params>
  SWARMFIT_HD static void end(Bodies<N, T>&, Work&, const Params&) {}
  template <class Work, class Params>
  SWARMFIT_HD static void star_relative(const Bodies<N, T>& b, const Work&, const Params&, T (&rp)[N][3],
                                        T (&rv)[N][3]) {
    relative_to_body0(b, rp, rv);
  }
  // How far behind the step's end time the stored state is (MVS keeps half a Kepler drift pending).
  template <class Work, class Params>
  SWARMFIT_HD static T observation_lag(const Work&, const Params&) {
    return T(0.0);
  }
};

}  // namespace swarmfit
