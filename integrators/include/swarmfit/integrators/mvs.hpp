// Mixed-variable symplectic (Wisdom-Holman) integrator.
//  - Democratic heliocentric coordinates (Duncan, Levison & Lee 1998, AJ 116, 2067, eq. 2-11):
//    heliocentric positions Q_i, barycentric velocities V_i; H = H_Kepler (about G m0) +
//    H_interaction (planet-planet) + H_jump (|sum m_i V_i|^2 / 2 m0).
//  - Jacobi coordinates (Wisdom & Holman 1991, AJ 102, 1528, eq. 10-13) with
//    mu_i = G m0 M_i / M_{i-1}; the kick is the Jacobi transform of the full acceleration minus
//    the Kepler part, which is exact for any choice of mu_i.
// One step is the palindrome A(h/2) B(h/2) C(h) B(h/2) A(h/2) of the three operators in the order
// set by MvsSplitting; the closing A(h/2) is kept pending and merged with the next step's opening
// A(h/2), so e.g. the REBOUND order costs one Kepler solve and one force evaluation per step.
// Symplectic correctors (Wisdom, Holman & Touma 1996, Fields Inst. Commun. 10, 217), for Jacobi
// coordinates with the drift-kick-drift kernel: real -> mapping coordinates when the integration
// starts, mapping -> real when it ends, so the map follows the real trajectory without its
// O(eps h^2) frequency error (TTVFast does the same, Deck et al. 2014). Stage coefficients as in
// REBOUND's WHFast (Rein & Tamayo 2015, MNRAS 452, 376).
#pragma once

#include "swarmfit/integrators/gravity.hpp"
#include "swarmfit/integrators/kepler.hpp"
#include "swarmfit/integrators/parameters.hpp"

namespace swarmfit {

template <int N, class T>
struct Mvs {
  using Mask = MaskOf<T>;
  // One force evaluation per step; in democratic heliocentric coordinates (the default) over the
  // planet pairs only (the star's are the Kepler part).
  static constexpr IntegratorEntry kIntegrators[] = {
      {"mvs", false, 2, true, 1, true,
       "Wisdom & Holman 1991 (AJ 102, 1528); Duncan, Levison & Lee 1998 (AJ 116, 2067); "
       "Rein & Tamayo 2015 (MNRAS 452, 376)",
       "mixed-variable symplectic (Wisdom-Holman), democratic heliocentric or Jacobi coordinates",
       "time_step mvs_coordinates mvs_splitting"}};
  enum Operator { kKepler = 0, kJump = 1, kKick = 2 };
  struct Work {
    T pending;           // time of the outer operator still owed by the previous step
    T kepler_mu[N];      // the Kepler operator's G m per planet ([0] unused): set once in begin()
    T kepler_factor[N];  // kepler_period_factor(kepler_mu[i]), likewise: under the likelihood
                         // kernel's register pressure nvcc computed its division at every step
    // With the Kepler operator outermost: the last kick's acceleration, perturbation() of the
    // stored positions (no operator moves them after the kick), for the dense outputs. Only the
    // observers read it; without them the compiler drops the stores.
    T kick_acc[N][3];
  };

