// SABA4 (Laskar & Robutel 2001, Celest. Mech. Dyn. Astron. 80, 39: SABA_n with n = 4), the
// Wisdom-Holman splitting H = A + B (A: Jacobi Kepler motions, B: interactions) composed with
// positive steps so that the error is O(eps h^8 + eps^2 h^2) instead of MVS's O(eps h^2): for
// stability integrations over 1e6-1e9 orbits. One step is
//   A(c1 h) B(d1 h) A(c2 h) B(d2 h) A(c3 h) B(d2 h) A(c2 h) B(d1 h) A(c1 h),
// the drifts ending at the four Gauss-Legendre nodes of [0, 1] and the kicks weighted by their
// weights; the closing A(c1 h) is kept pending and merged with the next step's opening one, as
// Mvs does, so a step costs four Kepler drifts and four force evaluations.
// The operators are Mvs's in Jacobi coordinates (whatever StepParams::mvs_coordinates says), with
// REBOUND's Kepler mass mu_i = G M_i (M_i = m0 + ... + m_i; WHFast and SABA, Rein & Tamayo 2015,
// Rein, Tamayo & Brown 2019, MNRAS 489, 4632) instead of Mvs's G m0 M_i / M_{i-1} (Wisdom &
// Holman 1991): the kick adds the difference back. Both split the same H (each kick is the full
// Jacobi acceleration less its own Kepler part), but from planet 2 on the split differs by O(eps),
// as much as B itself: G M_i puts the inner planets' monopole into A, which gives smaller position
// and energy errors against IAS15 (bench/RESULTS.md, "SABA4"), and makes saba4 REBOUND's SABA4
// step for step (same coefficients, order, merged drift, Kepler mass).
#pragma once

#include "swarmfit/integrators/mvs.hpp"

namespace swarmfit {

enum class JacobiKeplerMass : int {
  kInteriorMass = 0,  // mu_i = G M_i (REBOUND's WHFast and SABA in Jacobi coordinates): saba4
  kWisdomHolman = 1,  // mu_i = G m0 M_i / M_{i-1} (Wisdom & Holman 1991; Mvs's): for comparison
};

template <int N, class T, JacobiKeplerMass kMass>
struct Saba4Jacobi {
  using Mask = MaskOf<T>;
  using M = Mvs<N, T>;
  using Work = typename M::Work;  // pending drift, Kepler mu and period factors (kick_acc: whfast's kick)

  // Drift times and kick weights per stage (Laskar & Robutel's c_i, d_i for SABA4), with
  //   c1 = 1/2 - sqrt(525 + 70 sqrt 30) / 70, c2 = (sqrt(525 + 70 sqrt 30) - sqrt(525 - 70 sqrt 30)) / 70,
  //   c3 = sqrt(525 - 70 sqrt 30) / 35, d1 = 1/4 - sqrt 30 / 72, d2 = 1/4 + sqrt 30 / 72.
  static constexpr double kC1 = 0.069431844202973712388;
  static constexpr double kC2 = 0.26057763400459815521;
  static constexpr double kC3 = 0.33998104358485626480;
  static constexpr double kD1 = 0.17392742256872692869;
  static constexpr double kD2 = 0.32607257743127307131;

  SWARMFIT_HD static StepParams jacobi(const StepParams& p) {
    StepParams q = p;
    q.mvs_coordinates = MvsCoordinates::kJacobi;
    return q;
  }

  SWARMFIT_HD static void set_kepler(const Bodies<N, T>& b, const StepParams& p, Work& w) {
    M::set_kepler(b, jacobi(p), w);
    if constexpr (kMass == JacobiKeplerMass::kInteriorMass) {
      T msum = b.mass[0];
      SWARMFIT_UNROLL_BODIES(N)
      for (int i = 1; i < N; ++i) {
        msum = msum + b.mass[i];
        w.kepler_mu[i] = T(p.G) * msum;
        w.kepler_factor[i] = kepler_period_factor(w.kepler_mu[i]);
      }
    }
  }

