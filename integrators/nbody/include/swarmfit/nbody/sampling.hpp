// Random draws shared by the initial conditions of the large-N and particle-mesh engines.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>

namespace swarmfit::nbody {

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

// A vector of length r in a uniformly random direction.
inline void isotropic(Uniform& u, double r, double out[3]) {
  const double z = (2.0 * u() - 1.0) * r;
  const double phi = 2.0 * M_PI * u();
  const double rho = std::sqrt(std::max(0.0, r * r - z * z));
  out[0] = rho * std::cos(phi);
  out[1] = rho * std::sin(phi);
  out[2] = z;
}

// One body of a Plummer sphere of unit mass in Henon units (Aarseth, Henon & Wielen 1974, A&A 37,
// 183): the radius from the inverted cumulative mass, the speed by von Neumann rejection from
// q^2 (1 - q^2)^(7/2), isotropic directions; scale radius 3 pi / 16. Radii beyond `max_radius`
// (Henon units; 0: none) are drawn again.
inline void plummer_body(Uniform& u, double max_radius, double x[3], double v[3]) {
  const double scale = 3.0 * M_PI / 16.0;  // Plummer radius in Henon units
  double r;
  do r = 1.0 / std::sqrt(std::pow(u(), -2.0 / 3.0) - 1.0);  // M(r) = r^3 (1 + r^2)^(-3/2)
  while (max_radius > 0 && r * scale > max_radius);
  isotropic(u, r * scale, x);
  // Speed in units of the escape speed sqrt(2) (1 + r^2)^(-1/4): q from g(q) = q^2 (1 - q^2)^3.5,
  // whose maximum is below 0.1 (Aarseth, Henon & Wielen 1974).
  double q, g;
  do {
    q = u();
    g = 0.1 * u();
  } while (g > q * q * std::pow(1.0 - q * q, 3.5));
  const double speed = q * std::sqrt(2.0) * std::pow(1.0 + r * r, -0.25) / std::sqrt(scale);
  isotropic(u, speed, v);
}

}  // namespace swarmfit::nbody