  // ---- per-body pieces of the operators and frame changes. The per-system code below and the
  // thread-per-body CUDA kernel (integrators/src/cuda_body_kernels.cuh) both form their sums and
  // updates through these, with every rounding written out (lane_fma), so that one body comes out
  // with the same bits from either whatever the compiler would contract on its own (it fuses a
  // product used by one update, not one shared by a rolled loop's n - 1 updates).
  // sum_{i >= 1} m_i u(i) in body order: the planets' momentum (jump, star_relative). kUnrolled:
  // unrolled for any n (a thread per body, which keeps the loop's loads in flight), else as the
  // per-system body loops (SWARMFIT_UNROLL_BODIES); the same bits either way.
  template <bool kUnrolled = false, class Masses, class U>
  SWARMFIT_HD static T planet_sum(const Masses& mass, U&& u) {
    T s = 0.0;
    if constexpr (kUnrolled) {
      SWARMFIT_UNROLL
      for (int i = 1; i < N; ++i) s = lane_fma(T(mass[i]), u(i), s);
    } else {
      SWARMFIT_UNROLL_BODIES(N)
      for (int i = 1; i < N; ++i) s = lane_fma(T(mass[i]), u(i), s);
    }
    return s;
  }
  // The jump of one heliocentric coordinate (Duncan et al. 1998, eq. 10): Q + (tau / m0) sum m V.
  SWARMFIT_HD static T jump_factor(T tau, T m0) { return tau * (1.0 / m0); }
  SWARMFIT_HD static T jumped(T q, T tau_m0, T momentum) { return lane_fma(tau_m0, momentum, q); }
  // A drift or kick of one coordinate: q + tau u.
  SWARMFIT_HD static T advanced(T q, T tau, T u) { return lane_fma(tau, u, q); }
  // Jacobi fraction m_i / M_i (M_i = m_0 + ... + m_i), one reciprocal per body.
  SWARMFIT_HD static T jacobi_fraction(T mass, T msum) { return mass * (1.0 / msum); }
  // The Jacobi -> inertial sweep from the outside in: the centre of mass of bodies 0..i-1 is
  // R_{i-1} = R_i - (m_i / M_i) x'_i, and body i sits at x'_i + R_{i-1}.
  SWARMFIT_HD static T inner_centre(T r, T fraction, T jacobi) { return lane_fma(-fraction, jacobi, r); }
  // The star-relative sweep from the inside out (star_relative): X_i - x_0 = X_{i-1} - x_0 + (m_i / M_i) x'_i.
  SWARMFIT_HD static T outer_centre(T s, T fraction, T jacobi) { return lane_fma(fraction, jacobi, s); }
  // A planet's barycentric velocity relative to the star in democratic heliocentric coordinates:
  // V_i - v_0 = V_i + sum m_k V_k / m0.
  SWARMFIT_HD static T star_relative_velocity(T vel, T momentum, T inv_m0) { return lane_fma(momentum, inv_m0, vel); }
  // The Jacobi kick of planet i (perturbation()): a_i - A_{i-1} plus the Kepler term
  // G m0 M_i / M_{i-1} x'_i / r'_i^3 that H_Kepler accounts for, with ca = sum_{k < i} m_k a_k
  // = M_{i-1} A_{i-1} (inner_moment) and inv_m = 1 / M_{i-1}.
  SWARMFIT_HD static T inner_moment(T ca, T mass, T a) { return lane_fma(mass, a, ca); }
  SWARMFIT_HD static T kepler_term(T gm0, T m_through, T inv_m, const T (&x)[3]) {
    const T r2 = lane_fma(x[2], x[2], lane_fma(x[1], x[1], x[0] * x[0]));
    const T rinv = lane_rsqrt(r2);
    return gm0 * m_through * inv_m * rinv * rinv * rinv;
  }
  SWARMFIT_HD static T jacobi_kick(T a, T ca, T inv_m, T kepler, T x) {
    return lane_fma(kepler, x, lane_fma(-ca, inv_m, a));
  }