  // B(tau): Mvs's Jacobi kick adds back the Kepler term G m0 M_i / M_{i-1} x'_i / r'_i^3; with
  // kInteriorMass the Kepler part is G M_i x'_i / r'_i^3, larger by G M_i (M_{i-1} - m0) / M_{i-1}
  // x'_i / r'_i^3, which the kick adds too (zero for planet 1).
  SWARMFIT_HD static void kick(Bodies<N, T>& b, const StepParams& p, T tau) {
    M::kick(b, jacobi(p), tau);
    if constexpr (kMass == JacobiKeplerMass::kInteriorMass) {
      T inner = b.mass[0] + b.mass[1], planets = b.mass[1];  // M_{i-1} and M_{i-1} - m0
      SWARMFIT_UNROLL_BODIES(N)
      for (int i = 2; i < N; ++i) {
        const T through = inner + b.mass[i];
        const T r2 = lane_fma(b.pos[i][2], b.pos[i][2], lane_fma(b.pos[i][1], b.pos[i][1], b.pos[i][0] * b.pos[i][0]));
        const T rinv = lane_rsqrt(r2);
        const T extra = tau * T(p.G) * through * planets * (1.0 / inner) * rinv * rinv * rinv;
        SWARMFIT_UNROLL
        for (int d = 0; d < 3; ++d) b.vel[i][d] = lane_fma(extra, b.pos[i][d], b.vel[i][d]);
        planets = planets + b.mass[i];
        inner = through;
      }
    }
  }

  SWARMFIT_HD static void begin(Bodies<N, T>& b, Work& w, const StepParams& p, T& h_next) {
    M::inertial_to_jacobi(b);
    w.pending = 0.0;
    set_kepler(b, p, w);
    // Never read, but the SIMD lanes' blend copies the whole Work.
    for (int i = 0; i < N; ++i) w.kick_acc[i][0] = w.kick_acc[i][1] = w.kick_acc[i][2] = 0.0;
    h_next = p.time_step;
  }

  // Four stages of drift and kick (the closing drift pending); a rolled loop, so that the Kepler
  // solver is inlined once per planet (code size, nvcc compile time), as in Mvs.
  SWARMFIT_HD static Mask step(Bodies<N, T>& b, Work& w, T h, const StepParams& p, T& h_next, Mask& accepted) {
    Mask ok = Mask(true);
    SWARMFIT_ROLLED
    for (int stage = 0; stage < 4; ++stage) {
      const bool outer = stage == 0 || stage == 3;
      const T drift = stage == 0 ? w.pending + kC1 * h : (stage == 2 ? kC3 : kC2) * h;
      ok = mask_and(ok, M::kepler(b, w, drift));
      kick(b, p, (outer ? kD1 : kD2) * h);
    }
    w.pending = kC1 * h;
    h_next = p.time_step;
    accepted = Mask(true);
    return ok;
  }

  // The pending drift, then back to inertial coordinates.
  SWARMFIT_HD static void end(Bodies<N, T>& b, Work& w, const StepParams&) {
    M::kepler(b, w, w.pending);
    w.pending = 0.0;
    M::jacobi_to_inertial_in_place(b);
  }

  // The stored state still owes its closing drift: its positions are those of w.pending before
  // the step's end (as Mvs with the Kepler operator outermost).
  SWARMFIT_HD static T observation_lag(const Work& w, const StepParams&) { return w.pending; }

