// The chaos observer: chaos indicators and orbit excursions of every system, accumulated during its
// integration on the chip. Plugged into the engines as a variational observation policy
// (integrators/observation.hpp): the systems run on tangent lanes (integrators/dual.hpp), so each
// step carries one tangent vector delta = (dx, dv) of all bodies through the scheme's own tangent
// map, and after each step the observer takes
//  - MEGNO (Cincotta & Simo 2000, A&AS 147, 205, eq. 14-16), as REBOUND computes it (Rein & Tamayo
//    2016, MNRAS 459, 2275): at a synchronised inertial state of the map (whfast: the kick-drift-kick
//    form's, the stored state with the kick's mid velocities, half a step before the step's end, with
//    no extra Kepler drift; other schemes: their pending operator closed on a copy),
//      dY = 2 h (t - t0) (delta_dot . delta) / |delta|^2,  delta_dot = (dv, da),
//    da the tangent of the full Newtonian accelerations; Y = sum dY / (t - t0); <Y> = sum Y h / (t - t0).
//    <Y> -> 2 for quasi-periodic orbits and grows as lambda (t - t0) / 2 for chaotic ones;
//  - the least-squares slope of <Y> against t (REBOUND's sim.lyapunov(), the same running sums), an
//    estimate of lambda / 2; and the finite-time exponent ln(|delta(t)| / |delta(t0)|) / (t - t0);
//  - per planet, the largest eccentricity and |a - a0| / a0 of its star-relative osculating orbit;
//  - the closest approach of two planets in mutual Hill radii (as the close-encounter monitor
//    measures it: |x_i - x_j| / (((m_i + m_j) / 3 m0)^(1/3) rbar)).
// The tangent is rescaled by 1e-100 when |delta|^2 passes 1e100 (Benettin et al. 1980), which
// changes neither MEGNO (scale-free) nor the finite-time exponent (the rescalings are counted).
#pragma once

#include <type_traits>

#include "swarmfit/integrators/driver.hpp"
#include "swarmfit/integrators/dual.hpp"
#include "swarmfit/integrators/ensemble.hpp"
#include "swarmfit/integrators/gravity.hpp"
#include "swarmfit/integrators/parameters.hpp"

namespace swarmfit {

constexpr int kMaxChaosBodies = 10;  // star + 9 planets, as the likelihood

// The per-system fields of a chaos run, each a row of `stride` doubles (one per system slot).
enum ChaosField : int {
  kChaosYs = 0,  // sum of dY
  kChaosYss,     // sum of Y h
  kChaosCount,   // steps taken into the sums
  kChaosMeanT,   // running means, covariance and variance of (t - t0, <Y>) (REBOUND's)
  kChaosMeanY,
  kChaosCovYt,
  kChaosVarT,
  kChaosStartTime,  // t0
  kChaosRescales,   // how many times the tangent was multiplied by kChaosRescale
  kChaosElapsed,    // t - t0 at the last step in the sums
  kChaosHill6,      // the smallest (|x_i - x_j| / R_H)^6 over pairs and steps (1e300: none yet)
  kChaosPlanets,    // per planet i = 1..: a0, max e, max |a - a0| / a0 at kChaosPlanets + 3 (i - 1) + 0, 1, 2
  kChaosTangent = kChaosPlanets + 3 * (kMaxChaosBodies - 1),  // body i, component k (x y z vx vy vz): + 6 i + k
  kChaosFields = kChaosTangent + 6 * kMaxChaosBodies,
};
constexpr double kChaosRescaleAbove = 1e100;  // |delta|^2
constexpr double kChaosRescale = 1e-50;       // |delta| factor, so |delta|^2 drops by 1e-100

struct ChaosObservation {
  struct Params {
    double* fields = nullptr;  // kChaosFields rows of `stride` doubles
    long stride = 0;
  };
  static constexpr int kMaxBodies = kMaxChaosBodies;
  static constexpr bool kThreadPerBodyKernels = false;
  static constexpr bool kVariational = true;