  // ---- coordinate changes (in place on b.pos / b.vel; slot 0 holds the centre of mass)
  SWARMFIT_HD static void inertial_to_democratic(Bodies<N, T>& b) {
    T mtot = 0.0, cx[3] = {0.0, 0.0, 0.0}, cv[3] = {0.0, 0.0, 0.0};
    SWARMFIT_UNROLL_BODIES(N)
    for (int i = 0; i < N; ++i) {
      mtot += b.mass[i];
      SWARMFIT_UNROLL
      for (int d = 0; d < 3; ++d) {
        cx[d] += b.mass[i] * b.pos[i][d];
        cv[d] += b.mass[i] * b.vel[i][d];
      }
    }
    SWARMFIT_UNROLL
    for (int d = 0; d < 3; ++d) {
      cx[d] = cx[d] / mtot;
      cv[d] = cv[d] / mtot;
      SWARMFIT_UNROLL_BODIES(N)
      for (int i = 1; i < N; ++i) {
        b.pos[i][d] = b.pos[i][d] - b.pos[0][d];
        b.vel[i][d] = b.vel[i][d] - cv[d];
      }
      b.pos[0][d] = cx[d];
      b.vel[0][d] = cv[d];
    }
  }
  SWARMFIT_HD static void democratic_to_inertial(Bodies<N, T>& b) {
    T mtot = 0.0;
    SWARMFIT_UNROLL_BODIES(N)
    for (int i = 0; i < N; ++i) mtot += b.mass[i];
    SWARMFIT_UNROLL
    for (int d = 0; d < 3; ++d) {
      T mq = 0.0, mv = 0.0;
      SWARMFIT_UNROLL_BODIES(N)
      for (int i = 1; i < N; ++i) {
        mq += b.mass[i] * b.pos[i][d];
        mv += b.mass[i] * b.vel[i][d];
      }
      const T x0 = b.pos[0][d] - mq / mtot;
      const T vcom = b.vel[0][d];
      SWARMFIT_UNROLL_BODIES(N)
      for (int i = 1; i < N; ++i) {
        b.pos[i][d] = b.pos[i][d] + x0;
        b.vel[i][d] = b.vel[i][d] + vcom;
      }
      b.pos[0][d] = x0;
      b.vel[0][d] = vcom - mv / b.mass[0];
    }
  }
  SWARMFIT_HD static void inertial_to_jacobi(Bodies<N, T>& b) {
    T m = b.mass[0];
    T rx[3], rv[3];
    SWARMFIT_UNROLL
    for (int d = 0; d < 3; ++d) {
      rx[d] = b.pos[0][d];
      rv[d] = b.vel[0][d];
    }
    SWARMFIT_UNROLL_BODIES(N)
    for (int i = 1; i < N; ++i) {
      const T mnew = m + b.mass[i];
      SWARMFIT_UNROLL
      for (int d = 0; d < 3; ++d) {
        const T xi = b.pos[i][d], vi = b.vel[i][d];
        b.pos[i][d] = xi - rx[d];
        b.vel[i][d] = vi - rv[d];
        rx[d] = (m * rx[d] + b.mass[i] * xi) / mnew;
        rv[d] = (m * rv[d] + b.mass[i] * vi) / mnew;
      }
      m = mnew;
    }
    SWARMFIT_UNROLL
    for (int d = 0; d < 3; ++d) {
      b.pos[0][d] = rx[d];
      b.vel[0][d] = rv[d];
    }
  }
  // Jacobi -> inertial for positions (and velocities if with_velocities).
  SWARMFIT_HD static void jacobi_to_inertial(const Bodies<N, T>& jac, T (&x)[N][3], T (&v)[N][3]) {
    T msum[N];
    msum[0] = jac.mass[0];
    SWARMFIT_UNROLL_BODIES(N)
    for (int i = 1; i < N; ++i) msum[i] = msum[i - 1] + jac.mass[i];
    T rx[3], rv[3];
    SWARMFIT_UNROLL
    for (int d = 0; d < 3; ++d) {
      rx[d] = jac.pos[0][d];
      rv[d] = jac.vel[0][d];
    }
    SWARMFIT_UNROLL_BODIES(N)
    for (int i = N - 1; i >= 1; --i) {
      // One reciprocal per body (a division is ~10 FMAs on a GPU, ~100 with a zero numerator: a
      // test particle's mass).
      const T fraction = jacobi_fraction(jac.mass[i], msum[i]);
      SWARMFIT_UNROLL
      for (int d = 0; d < 3; ++d) {
        rx[d] = inner_centre(rx[d], fraction, jac.pos[i][d]);
        rv[d] = inner_centre(rv[d], fraction, jac.vel[i][d]);
        x[i][d] = jac.pos[i][d] + rx[d];
        v[i][d] = jac.vel[i][d] + rv[d];
      }
    }
    SWARMFIT_UNROLL
    for (int d = 0; d < 3; ++d) {
      x[0][d] = rx[d];
      v[0][d] = rv[d];
    }
  }

  SWARMFIT_HD static void jacobi_to_inertial_in_place(Bodies<N, T>& b) {
    T x[N][3], v[N][3];
    jacobi_to_inertial(b, x, v);
    SWARMFIT_UNROLL_BODIES(N)
    for (int i = 0; i < N; ++i) {
      SWARMFIT_UNROLL
      for (int d = 0; d < 3; ++d) {
        b.pos[i][d] = x[i][d];
        b.vel[i][d] = v[i][d];
      }
    }
  }

