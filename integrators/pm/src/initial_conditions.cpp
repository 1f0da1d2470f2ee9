#include "swarmfit/pm/initial_conditions.hpp"

#include <cmath>
#include <stdexcept>
#include <vector>

#include "swarmfit/nbody/sampling.hpp"

namespace swarmfit::pm {

using nbody::Uniform;

namespace {

template <class Real>
ParticleSet<Real> empty(long n) {
  if (n < 2) throw std::invalid_argument("initial conditions need at least 2 particles");
  ParticleSet<Real> p;
  p.resize(n);
  for (long i = 0; i < n; ++i) {
    p.id[i] = i;
    p.status[i] = 0;
  }
  return p;
}

// Positions and velocities drawn in double precision, moved to the centre-of-mass frame, then
// stored in Real.
template <class Real>
void store(ParticleSet<Real>& p, std::vector<double> (&x)[3], std::vector<double> (&v)[3], double mass) {
  const long n = p.size();
  for (int d = 0; d < 3; ++d) {
    double mx = 0, mv = 0;
    for (long i = 0; i < n; ++i) {
      mx += x[d][i];
      mv += v[d][i];
    }
    for (long i = 0; i < n; ++i) {
      p.x[d][i] = static_cast<Real>(x[d][i] - mx / n);
      p.v[d][i] = static_cast<Real>(v[d][i] - mv / n);
    }
  }
  for (long i = 0; i < n; ++i) p.mass[i] = static_cast<Real>(mass / n);
}

// Hernquist's isotropic distribution function in units G = M = a = 1, of the binding energy
// eps = -E in (0, 1) (Hernquist 1990 eq. 17, without its constant factor).
double hernquist_df(double eps) {
  const double q = std::sqrt(eps), q2 = eps;
  return (3.0 * std::asin(q) + q * std::sqrt(1.0 - q2) * (1.0 - 2.0 * q2) * (8.0 * q2 * q2 - 8.0 * q2 - 3.0)) /
         std::pow(1.0 - q2, 2.5);
}

}  // namespace

template <class Real>
ParticleSet<Real> plummer(long n, std::uint64_t seed, double mass, double length, double max_radius) {
  ParticleSet<Real> p = empty<Real>(n);
  Uniform u(seed);
  std::vector<double> x[3], v[3];
  for (int d = 0; d < 3; ++d) x[d].resize(n), v[d].resize(n);
  const double speed_scale = std::sqrt(mass / length);  // G = 1: v ~ sqrt(G M / L)
  for (long i = 0; i < n; ++i) {
    double xi[3], vi[3];
    nbody::plummer_body(u, max_radius, xi, vi);
    for (int d = 0; d < 3; ++d) {
      x[d][i] = xi[d] * length;
      v[d][i] = vi[d] * speed_scale;
    }
  }
  store(p, x, v, mass);
  return p;
}

template <class Real>
ParticleSet<Real> hernquist(long n, std::uint64_t seed, double mass, double a, double max_radius) {
  ParticleSet<Real> p = empty<Real>(n);
  Uniform u(seed);
  std::vector<double> x[3], v[3];
  for (int d = 0; d < 3; ++d) x[d].resize(n), v[d].resize(n);
  const double speed_scale = std::sqrt(mass / a);
  for (long i = 0; i < n; ++i) {
    double r;
    do {
      const double s = std::sqrt(u());
      r = s / (1.0 - s);
    } while (max_radius > 0 && r > max_radius);
    double xi[3];
    nbody::isotropic(u, r, xi);
    // Speed: density v^2 f(psi - v^2 / 2) on [0, sqrt(2 psi)), psi = 1 / (1 + r); rejection under
    // the maximum found on a grid (times a margin: the density is smooth there).
    const double psi = 1.0 / (1.0 + r), v_escape = std::sqrt(2.0 * psi);
    double top = 0;
    for (int k = 1; k < 64; ++k) {
      const double w = v_escape * k / 64.0;
      top = std::max(top, w * w * hernquist_df(psi - 0.5 * w * w));
    }
    top *= 1.1;
    double w;
    do w = v_escape * u();
    while (top * u() > w * w * hernquist_df(psi - 0.5 * w * w));
    double vi[3];
    nbody::isotropic(u, w, vi);
    for (int d = 0; d < 3; ++d) {
      x[d][i] = xi[d] * a;
      v[d][i] = vi[d] * speed_scale;
    }
  }
  store(p, x, v, mass);
  return p;
}

template <class Real>
ParticleSet<Real> cold_sphere(long n, std::uint64_t seed, double mass, double radius) {
  ParticleSet<Real> p = empty<Real>(n);
  Uniform u(seed);
  std::vector<double> x[3], v[3];
  for (int d = 0; d < 3; ++d) x[d].resize(n), v[d].assign(n, 0.0);
  for (long i = 0; i < n; ++i) {
    double xi[3];
    nbody::isotropic(u, radius * std::cbrt(u()), xi);
    for (int d = 0; d < 3; ++d) x[d][i] = xi[d];
  }
  store(p, x, v, mass);
  return p;
}

template <class Real>
ParticleSet<Real> collision(long n, std::uint64_t seed, double mass, double length, double separation, double impact) {
  const long half = n / 2;
  ParticleSet<Real> a = plummer<Real>(half, seed, mass / 2, length),
                    b = plummer<Real>(n - half, seed + 1, mass / 2, length);
  const double d = std::sqrt(separation * separation + impact * impact);
  const double speed = std::sqrt(2.0 * mass / d);  // parabolic: the relative speed at distance d
  ParticleSet<Real> p = empty<Real>(n);
  for (long i = 0; i < n; ++i) {
    const bool first = i < half;
    const ParticleSet<Real>& g = first ? a : b;
    const long k = first ? i : i - half;
    const double sign = first ? -1.0 : 1.0;
    const double offset[3] = {sign * separation / 2, sign * impact / 2, 0.0};
    const double drift[3] = {-sign * speed / 2, 0.0, 0.0};
    for (int c = 0; c < 3; ++c) {
      p.x[c][i] = static_cast<Real>(g.x[c][k] + offset[c]);
      p.v[c][i] = static_cast<Real>(g.v[c][k] + drift[c]);
    }
    p.mass[i] = g.mass[k];
  }
  return p;
}

template <class Real>
void shift(ParticleSet<Real>& p, const double centre[3]) {
  for (int d = 0; d < 3; ++d)
    for (auto& x : p.x[d]) x = static_cast<Real>(x + centre[d]);
}

#define SWARMFIT_PM_IC(Real)                                                                 \
  template ParticleSet<Real> plummer(long, std::uint64_t, double, double, double);           \
  template ParticleSet<Real> hernquist(long, std::uint64_t, double, double, double);         \
  template ParticleSet<Real> cold_sphere(long, std::uint64_t, double, double);               \
  template ParticleSet<Real> collision(long, std::uint64_t, double, double, double, double); \
  template void shift(ParticleSet<Real>&, const double[3]);
SWARMFIT_PM_IC(float)
SWARMFIT_PM_IC(double)
#undef SWARMFIT_PM_IC

}  // namespace swarmfit::pm
