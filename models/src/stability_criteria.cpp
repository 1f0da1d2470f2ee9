#include "swarmfit/models/stability_criteria.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace swarmfit {

namespace {

// Laskar & Petit (2017) eq. 35: F(e) = alpha e + gamma e / sqrt(alpha (1 - e^2) + gamma^2 e^2) - 1 + alpha,
// whose root in [0, min(1, 1/alpha - 1)] is the inner eccentricity of the critical (touching)
// configuration; F is increasing (eq. 36), so bisection is safe, Newton (eq. 36) fast.
double critical_eccentricity(double alpha, double gamma) {
  auto f = [&](double e) {
    return alpha * e + gamma * e / std::sqrt(alpha * (1 - e * e) + gamma * gamma * e * e) - 1 + alpha;
  };
  auto df = [&](double e) {
    const double q = alpha * (1 - e * e) + gamma * gamma * e * e;
    return alpha + gamma * alpha / (q * std::sqrt(q));
  };
  double lo = 0.0, hi = std::min(1.0, 1.0 / alpha - 1.0);
  if (f(hi) <= 0) return hi;
  double e = 0.5 * (lo + hi);
  for (int k = 0; k < 200; ++k) {
    const double fe = f(e);
    if (fe > 0)
      hi = e;
    else
      lo = e;
    double next = e - fe / df(e);
    if (!(next > lo && next < hi)) next = 0.5 * (lo + hi);
    if (std::fabs(next - e) < 1e-16) return next;
    e = next;
  }
  return e;
}

double deficit(double e) { return 1.0 - std::sqrt(std::max(0.0, 1.0 - e * e)); }

}  // namespace

double amd_critical_collision(double alpha, double gamma) {
  if (!(alpha > 0 && alpha <= 1)) throw std::invalid_argument("amd_critical_collision: alpha must be in (0, 1]");
  const double e = critical_eccentricity(alpha, gamma);
  const double e_outer = 1.0 - alpha * (1.0 + e);  // a (1 + e) = a' (1 - e')
  return gamma * std::sqrt(alpha) * deficit(e) + deficit(e_outer);
}

double amd_critical_mmr(double alpha, double gamma, double epsilon) {
  const double r = 0.80199;  // Petit, Laskar & Boue (2017) eq. 52 (their numerical constant)
  const double one = 1.0 - alpha;
  const double g = 81.0 * std::pow(one, 5) / (512.0 * r * epsilon) - 32.0 * r * epsilon / (9.0 * one * one);
  if (!(g > 0)) return 0.0;
  const double w = gamma * std::sqrt(alpha);
  return 0.5 * g * g * w / (1.0 + w);
}

double amd_critical_hill(double alpha, double gamma, double epsilon) {
  const double zeta = gamma / (1.0 + gamma);
  const double q = alpha * (1.0 + std::pow(3.0, 4.0 / 3.0) * std::pow(epsilon, 2.0 / 3.0) * zeta * (1.0 - zeta)) /
                   (zeta + (1.0 - zeta) * alpha);
  return gamma * std::sqrt(alpha) + 1.0 - (1.0 + gamma) * std::sqrt(q);
}

CriteriaResult stability_criteria(double star_mass, std::vector<PlanetOrbit> planets) {
  std::sort(planets.begin(), planets.end(), [](const PlanetOrbit& x, const PlanetOrbit& y) { return x.a < y.a; });
  for (const PlanetOrbit& p : planets)
    if (!(p.mass > 0 && p.a > 0 && p.e >= 0 && p.e < 1))
      throw std::invalid_argument("stability criteria: every planet needs mass > 0, a > 0, 0 <= e < 1");
  // Lambda_k / sqrt(G M_*): the common factor cancels in every ratio.
  auto lambda = [](const PlanetOrbit& p) { return p.mass * std::sqrt(p.a); };
  // C = sum Lambda_k - |sum L_k|, L_k = Lambda_k sqrt(1 - e_k^2) (sin i sin O, -sin i cos O, cos i).
  auto deficit_of = [&](std::size_t first, std::size_t last) {
    double sum = 0, l[3] = {0, 0, 0};
    for (std::size_t k = first; k < last; ++k) {
      const PlanetOrbit& p = planets[k];
      const double g = lambda(p) * std::sqrt(1.0 - p.e * p.e);
      sum += lambda(p);
      l[0] += g * std::sin(p.inc) * std::sin(p.node);
      l[1] -= g * std::sin(p.inc) * std::cos(p.node);
      l[2] += g * std::cos(p.inc);
    }
    return sum - std::sqrt(l[0] * l[0] + l[1] * l[1] + l[2] * l[2]);
  };
  const double total = deficit_of(0, planets.size());
  CriteriaResult r;
  for (std::size_t k = 0; k + 1 < planets.size(); ++k) {
    const PlanetOrbit& in = planets[k];
    const PlanetOrbit& out = planets[k + 1];
    PairStability s;
    const double alpha = in.a / out.a, gamma = in.mass / out.mass, epsilon = (in.mass + out.mass) / star_mass;
    s.beta = total / lambda(out);
    s.beta_c = std::min(amd_critical_collision(alpha, gamma), amd_critical_mmr(alpha, gamma, epsilon));
    s.amd_stable = s.beta < s.beta_c;
    s.beta_hill = amd_critical_hill(alpha, gamma, epsilon);
    s.hill_stable = deficit_of(k, k + 2) / lambda(out) < s.beta_hill;
    s.crossing = in.a * (1 + in.e) >= out.a * (1 - out.e);
    r.amd_stable = r.amd_stable && s.amd_stable;
    r.hill_stable = r.hill_stable && s.hill_stable;
    r.crossing = r.crossing || s.crossing;
    r.pairs.push_back(s);
  }
  return r;
}

}  // namespace swarmfit