  // ---- the three operators
  // The gravitational parameter of each planet's Kepler motion: G m0 (democratic heliocentric)
  // or G m0 M_i / M_{i-1} (Jacobi; M_i = m0 + ... + m_i). Computed once per integration and kept
  // in Work: recomputed in every step's drift it cost the likelihood kernel two divisions per
  // step, which nvcc did not hoist out of the loop under that kernel's register pressure.
  SWARMFIT_HD static void kepler_mu(const Bodies<N, T>& b, const StepParams& p, T (&mu)[N]) {
    mu[0] = 0.0;
    if (p.mvs_coordinates == MvsCoordinates::kDemocraticHeliocentric) {
      SWARMFIT_UNROLL_BODIES(N)
      for (int i = 1; i < N; ++i) mu[i] = p.G * b.mass[0];
    } else {
      T m = b.mass[0];
      SWARMFIT_UNROLL_BODIES(N)
      for (int i = 1; i < N; ++i) {
        const T mnew = m + b.mass[i];
        mu[i] = T(p.G * b.mass[0]) * mnew / m;
        m = mnew;
      }
    }
  }
  SWARMFIT_HD static void set_kepler(const Bodies<N, T>& b, const StepParams& p, Work& w) {
    kepler_mu(b, p, w.kepler_mu);
    w.kepler_factor[0] = 0.0;
    SWARMFIT_UNROLL_BODIES(N)
    for (int i = 1; i < N; ++i) w.kepler_factor[i] = kepler_period_factor(w.kepler_mu[i]);
  }
  SWARMFIT_HD static Mask kepler(Bodies<N, T>& b, const StepParams& p, T tau) {
    Work w;
    set_kepler(b, p, w);
    return kepler(b, w, tau);
  }
  SWARMFIT_HD static Mask kepler(Bodies<N, T>& b, const Work& w, T tau) {
    const Mask ok = kepler_drift_bodies<N>(b.pos, b.vel, w.kepler_mu, w.kepler_factor, tau);
    SWARMFIT_UNROLL
    for (int d = 0; d < 3; ++d) b.pos[0][d] = advanced(b.pos[0][d], tau, b.vel[0][d]);  // centre of mass
    return ok;
  }
  SWARMFIT_HD static void jump(Bodies<N, T>& b, T tau) {
    // Products with 1/m0: the z sums of a coplanar system are exactly 0, and 0 / m0 takes the
    // GPU's slow division path.
    const T tau_m0 = jump_factor(tau, b.mass[0]);
    SWARMFIT_UNROLL
    for (int d = 0; d < 3; ++d) {
      const T mv = planet_sum(b.mass, [&](int i) { return b.vel[i][d]; });
      SWARMFIT_UNROLL_BODIES(N)
      for (int i = 1; i < N; ++i) b.pos[i][d] = jumped(b.pos[i][d], tau_m0, mv);
    }
  }
  // The acceleration the kick applies (the interaction part of H), per planet in the
  // coordinates of the scheme.
  SWARMFIT_HD static void perturbation(const Bodies<N, T>& b, const StepParams& p, T (&acc)[N][3]) {
    if (p.mvs_coordinates == MvsCoordinates::kDemocraticHeliocentric) {
      accelerations<N, 1>(b.pos, b.mass, p.G, acc);  // differences of Q are inertial differences
    } else {
      T x[N][3], v[N][3], a[N][3];
      jacobi_to_inertial(b, x, v);
      accelerations<N>(x, b.mass, p.G, a);
      // Jacobi accelerations a_i - A_{i-1} (A = acceleration of the inner centre of mass) plus
      // the Kepler term that H_Kepler already accounts for.
      T m = b.mass[0];
      T ca[3] = {b.mass[0] * a[0][0], b.mass[0] * a[0][1], b.mass[0] * a[0][2]};
      SWARMFIT_UNROLL_BODIES(N)
      for (int i = 1; i < N; ++i) {
        const T mnew = m + b.mass[i];
        const T inv_m = 1.0 / m;
        const T kepler = kepler_term(T(p.G * b.mass[0]), mnew, inv_m, b.pos[i]);
        SWARMFIT_UNROLL
        for (int d = 0; d < 3; ++d) {
          acc[i][d] = jacobi_kick(a[i][d], ca[d], inv_m, kepler, b.pos[i][d]);
          ca[d] = inner_moment(ca[d], b.mass[i], a[i][d]);
        }
        m = mnew;
      }
      acc[0][0] = 0.0;
      acc[0][1] = 0.0;
      acc[0][2] = 0.0;
    }
  }
  // The star's barycentric a_z that goes with the kick of perturbation() (for dense_star_vz): the
  // star's velocity is V_cm - sum m_i V_i / m0 in democratic heliocentric coordinates, where the
  // mutual forces cancel in the sum (0); in Jacobi coordinates it is V_cm - sum f_i v'_i
  // (f_i = m_i / M_i, M_i = m0 + ... + m_i), so a kick of tau a_i moves it by -tau sum f_i a_i:
  // from the kick's own acceleration (Work::kick_acc), with no force evaluated again.
  SWARMFIT_HD static T kick_star_az(const Bodies<N, T>& b, const Work& w, const StepParams& p) {
    if (p.mvs_coordinates == MvsCoordinates::kDemocraticHeliocentric) return T(0.0);
    T az = 0.0;
    T msum = b.mass[0];
    SWARMFIT_UNROLL_BODIES(N)
    for (int i = 1; i < N; ++i) {
      msum = msum + b.mass[i];
      az = lane_fma(-jacobi_fraction(b.mass[i], msum), w.kick_acc[i][2], az);
    }
    return az;
  }
  SWARMFIT_HD static void kick(Bodies<N, T>& b, const StepParams& p, T tau) {
    T acc[N][3];
    kick(b, p, tau, acc);
  }
  SWARMFIT_HD static void kick(Bodies<N, T>& b, const StepParams& p, T tau, T (&acc)[N][3]) {
    perturbation(b, p, acc);
    SWARMFIT_UNROLL_BODIES(N)
    for (int i = 1; i < N; ++i) {
      SWARMFIT_UNROLL
      for (int d = 0; d < 3; ++d) b.vel[i][d] = advanced(b.vel[i][d], tau, acc[i][d]);
    }
  }

