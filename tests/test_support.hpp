// Shared helpers for the tests: building ensembles and an independent analytic two-body orbit
// (classical Kepler equation in long double, not the universal-variable solver under test).
#pragma once

#include <cmath>
#include <fstream>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "swarmfit/integrators/backend.hpp"
#include "swarmfit/integrators/ensemble.hpp"
#include "swarmfit/integrators/registry.hpp"

namespace swarmfit::testing {

struct State6 {
  double x[3];
  double v[3];
};

// Relative orbit in the x-y plane starting at pericentre (t = 0), pericentre distance q,
// eccentricity e (e < 1 elliptic, e > 1 hyperbolic), gravitational parameter mu.
inline State6 analytic_two_body(double q, double e, double mu, double t) {
  using LD = long double;
  const LD a = static_cast<LD>(q) / (1.0L - e);  // negative for hyperbolic orbits
  State6 s{};
  if (e < 1.0) {
    const LD n = std::sqrt(static_cast<LD>(mu) / (a * a * a));
    const LD m = n * t;
    LD E = m;
    for (int k = 0; k < 100; ++k) E -= (E - e * std::sin(E) - m) / (1.0L - e * std::cos(E));
    const LD denom = 1.0L - e * std::cos(E);
    const LD root = std::sqrt(1.0L - static_cast<LD>(e) * e);
    s.x[0] = static_cast<double>(a * (std::cos(E) - e));
    s.x[1] = static_cast<double>(a * root * std::sin(E));
    s.v[0] = static_cast<double>(-a * n * std::sin(E) / denom);
    s.v[1] = static_cast<double>(a * n * root * std::cos(E) / denom);
  } else {
    const LD n = std::sqrt(static_cast<LD>(mu) / (-a * a * a));
    const LD m = n * t;
    LD H = std::asinh(m / e);
    for (int k = 0; k < 200; ++k) H -= (e * std::sinh(H) - H - m) / (e * std::cosh(H) - 1.0L);
    const LD denom = e * std::cosh(H) - 1.0L;
    const LD root = std::sqrt(static_cast<LD>(e) * e - 1.0L);
    s.x[0] = static_cast<double>(a * (std::cosh(H) - e));
    s.x[1] = static_cast<double>(-a * root * std::sinh(H));
    s.v[0] = static_cast<double>(a * n * std::sinh(H) / denom);
    s.v[1] = static_cast<double>(-a * n * root * std::cosh(H) / denom);
  }
  s.x[2] = 0.0;
  s.v[2] = 0.0;
  return s;
}

// Puts a relative two-body state into system `sys` in the barycentric frame.
inline void set_two_body(Ensemble& e, long sys, double m0, double m1, const State6& rel) {
  const double mtot = m0 + m1;
  e.mass(sys, 0) = m0;
  e.mass(sys, 1) = m1;
  for (int d = 0; d < 3; ++d) {
    e.position(sys, 0, d) = -m1 / mtot * rel.x[d];
    e.velocity(sys, 0, d) = -m1 / mtot * rel.v[d];
    e.position(sys, 1, d) = m0 / mtot * rel.x[d];
    e.velocity(sys, 1, d) = m0 / mtot * rel.v[d];
  }
}

inline State6 relative_state(const Ensemble& e, long sys) {
  State6 s{};
  for (int d = 0; d < 3; ++d) {
    s.x[d] = e.position(sys, 1, d) - e.position(sys, 0, d);
    s.v[d] = e.velocity(sys, 1, d) - e.velocity(sys, 0, d);
  }
  return s;
}

inline double norm3(const double (&a)[3]) { return std::sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2]); }
inline double distance3(const double (&a)[3], const double (&b)[3]) {
  return std::sqrt((a[0] - b[0]) * (a[0] - b[0]) + (a[1] - b[1]) * (a[1] - b[1]) + (a[2] - b[2]) * (a[2] - b[2]));
}

// Swarm-NG section 5.1 initial conditions: star m0 = 1 at rest at the origin, planets of mass
// planet_mass on circular coplanar orbits at a_i = (1 + spacing)^(i-1), phases from `phases`.
inline void set_swarm_system(Ensemble& e, long sys, const std::vector<double>& phases, double planet_mass = 1e-3,
                             double spacing = 0.4, double G = 1.0) {
  const int n = e.num_bodies();
  e.mass(sys, 0) = 1.0;
  for (int d = 0; d < 3; ++d) {
    e.position(sys, 0, d) = 0.0;
    e.velocity(sys, 0, d) = 0.0;
  }
  for (int i = 1; i < n; ++i) {
    const double a = std::pow(1.0 + spacing, i - 1);
    const double v = std::sqrt(G * (1.0 + planet_mass) / a);
    const double phi = phases[(i - 1) % phases.size()];
    e.mass(sys, i) = planet_mass;
    e.position(sys, i, 0) = a * std::cos(phi);
    e.position(sys, i, 1) = a * std::sin(phi);
    e.position(sys, i, 2) = 0.0;
    e.velocity(sys, i, 0) = -v * std::sin(phi);
    e.velocity(sys, i, 1) = v * std::cos(phi);
    e.velocity(sys, i, 2) = 0.0;
  }
}

// A one-system ensemble from a fixture CSV (header system,body,mass,x,y,z,vx,vy,vz; system 0
// only), as the committed fixture scripts write them.
inline std::unique_ptr<Ensemble> read_fixture_system(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::string line;
  std::getline(in, line);
  if (line.rfind("system,body,mass,x,y,z,vx,vy,vz", 0) != 0) throw std::runtime_error(path + ": unexpected header");
  std::vector<std::vector<double>> rows;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    std::istringstream fields(line);
    std::vector<double> row;
    for (std::string f; std::getline(fields, f, ',');) row.push_back(std::stod(f));
    if (row.size() < 9 || row[0] != 0) throw std::runtime_error(path + ": expected one system of 9 columns");
    rows.push_back(row);
  }
  auto e = std::make_unique<Ensemble>(1, static_cast<int>(rows.size()));
  for (const auto& row : rows) {
    const int i = static_cast<int>(row[1]);
    e->mass(0, i) = row[2];
    for (int d = 0; d < 3; ++d) {
      e->position(0, i, d) = row[3 + d];
      e->velocity(0, i, d) = row[6 + d];
    }
  }
  return e;
}

inline RunRequest request_for(const std::string& integrator, double time_step, double t_end, double G = 1.0) {
  RunRequest r;
  r.integrator = find_integrator(integrator);
  r.step.G = G;
  r.step.time_step = time_step;
  r.destination_time = t_end;
  r.threads = 1;
  return r;
}

}  // namespace swarmfit::testing