  // Relative to the star, for the monitors and observers (to O(c1 h), the pending drift).
  SWARMFIT_HD static void star_relative(const Bodies<N, T>& b, const Work& w, const StepParams& p, T (&rp)[N][3],
                                        T (&rv)[N][3]) {
    M::star_relative(b, w, jacobi(p), rp, rv);
  }
};

template <int N, class T>
struct Saba4 : Saba4Jacobi<N, T, JacobiKeplerMass::kInteriorMass> {
  // Order 2 as the step shrinks (the eps^2 h^2 term); REBOUND calls it (8, 2).
  static constexpr IntegratorEntry kIntegrators[] = {
      {"saba4", false, 2, true, 4, false,
       "Laskar & Robutel 2001 (Celest. Mech. Dyn. Astron. 80, 39); Wisdom & Holman 1991 (AJ 102, 1528); "
       "Rein, Tamayo & Brown 2019 (MNRAS 489, 4632)",
       "SABA4 symplectic, Jacobi coordinates: error O(eps h^8 + eps^2 h^2), for long stability integrations",
       "time_step"}};
};

// WHFast (Rein & Tamayo 2015, MNRAS 452, 376) in Jacobi coordinates, REBOUND's default integrator
// and the one its variational equations and MEGNO run with (Rein & Tamayo 2016): the Wisdom-Holman
// drift-kick-drift A(h/2) B(h) A(h/2) with the Kepler masses G M_i (SABA1 of Laskar & Robutel
// 2001), the closing drift merged with the next step's opening one. The same operators as saba4.
template <int N, class T>
struct Whfast : Saba4Jacobi<N, T, JacobiKeplerMass::kInteriorMass> {
  using Base = Saba4Jacobi<N, T, JacobiKeplerMass::kInteriorMass>;
  using Mask = MaskOf<T>;
  using Work = typename Base::Work;
  SWARMFIT_HD static Mask step(Bodies<N, T>& b, Work& w, T h, const StepParams& p, T& h_next, Mask& accepted) {
    const Mask ok = Base::M::kepler(b, w, w.pending + 0.5 * h);
    // The kick's velocity change, for half_kick_state() (dead, and dropped, where nobody reads it).
    T before[N][3];
    for (int i = 1; i < N; ++i)
      for (int d = 0; d < 3; ++d) before[i][d] = b.vel[i][d];
    Base::kick(b, p, h);
    for (int i = 1; i < N; ++i)
      for (int d = 0; d < 3; ++d) w.kick_acc[i][d] = b.vel[i][d] - before[i][d];
    w.pending = 0.5 * h;
    h_next = p.time_step;
    accepted = Mask(true);
    return ok;
  }
  // A synchronised state of the map without a Kepler drift, for observers that need one every
  // step (the chaos observer's MEGNO): the stored state (positions at t - pending, just kicked)
  // with the velocities at the kick's midpoint, v - dv / 2. It is the state of the kick-drift-kick
  // form of the same leapfrog, A(h/2) B(h) A(h/2) and B(h/2) A(h) B(h/2) being conjugate by a half
  // drift: the same orbit sampled half a step earlier, where safe_mode's synchronisation would
  // cost a second Kepler drift of every planet (and its tangent) per step. Inertial coordinates.
  static constexpr bool kHalfKickState = true;
  SWARMFIT_HD static void half_kick_state(const Bodies<N, T>& b, const Work& w, T (&x)[N][3], T (&v)[N][3]) {
    Bodies<N, T> mid = b;
    for (int i = 1; i < N; ++i)
      for (int d = 0; d < 3; ++d) mid.vel[i][d] = b.vel[i][d] - 0.5 * w.kick_acc[i][d];
    Base::M::jacobi_to_inertial(mid, x, v);
  }
  static constexpr IntegratorEntry kIntegrators[] = {
      {"whfast", false, 2, true, 1, false,
       "Rein & Tamayo 2015 (MNRAS 452, 376); Wisdom & Holman 1991 (AJ 102, 1528); Laskar & Robutel 2001 "
       "(Celest. Mech. Dyn. Astron. 80, 39)",
       "Wisdom-Holman drift-kick-drift in Jacobi coordinates with REBOUND's Kepler masses (REBOUND's WHFast, "
       "SABA1): the map REBOUND's MEGNO is computed with",
       "time_step"}};
};

}  // namespace swarmfit