  // inv = +1: real -> mapping coordinates; inv = -1: back. The corrector is a product of stages
  // Z(a, b) = Kepler(a) kick(-b) Kepler(-2a) kick(b) Kepler(a) (Wisdom et al. 1996),
  // applied as one flat list of operators so the Kepler solver is instantiated once.
  SWARMFIT_HD_COLD static void apply_corrector(Bodies<N, T>& b, const StepParams& p, double inv) {
    if (p.mvs_coordinates != MvsCoordinates::kJacobi || p.mvs_splitting != MvsSplitting::kKeplerJumpKick) return;
    const double a1 = 0.41833001326703777399;  // a_k = k sqrt(7/40)
    // (a_k / a1, b) per stage, b already multiplied by the sign pattern of the order.
    double stage_a[6], stage_b[6];
    int stages = 0;
    if (p.mvs_corrector == 3) {
      const double b31 = -0.024900596027799867499;
      const double a[2] = {1, -1}, bb[2] = {-b31, b31};
      for (int k = 0; k < 2; ++k) stage_a[k] = a[k], stage_b[k] = bb[k];
      stages = 2;
    } else if (p.mvs_corrector == 5) {
      const double b51 = -0.0083001986759332891665, b52 = 0.041500993379666445832;
      const double a[4] = {-2, -1, 1, 2}, bb[4] = {-b51, -b52, b52, b51};
      for (int k = 0; k < 4; ++k) stage_a[k] = a[k], stage_b[k] = bb[k];
      stages = 4;
    } else if (p.mvs_corrector == 7) {
      const double b71 = 0.0024926811426922105779, b72 = -0.018270923246702131478, b73 = 0.053964399093127498722;
      const double a[6] = {-3, -2, -1, 1, 2, 3}, bb[6] = {-b71, -b72, -b73, b73, b72, b71};
      for (int k = 0; k < 6; ++k) stage_a[k] = a[k], stage_b[k] = bb[k];
      stages = 6;
    }
    const double h = p.time_step;
    SWARMFIT_ROLLED
    for (int op = 0; op < 5 * stages; ++op) {
      const double a = stage_a[op / 5] * a1 * h, k = inv * stage_b[op / 5] * h;
      const int part = op % 5;
      if (part == 1 || part == 3) {
        kick(b, p, T(part == 1 ? -k : k));
      } else {
        kepler(b, p, T(part == 2 ? -2.0 * a : a));
      }
    }
  }