  // The MEGNO sums, updated every step, live in registers; the excursions (per planet a0, max e,
  // max |da|/a0; closest Hill approach), the start time and the rescale count stay in memory, read
  // every step (L1 hits) and written only when they change: in registers beside a tangent state
  // they made the GPU kernel spill.
  template <int N, class T>
  struct Record {
    using L = LaneTraits<T>;
    static constexpr int kSums = kChaosStartTime;  // kChaosYs .. kChaosVarT
    double* base;
    long stride;
    T sums[kSums];
    T elapsed;
    SWARMFIT_HD Record(const Params& p, long first_system) : base(p.fields + first_system), stride(p.stride) {
      for (int f = 0; f < kSums; ++f) sums[f] = L::load(row(f));
      elapsed = L::load(row(kChaosElapsed));
    }
    SWARMFIT_HD double* row(int field) const { return base + field * stride; }
    SWARMFIT_HD T load(int field) const { return L::load(row(field)); }
    SWARMFIT_HD static int planet_field(int i, int k) { return kChaosPlanets + 3 * (i - 1) + k; }
    // Stores value() where `m` holds (on the GPU, one lane: only then), so that a rare update's
    // divisions are not paid every step.
    template <class F>
    SWARMFIT_HD void update(int field, MaskOf<T> m, F value) const {
      if constexpr (L::width > 1) {
        if (any(m)) L::store(row(field), select(m, value(), L::load(row(field))));
      } else {
        if (m) L::store(row(field), value());
      }
    }
    SWARMFIT_HD void seed(Bodies<N, Dual<T>>& b) const {
      for (int i = 0; i < N; ++i)
        for (int d = 0; d < 3; ++d) {
          b.pos[i][d].d = L::load(row(kChaosTangent + 6 * i + d));
          b.vel[i][d].d = L::load(row(kChaosTangent + 6 * i + 3 + d));
        }
    }
    SWARMFIT_HD void keep(const Bodies<N, Dual<T>>& b) const {
      for (int i = 0; i < N; ++i)
        for (int d = 0; d < 3; ++d) {
          L::store(row(kChaosTangent + 6 * i + d), b.pos[i][d].d);
          L::store(row(kChaosTangent + 6 * i + 3 + d), b.vel[i][d].d);
        }
    }
    SWARMFIT_HD void store() const {
      for (int f = 0; f < kSums; ++f) L::store(row(f), sums[f]);
      L::store(row(kChaosElapsed), elapsed);
    }
  };

  template <int N, class T>
  struct Observer {
    using D = Dual<T>;
    using Mask = MaskOf<T>;
    static constexpr bool kActive = true;
    Record<N, T>& r;
    SWARMFIT_HD explicit Observer(Record<N, T>& record) : r(record) {}

    // Planet i's star-relative osculating orbit without a division but 1/mu: alpha = 1/a =
    // 2/r - v^2/mu and mu e_vec = (v^2 - mu/r) x - (x . v) v, as |mu e_vec|^2 (the excursion tests
    // compare squares and products; the rare update divides).
    struct Orbit {
      T alpha, mu_e2, mu, inv_mu;
      SWARMFIT_HD T a() const { return 1.0 / alpha; }
      SWARMFIT_HD T e() const { return lane_sqrt(mu_e2) * inv_mu; }
    };
    SWARMFIT_HD static Orbit orbit(const D (&rp)[N][3], const D (&rv)[N][3], const Bodies<N, D>& b, int i, double G) {
      const T x = rp[i][0].v, y = rp[i][1].v, z = rp[i][2].v;
      const T vx = rv[i][0].v, vy = rv[i][1].v, vz = rv[i][2].v;
      Orbit o;
      const T mu = G * (b.mass[0].v + b.mass[i].v);
      o.mu = mu;
      o.inv_mu = 1.0 / mu;
      const T inv_r = lane_rsqrt(x * x + y * y + z * z);
      const T v2 = vx * vx + vy * vy + vz * vz;
      const T rdotv = x * vx + y * vy + z * vz;
      o.alpha = 2.0 * inv_r - v2 * o.inv_mu;
      const T c = v2 - mu * inv_r;
      const T ex = c * x - rdotv * vx, ey = c * y - rdotv * vy, ez = c * z - rdotv * vz;
      o.mu_e2 = ex * ex + ey * ey + ez * ez;
      return o;
    }

