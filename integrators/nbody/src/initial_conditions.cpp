#include "swarmfit/nbody/initial_conditions.hpp"

#include <cmath>
#include <random>
#include <stdexcept>

namespace swarmfit::nbody {

namespace {

// Uniform in (0, 1) from the 53 high bits of a 64-bit Mersenne twister: mt19937_64 is fully
// specified by the standard, the distributions are not (the same seed, the same bodies anywhere).
class Uniform {
 public:
  explicit Uniform(std::uint64_t seed) : engine_(seed) {}
  double operator()() {
    double u;
    do u = static_cast<double>(engine_() >> 11) * 0x1p-53;
    while (u == 0.0);
    return u;
  }

 private:
  std::mt19937_64 engine_;
};

void isotropic(Uniform& u, double r, double out[3]) {
  const double z = (2.0 * u() - 1.0) * r;
  const double phi = 2.0 * M_PI * u();
  const double rho = std::sqrt(std::max(0.0, r * r - z * z));
  out[0] = rho * std::cos(phi);
  out[1] = rho * std::sin(phi);
  out[2] = z;
}

void start_at_rest(Bodies& b, long n) {
  b.resize(n);
  b.num_massive = n;
  for (long i = 0; i < n; ++i) {
    b.id[i] = i;
    b.time[i] = 0.0;
    b.step[i] = 0.0;
    BodyState& s = b.state[i];
    for (int d = 0; d < 3; ++d) s.x[d] = s.v[d] = s.a[d] = s.j[d] = s.s[d] = s.c[d] = 0.0;
  }
}

void to_centre_of_mass(Bodies& b) {
  double m = 0, x[3] = {0, 0, 0}, v[3] = {0, 0, 0};
  for (long i = 0; i < b.num_massive; ++i) {
    m += b.mass[i];
    for (int d = 0; d < 3; ++d) {
      x[d] += b.mass[i] * b.state[i].x[d];
      v[d] += b.mass[i] * b.state[i].v[d];
    }
  }
  for (long i = 0; i < b.size(); ++i)
    for (int d = 0; d < 3; ++d) {
      b.state[i].x[d] -= x[d] / m;
      b.state[i].v[d] -= v[d] / m;
    }
}

}  // namespace

Bodies plummer_sphere(long n, std::uint64_t seed, double max_radius) {
  if (n < 2) throw std::invalid_argument("a Plummer sphere needs at least 2 bodies");
  Bodies b;
  start_at_rest(b, n);
  Uniform u(seed);
  const double scale = 3.0 * M_PI / 16.0;  // Plummer radius in Henon units
  for (long i = 0; i < n; ++i) {
    b.mass[i] = 1.0 / n;
    double r;
    do r = 1.0 / std::sqrt(std::pow(u(), -2.0 / 3.0) - 1.0);  // M(r) = r^3 (1 + r^2)^(-3/2)
    while (max_radius > 0 && r * scale > max_radius);
    isotropic(u, r * scale, b.state[i].x);
    // Speed in units of the escape speed sqrt(2) (1 + r^2)^(-1/4): q from g(q) = q^2 (1 - q^2)^3.5,
    // whose maximum is below 0.1 (Aarseth, Henon & Wielen 1974).
    double q, g;
    do {
      q = u();
      g = 0.1 * u();
    } while (g > q * q * std::pow(1.0 - q * q, 3.5));
    const double speed = q * std::sqrt(2.0) * std::pow(1.0 + r * r, -0.25) / std::sqrt(scale);
    isotropic(u, speed, b.state[i].v);
  }
  to_centre_of_mass(b);
  return b;
}

Bodies cold_sphere(long n, std::uint64_t seed, double radius) {
  if (n < 2) throw std::invalid_argument("a cold sphere needs at least 2 bodies");
  Bodies b;
  start_at_rest(b, n);
  Uniform u(seed);
  for (long i = 0; i < n; ++i) {
    b.mass[i] = 1.0 / n;
    isotropic(u, radius * std::cbrt(u()), b.state[i].x);
  }
  to_centre_of_mass(b);
  return b;
}

Bodies figure_eight() {
  Bodies b;
  start_at_rest(b, 3);
  const double x1[3] = {0.97000436, -0.24308753, 0.0}, v3[3] = {-0.93240737, -0.86473146, 0.0};
  for (int d = 0; d < 3; ++d) {
    b.state[0].x[d] = x1[d];
    b.state[1].x[d] = -x1[d];
    b.state[2].x[d] = 0.0;
    b.state[0].v[d] = b.state[1].v[d] = -0.5 * v3[d];
    b.state[2].v[d] = v3[d];
  }
  for (int i = 0; i < 3; ++i) b.mass[i] = 1.0;
  return b;
}

Bodies kepler_pair(double e, double a, double mu) {
  Bodies b;
  start_at_rest(b, 2);
  b.mass[0] = 1.0 - mu;
  b.mass[1] = mu;
  const double rp = a * (1.0 - e), vp = std::sqrt((1.0 + e) / (a * (1.0 - e)));  // G M = 1
  b.state[0].x[0] = -mu * rp;
  b.state[1].x[0] = (1.0 - mu) * rp;
  b.state[0].v[1] = -mu * vp;
  b.state[1].v[1] = (1.0 - mu) * vp;
  return b;
}

void append_test_particles(Bodies& b, long count) {
  const long n = b.size();
  b.resize(n + count);
  for (long i = n; i < n + count; ++i) {
    b.mass[i] = 0.0;
    b.id[i] = i;
    b.time[i] = n > 0 ? b.time[0] : 0.0;
    b.step[i] = 0.0;
    BodyState& s = b.state[i];
    for (int d = 0; d < 3; ++d) s.x[d] = s.v[d] = s.a[d] = s.j[d] = s.s[d] = s.c[d] = 0.0;
  }
}

}  // namespace swarmfit::nbody