  // The out-of-line corrector works on a copy: handing b itself to a function that is not
  // inlined would keep b in local memory for the whole integration instead of in registers.
  SWARMFIT_HD static void corrector(Bodies<N, T>& b, const StepParams& p, double inv) {
    Bodies<N, T> copy = b;
    apply_corrector(copy, p, inv);
    b = copy;
  }

  // Drift (jump) or kick, whichever `op` names; the Kepler operator is called in one place
  // only, so the solver is inlined once per planet (code size, and nvcc compile time).
  SWARMFIT_HD static void linear_operator(int op, Bodies<N, T>& b, const StepParams& p, T tau) {
    if (op == kKick) {
      kick(b, p, tau);
    } else if (p.mvs_coordinates == MvsCoordinates::kDemocraticHeliocentric) {
      jump(b, tau);  // Jacobi coordinates have no jump term
    }
  }

  SWARMFIT_HD static void begin(Bodies<N, T>& b, Work& w, const StepParams& p, T& h_next) {
    if (p.mvs_coordinates == MvsCoordinates::kDemocraticHeliocentric) {
      inertial_to_democratic(b);
    } else {
      inertial_to_jacobi(b);
      if (p.mvs_corrector > 0) corrector(b, p, 1.0);
    }
    w.pending = 0.0;
    set_kepler(b, p, w);
#if !defined(__CUDA_ARCH__)
    // Each step sets it before it is read, but the SIMD lanes' blend (integrate_lanes) copies the
    // whole Work, this too, before the first step. (A GPU thread is one lane with no blend, and
    // zeroing it there changed the likelihood kernel's register allocation.)
    for (int i = 0; i < N; ++i) w.kick_acc[i][0] = w.kick_acc[i][1] = w.kick_acc[i][2] = 0.0;
#endif
    h_next = p.time_step;
  }

  // One step A(h/2) B(h/2) C(h) B(h/2) [A(h/2) pending], written as: the operators before the
  // Kepler drift, the drift, the operators after it.
  SWARMFIT_HD static Mask step(Bodies<N, T>& b, Work& w, T h, const StepParams& p, T& h_next, Mask& accepted) {
    const T half = 0.5 * h;
    const T opening = w.pending + half;
    T kepler_time;
    switch (p.mvs_splitting) {
      case MvsSplitting::kKeplerJumpKick:  // [Kepler] jump kick jump
        kepler_time = opening;
        break;
      case MvsSplitting::kKickJumpKepler:  // kick jump [Kepler] jump
        kick(b, p, opening);
        linear_operator(kJump, b, p, half);
        kepler_time = h;
        break;
      default:  // jump kick [Kepler] kick
        linear_operator(kJump, b, p, opening);
        kick(b, p, half);
        kepler_time = h;
        break;
    }
    const Mask ok = kepler(b, w, kepler_time);
    switch (p.mvs_splitting) {
      case MvsSplitting::kKeplerJumpKick:
        linear_operator(kJump, b, p, half);
        kick(b, p, h, w.kick_acc);
        linear_operator(kJump, b, p, half);
        break;
      case MvsSplitting::kKickJumpKepler: linear_operator(kJump, b, p, half); break;
      default: kick(b, p, half); break;
    }
    w.pending = half;
    h_next = p.time_step;
    accepted = Mask(true);
    return ok;
  }

  SWARMFIT_HD static void end(Bodies<N, T>& b, Work& w, const StepParams& p) {
    // The pending half of the outer operator.
    switch (p.mvs_splitting) {
      case MvsSplitting::kKeplerJumpKick: kepler(b, w, w.pending); break;
      case MvsSplitting::kKickJumpKepler: kick(b, p, w.pending); break;
      default: linear_operator(kJump, b, p, w.pending); break;
    }
    w.pending = 0.0;
    to_inertial(b, p);
  }
  // The coordinate change that closes end(): back to inertial (through the corrector).
  SWARMFIT_HD static void to_inertial(Bodies<N, T>& b, const StepParams& p) {
    if (p.mvs_coordinates == MvsCoordinates::kDemocraticHeliocentric) {
      democratic_to_inertial(b);
    } else {
      if (p.mvs_corrector > 0) corrector(b, p, -1.0);
      jacobi_to_inertial_in_place(b);
    }
  }