    template <template <int, class> class Scheme>
    SWARMFIT_HD void start(const Bodies<N, D>& b, const typename Scheme<N, D>::Work& w, const StepParams& p) {
      D rp[N][3], rv[N][3];
      Scheme<N, D>::star_relative(b, w, p, rp, rv);
      const Mask fresh = r.sums[kChaosCount] == 0.0;
      for (int i = 1; i < N; ++i) {
        const Orbit o = orbit(rp, rv, b, i, p.G);
        r.update(r.planet_field(i, 0), fresh, [&] { return o.a(); });
        r.update(r.planet_field(i, 1), fresh, [&] { return o.e(); });
      }
    }

    // A synchronised inertial state of the step: whfast's half-kick state (S::half_kick_state, half
    // a step back, no drift); the other schemes close their pending operator on a copy (S::end),
    // which doubles the live state (the GPU kernel spills) but leaves the trajectory bitwise that
    // of a plain run.
    template <class S, class = void>
    struct HasHalfKickState : std::false_type {};
    template <class S>
    struct HasHalfKickState<S, typename std::enable_if<S::kHalfKickState>::type> : std::true_type {};

    // Returns the time of the state, t - lag.
    template <class S, class Loop>
    SWARMFIT_HD static T synchronised_state(const Bodies<N, D>& b, const typename S::Work& w, const StepParams& p,
                                            D (&x)[N][3], D (&v)[N][3], const Loop& loop) {
      if constexpr (HasHalfKickState<S>::value) {
        (void)p;
        S::half_kick_state(b, w, x, v);
        return loop.clock.time.v - w.pending.v;
      } else {
        Bodies<N, D> s = b;
        typename S::Work ws = w;
        S::end(s, ws, p);
        for (int i = 0; i < N; ++i)
          for (int d = 0; d < 3; ++d) {
            x[i][d] = s.pos[i][d];
            v[i][d] = s.vel[i][d];
          }
      }
      return loop.clock.time.v;
    }

