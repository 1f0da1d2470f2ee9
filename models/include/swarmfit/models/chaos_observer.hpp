// The chaos observer: chaos indicators and orbit excursions of every system, accumulated during its
// integration on the chip. Plugged into the engines as a variational observation policy
// (integrators/observation.hpp): the systems run on tangent lanes (integrators/dual.hpp), so each
// step carries one tangent vector delta = (dx, dv) of all bodies through the scheme's own tangent
// map, and after each step the observer takes
//  - MEGNO (Cincotta & Simo 2000, A&AS 147, 205, eq. 14-16), as REBOUND computes it (Rein & Tamayo
//    2016, MNRAS 459, 2275): at the synchronised inertial state,
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

  template <int N, class T>
  struct Record {
    using L = LaneTraits<T>;
    double* base;
    long stride;
    T sums[kChaosPlanets];
    T planet[N][3];
    SWARMFIT_HD Record(const Params& p, long first_system) : base(p.fields + first_system), stride(p.stride) {
      for (int f = 0; f < kChaosPlanets; ++f) sums[f] = L::load(row(f));
      for (int i = 1; i < N; ++i)
        for (int k = 0; k < 3; ++k) planet[i][k] = L::load(row(kChaosPlanets + 3 * (i - 1) + k));
    }
    SWARMFIT_HD double* row(int field) const { return base + field * stride; }
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
      for (int f = 0; f < kChaosPlanets; ++f) L::store(row(f), sums[f]);
      for (int i = 1; i < N; ++i)
        for (int k = 0; k < 3; ++k) L::store(row(kChaosPlanets + 3 * (i - 1) + k), planet[i][k]);
    }
  };

  template <int N, class T>
  struct Observer {
    using D = Dual<T>;
    using Mask = MaskOf<T>;
    static constexpr bool kActive = true;
    Record<N, T>& r;
    SWARMFIT_HD explicit Observer(Record<N, T>& record) : r(record) {}

    // Star-relative osculating semi-major axis and eccentricity of planet i.
    SWARMFIT_HD static void orbit(const D (&rp)[N][3], const D (&rv)[N][3], const Bodies<N, D>& b, int i, double G,
                                  T& a, T& e) {
      const T x = rp[i][0].v, y = rp[i][1].v, z = rp[i][2].v;
      const T vx = rv[i][0].v, vy = rv[i][1].v, vz = rv[i][2].v;
      const T mu = G * (b.mass[0].v + b.mass[i].v);
      const T r = lane_sqrt(x * x + y * y + z * z);
      const T v2 = vx * vx + vy * vy + vz * vz;
      const T rdotv = x * vx + y * vy + z * vz;
      a = 1.0 / (2.0 / r - v2 / mu);
      // e_vec = ((v^2 - mu / r) x - (x . v) v) / mu
      const T c = v2 - mu / r;
      const T ex = (c * x - rdotv * vx) / mu, ey = (c * y - rdotv * vy) / mu, ez = (c * z - rdotv * vz) / mu;
      e = lane_sqrt(ex * ex + ey * ey + ez * ez);
    }

    template <template <int, class> class Scheme>
    SWARMFIT_HD void start(const Bodies<N, D>& b, const typename Scheme<N, D>::Work& w, const StepParams& p) {
      D rp[N][3], rv[N][3];
      Scheme<N, D>::star_relative(b, w, p, rp, rv);
      const Mask fresh = r.sums[kChaosCount] == 0.0;
      for (int i = 1; i < N; ++i) {
        T a, e;
        orbit(rp, rv, b, i, p.G, a, e);
        r.planet[i][0] = select(fresh, a, r.planet[i][0]);
        r.planet[i][1] = select(fresh, e, r.planet[i][1]);
      }
    }

    template <template <int, class> class Scheme, class Loop>
    SWARMFIT_HD void after_step(Bodies<N, D>& b, typename Scheme<N, D>::Work& w, const StepParams& p, D h,
                                Mask advanced, const D (&rp)[N][3], const D (&rv)[N][3], Loop& loop) {
      using S = Scheme<N, D>;
      // The synchronised inertial state and its tangent (a copy: the integration goes on from b, w).
      Bodies<N, D> s = b;
      typename S::Work ws = w;
      S::end(s, ws, p);
      T deltad = 0.0, delta2 = 0.0;
      for (int i = 0; i < N; ++i)
        for (int d = 0; d < 3; ++d) {
          deltad = deltad + s.vel[i][d].d * s.pos[i][d].d;
          delta2 = delta2 + s.pos[i][d].d * s.pos[i][d].d + s.vel[i][d].d * s.vel[i][d].d;
        }
      // + sum_i dv_i . da_i, da_i the tangent of the Newtonian accelerations: pair by pair, it is
      // the jerk's formula (gravity.hpp, pair_jerk_terms) with the position tangents in place of
      // the velocities, G m_j |d|^-3 (u - 3 (d.u) d / |d|^2) on body i and the opposite with G m_i
      // on body j (no acceleration array: registers).
      for (int i = 0; i < N; ++i)
        for (int j = i + 1; j < N; ++j) {
          T d[3], u[3], jdir[3];
          for (int k = 0; k < 3; ++k) {
            d[k] = s.pos[j][k].v - s.pos[i][k].v;
            u[k] = s.pos[j][k].d - s.pos[i][k].d;
          }
          const T rinv3 = T(p.G) * pair_jerk_terms(d, u, jdir);
          T dot = 0.0;
          for (int k = 0; k < 3; ++k) dot = dot + (s.mass[j].v * s.vel[i][k].d - s.mass[i].v * s.vel[j][k].d) * jdir[k];
          deltad = deltad + rinv3 * dot;
        }
      // MEGNO and the running regression, REBOUND's reb_tools_megno_update step for step.
      T* m = r.sums;
      const T t = loop.clock.time.v - m[kChaosStartTime];
      const T dY = h.v * 2.0 * t * deltad / delta2;
      const T ys = m[kChaosYs] + dY;
      const T yss = m[kChaosYss] + ys / t * h.v;
      const T n = m[kChaosCount] + 1.0;
      const T mean_t = m[kChaosMeanT] + (t - m[kChaosMeanT]) / n;
      const T megno = yss / t;
      const T mean_y = m[kChaosMeanY] + (megno - m[kChaosMeanY]) / n;
      const T weight = (n - 1.0) / n;
      const T cov = m[kChaosCovYt] + weight * (t - mean_t) * (megno - mean_y);
      const T var = m[kChaosVarT] + weight * (t - mean_t) * (t - mean_t);
      m[kChaosYs] = select(advanced, ys, m[kChaosYs]);
      m[kChaosYss] = select(advanced, yss, m[kChaosYss]);
      m[kChaosCount] = select(advanced, n, m[kChaosCount]);
      m[kChaosMeanT] = select(advanced, mean_t, m[kChaosMeanT]);
      m[kChaosMeanY] = select(advanced, mean_y, m[kChaosMeanY]);
      m[kChaosCovYt] = select(advanced, cov, m[kChaosCovYt]);
      m[kChaosVarT] = select(advanced, var, m[kChaosVarT]);
      m[kChaosElapsed] = select(advanced, t, m[kChaosElapsed]);
      // Excursions of the orbits and of the pairs.
      const T m0 = b.mass[0].v;
      T r2[N];
      for (int i = 1; i < N; ++i) {
        T a, e;
        orbit(rp, rv, b, i, p.G, a, e);
        const T a0 = r.planet[i][0];
        r.planet[i][1] = select(mask_and(advanced, e > r.planet[i][1]), e, r.planet[i][1]);
        const T da = lane_abs(a - a0) / a0;
        r.planet[i][2] = select(mask_and(advanced, da > r.planet[i][2]), da, r.planet[i][2]);
        r2[i] = rp[i][0].v * rp[i][0].v + rp[i][1].v * rp[i][1].v + rp[i][2].v * rp[i][2].v;
      }
      for (int i = 1; i < N; ++i)
        for (int j = i + 1; j < N; ++j) {
          T d2 = 0.0;
          for (int k = 0; k < 3; ++k) d2 = d2 + (rp[i][k].v - rp[j][k].v) * (rp[i][k].v - rp[j][k].v);
          const T pair = b.mass[i].v + b.mass[j].v;
          const T rbar2 = 0.5 * (r2[i] + r2[j]);
          // (|x_i - x_j| / R_H)^6 = 9 m0^2 d^6 / ((m_i + m_j)^2 rbar^6)
          const T q = 9.0 * m0 * m0 * d2 * d2 * d2 / (pair * pair * rbar2 * rbar2 * rbar2);
          m[kChaosHill6] = select(mask_and(advanced, q < m[kChaosHill6]), q, m[kChaosHill6]);
        }
      // Keep the tangent in range.
      const Mask big = mask_and(advanced, delta2 > kChaosRescaleAbove);
      if (any(big)) {
        const T factor = select(big, T(kChaosRescale), T(1.0));
        b = scaled_tangent<Bodies<N, D>, T>(b, factor);
        w = scaled_tangent<typename S::Work, T>(w, factor);
        m[kChaosRescales] = select(big, m[kChaosRescales] + 1.0, m[kChaosRescales]);
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