  // With the Kepler operator outermost (kepler_jump_kick), the stored state still owes a Kepler
  // drift of w.pending: its positions are those of about w.pending earlier.
  SWARMFIT_HD static T observation_lag(const Work& w, const StepParams& p) {
    return p.mvs_splitting == MvsSplitting::kKeplerJumpKick ? w.pending : T(0.0);
  }

  // Dense output of the star's barycentric v_z at t_new + delta, -2 pending < delta <= pending, when
  // the Kepler operator is outermost (dense_observations): the stored state is the one just after
  // the step's kick (at t_new - pending) still owing its closing Kepler drift. Drift it by
  // s = pending + delta, then take away the part of the kick that belongs after t_new + delta (a kick
  // of h a_p stands for the perturbation over the step around it): delta / h of it, h = 2 pending.
  // Exact for one planet; for the step's own end (delta = 0) it is the closed state of the map.
  // One Kepler drift per planet instead of a sub-step of the scheme (two drifts and a kick).
  SWARMFIT_HD static bool dense_observations(const StepParams& p) {
    return p.mvs_splitting == MvsSplitting::kKeplerJumpKick;
  }
  // dense_star_vz, kick_star_az and dense_relative are inlined into their callers, which are the
  // observers' out-of-line functions (record_rv, refine_transit): as out-of-line functions
  // of their own, a second level of calls, they would take and return the state through GPU local
  // memory (bench/RESULTS.md run 12).
  // The kick's change of the star's v_z, h a_z (kick_star_az), is taken from the kick's own
  // acceleration (Work::kick_acc; a_z = 0 in democratic heliocentric coordinates): a few products
  // per observation, and nothing in the step.
  SWARMFIT_HD static T dense_star_vz(const Bodies<N, T>& b, const Work& w, const StepParams& p, T delta) {
    Bodies<N, T> copy = b;
    kepler(copy, w, w.pending + delta);
    T vz;
    if (p.mvs_coordinates == MvsCoordinates::kDemocraticHeliocentric) {
      democratic_to_inertial(copy);
      vz = copy.vel[0][2];
    } else {
      T x[N][3], v[N][3];
      jacobi_to_inertial(copy, x, v);
      vz = v[0][2];
    }
    const T fraction = select(w.pending > 0.0, delta * (0.5 / w.pending), T(0.0));
    return vz + fraction * ((2.0 * w.pending) * kick_star_az(b, w, p));
  }

  // Dense output of a planet's state relative to the star, for the transit times: Jacobi coordinates
  // with the Kepler operator outermost (the default). Between two kicks the map moves every Jacobi
  // vector on its Kepler orbit; a kick of h a_p (a_p = perturbation()) stands for the perturbation
  // over the step around it. The state at t_new + delta, -3h/2 <= delta <= h/2 (h = 2 pending), is
  // the map's own Kepler segment that holds that time (after this step's kick, or before it:
  // velocities less h a_p) plus the leading perturbation terms from that segment's closed state at
  // time u before: positions + a_p u^2 / 2, velocities + a_p u (exact for a constant a_p; the map
  // itself is a drift-kick-drift leapfrog in the perturbation, Wisdom & Holman 1991). Continuous
  // with its first derivative at the kick, so Newton on it converges as on the true motion; error
  // O(da_p/dt h^3), against the two Kepler drifts and a kick of a sub-step (state_at_offset). a_p:
  // the kick's own acceleration (Work::kick_acc), perturbation() of the stored positions.
  SWARMFIT_HD static bool dense_states(const StepParams& p) {
    return p.mvs_splitting == MvsSplitting::kKeplerJumpKick && p.mvs_coordinates == MvsCoordinates::kJacobi;
  }
  // Only what planet i's transit needs is formed: the segments of the Jacobi vectors 1..i (the
  // outer planets' do not enter x_i - x_0), summed by star_relative's sweep,
  // x_i - x_0 = x'_i + sum_{j<i} (m_j / M_j) x'_j: for an inner planet one Kepler drift instead of
  // one per planet, and no frame change of the whole state (bench/RESULTS.md run 22).
  // tests/integrators/test_mvs_dense.cpp: at delta = 0 and -h it gives the map's closed states.
  template <int i>
  SWARMFIT_HD static void dense_relative(const Bodies<N, T>& b, const Work& w, T delta, T (&x)[3], T (&v)[3]) {
    const auto& acc = w.kick_acc;
    const T h = 2.0 * w.pending;
    const Mask before = delta < -w.pending;  // the segment before this step's kick
    const T u = select(before, delta + h, delta);
    T jx[N][3], jv[N][3];
    SWARMFIT_UNROLL_BODIES(N)
    for (int k = 1; k < N; ++k) {
      SWARMFIT_UNROLL
      for (int d = 0; d < 3; ++d) {
        jx[k][d] = b.pos[k][d];
        jv[k][d] = select(before, b.vel[k][d] - h * acc[k][d], b.vel[k][d]);
      }
    }
    kepler_drift_bodies<N>(jx, jv, w.kepler_mu, w.kepler_factor, w.pending + delta, i);
    const T half_u2 = 0.5 * u * u;
    T sx[3] = {T(0.0), T(0.0), T(0.0)}, sv[3] = {T(0.0), T(0.0), T(0.0)};
    T msum = b.mass[0];
    SWARMFIT_UNROLL_BODIES(N)
    for (int k = 1; k < N; ++k) {
      if (k > i) continue;
      T px[3], pv[3];
      SWARMFIT_UNROLL
      for (int d = 0; d < 3; ++d) {
        px[d] = jx[k][d] + half_u2 * acc[k][d];
        pv[d] = jv[k][d] + u * acc[k][d];
      }
      if (k == i) {
        SWARMFIT_UNROLL
        for (int d = 0; d < 3; ++d) {
          x[d] = px[d] + sx[d];
          v[d] = pv[d] + sv[d];
        }
      } else {
        msum = msum + b.mass[k];
        const T fraction = jacobi_fraction(b.mass[k], msum);
        SWARMFIT_UNROLL
        for (int d = 0; d < 3; ++d) {
          sx[d] = outer_centre(sx[d], fraction, px[d]);
          sv[d] = outer_centre(sv[d], fraction, pv[d]);
        }
      }
    }
  }