    template <template <int, class> class Scheme, class Loop>
    SWARMFIT_HD void after_step(Bodies<N, D>& b, typename Scheme<N, D>::Work& w, const StepParams& p, D h,
                                Mask advanced, const D (&rp)[N][3], const D (&rv)[N][3], Loop& loop) {
      using S = Scheme<N, D>;
      // The synchronised inertial state and its tangent, x and v.
      D x[N][3], v[N][3];
      const T state_time = synchronised_state<S>(b, w, p, x, v, loop);
      T deltad = 0.0, delta2 = 0.0;
      for (int i = 0; i < N; ++i)
        for (int d = 0; d < 3; ++d) {
          deltad = deltad + v[i][d].d * x[i][d].d;
          delta2 = delta2 + x[i][d].d * x[i][d].d + v[i][d].d * v[i][d].d;
        }
      // + sum_i dv_i . da_i, da_i the tangent of the Newtonian accelerations: pair by pair, it is
      // the jerk's formula (gravity.hpp, pair_jerk_terms) with the position tangents in place of
      // the velocities, G m_j |d|^-3 (u - 3 (d.u) d / |d|^2) on body i and the opposite with G m_i
      // on body j (no acceleration array: registers).
      for (int i = 0; i < N; ++i)
        for (int j = i + 1; j < N; ++j) {
          T d[3], u[3], jdir[3];
          for (int k = 0; k < 3; ++k) {
            d[k] = x[j][k].v - x[i][k].v;
            u[k] = x[j][k].d - x[i][k].d;
          }
          const T rinv3 = T(p.G) * pair_jerk_terms(d, u, jdir);
          T dot = 0.0;
          for (int k = 0; k < 3; ++k) dot = dot + (b.mass[j].v * v[i][k].d - b.mass[i].v * v[j][k].d) * jdir[k];
          deltad = deltad + rinv3 * dot;
        }
      // MEGNO and the running regression, REBOUND's reb_tools_megno_update step for step.
      T* m = r.sums;
      // (Reciprocals of t and n: three FP64 divisions a step instead of six.)
      const T t = state_time - r.load(kChaosStartTime);
      const T inv_t = 1.0 / t;
      const T dY = h.v * 2.0 * t * deltad / delta2;
      const T ys = m[kChaosYs] + dY;
      const T yss = m[kChaosYss] + ys * inv_t * h.v;
      const T n = m[kChaosCount] + 1.0;
      const T inv_n = 1.0 / n;
      const T mean_t = m[kChaosMeanT] + (t - m[kChaosMeanT]) * inv_n;
      const T megno = yss * inv_t;
      const T mean_y = m[kChaosMeanY] + (megno - m[kChaosMeanY]) * inv_n;
      const T weight = (n - 1.0) * inv_n;
      const T cov = m[kChaosCovYt] + weight * (t - mean_t) * (megno - mean_y);
      const T var = m[kChaosVarT] + weight * (t - mean_t) * (t - mean_t);
      m[kChaosYs] = select(advanced, ys, m[kChaosYs]);
      m[kChaosYss] = select(advanced, yss, m[kChaosYss]);
      m[kChaosCount] = select(advanced, n, m[kChaosCount]);
      m[kChaosMeanT] = select(advanced, mean_t, m[kChaosMeanT]);
      m[kChaosMeanY] = select(advanced, mean_y, m[kChaosMeanY]);
      m[kChaosCovYt] = select(advanced, cov, m[kChaosCovYt]);
      m[kChaosVarT] = select(advanced, var, m[kChaosVarT]);
      r.elapsed = select(advanced, t, r.elapsed);
      // Excursions of the orbits and of the pairs.
      const T m0 = b.mass[0].v;
      T r2[N];
      for (int i = 1; i < N; ++i) {
        const Orbit o = orbit(rp, rv, b, i, p.G);
        // e > max e as mu^2 e^2 > mu^2 max e^2; |a - a0| / |a0| > max as |1 - a0 alpha| > max |a0 alpha|.
        const T e_max = r.load(r.planet_field(i, 1));
        const T e_max_mu = e_max * o.mu;
        r.update(r.planet_field(i, 1), mask_and(advanced, o.mu_e2 > e_max_mu * e_max_mu), [&] { return o.e(); });
        const T a0_alpha = r.load(r.planet_field(i, 0)) * o.alpha;
        const T off = lane_abs(1.0 - a0_alpha);
        r.update(r.planet_field(i, 2), mask_and(advanced, off > r.load(r.planet_field(i, 2)) * lane_abs(a0_alpha)),
                 [&] { return off / lane_abs(a0_alpha); });
        r2[i] = rp[i][0].v * rp[i][0].v + rp[i][1].v * rp[i][1].v + rp[i][2].v * rp[i][2].v;
      }
      for (int i = 1; i < N; ++i)
        for (int j = i + 1; j < N; ++j) {
          T d2 = 0.0;
          for (int k = 0; k < 3; ++k) d2 = d2 + (rp[i][k].v - rp[j][k].v) * (rp[i][k].v - rp[j][k].v);
          const T pair = b.mass[i].v + b.mass[j].v;
          const T rbar2 = 0.5 * (r2[i] + r2[j]);
          // (|x_i - x_j| / R_H)^6 = 9 m0^2 d^6 / ((m_i + m_j)^2 rbar^6), compared as a product.
          const T num = 9.0 * m0 * m0 * d2 * d2 * d2, den = pair * pair * rbar2 * rbar2 * rbar2;
          r.update(kChaosHill6, mask_and(advanced, num < r.load(kChaosHill6) * den), [&] { return num / den; });
        }
      // Keep the tangent in range.
      const Mask big = mask_and(advanced, delta2 > kChaosRescaleAbove);
      if (any(big)) {
        const T factor = select(big, T(kChaosRescale), T(1.0));
        // Positions and velocities only: the masses carry no tangent, and if their (zero) tangents
        // were multiplied too the compiler could no longer drop their arithmetic from the step.
        for (int i = 0; i < N; ++i)
          for (int d = 0; d < 3; ++d) {
            b.pos[i][d].d = b.pos[i][d].d * factor;
            b.vel[i][d].d = b.vel[i][d].d * factor;
          }
        // A Work with state of its own (Hermite's forces) is rescaled with it; the Wisdom-Holman
        // family's (Kepler constants, pending drift) has no tangent, but for whfast's kick (read
        // within its own step, above).
        if constexpr (!HasHalfKickState<S>::value) w = scaled_tangent<typename S::Work, T>(w, factor);
        r.update(kChaosRescales, big, [&] { return r.load(kChaosRescales) + 1.0; });
      }
      (void)loop;
    }

    SWARMFIT_HD T finish(T status) {
      r.store();
      return status;
    }
  };
};

}  // namespace swarmfit