  // Positions and velocities relative to the star, for the monitors (between steps the outer
  // operator's closing half is pending, so these are the state to O(h)).
  SWARMFIT_HD static void star_relative(const Bodies<N, T>& b, const Work&, const StepParams& p, T (&rp)[N][3],
                                        T (&rv)[N][3]) {
    if (p.mvs_coordinates == MvsCoordinates::kDemocraticHeliocentric) {
      const T inv_m0 = 1.0 / b.mass[0];
      SWARMFIT_UNROLL
      for (int d = 0; d < 3; ++d) {
        const T mv = planet_sum(b.mass, [&](int i) { return b.vel[i][d]; });
        rp[0][d] = 0.0;
        rv[0][d] = 0.0;
        SWARMFIT_UNROLL_BODIES(N)
        for (int i = 1; i < N; ++i) {
          rp[i][d] = b.pos[i][d];
          rv[i][d] = star_relative_velocity(b.vel[i][d], mv, inv_m0);
        }
      }
    } else {
      // x_i - x_0 = x'_i + sum_{j<i} (m_j / M_j) x'_j for Jacobi vectors x'_j and interior masses
      // M_j = m_0 + ... + m_j (X_{i-1} - x_0, the inner centre of mass seen from the star, grows
      // by (m_j / M_j) x'_j with each body): a third of the work of going through the inertial
      // frame, which matters because the observers need these velocities at every step.
      T sx[3] = {T(0.0), T(0.0), T(0.0)}, sv[3] = {T(0.0), T(0.0), T(0.0)};
      T msum = b.mass[0];
      SWARMFIT_UNROLL
      for (int d = 0; d < 3; ++d) rp[0][d] = rv[0][d] = 0.0;
      SWARMFIT_UNROLL_BODIES(N)
      for (int i = 1; i < N; ++i) {
        SWARMFIT_UNROLL
        for (int d = 0; d < 3; ++d) {
          rp[i][d] = b.pos[i][d] + sx[d];
          rv[i][d] = b.vel[i][d] + sv[d];
        }
        if (i + 1 < N) {
          msum = msum + b.mass[i];
          const T fraction = jacobi_fraction(b.mass[i], msum);
          SWARMFIT_UNROLL
          for (int d = 0; d < 3; ++d) {
            sx[d] = outer_centre(sx[d], fraction, b.pos[i][d]);
            sv[d] = outer_centre(sv[d], fraction, b.vel[i][d]);
          }
        }
      }
    }
  }
};

}  // namespace swarmfit
