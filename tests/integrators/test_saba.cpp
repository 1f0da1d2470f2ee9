// SABA4 (integrators/include/swarmfit/integrators/saba.hpp): step for step against REBOUND's SABA4
// (fixtures written by tests/fixtures/make_rebound_fixtures.py with REBOUND 5.2.2), the order of its
// energy error where each of its two terms, eps h^8 and eps^2 h^2, dominates, and its energy error
// against MVS's at the same step. The scheme runs through integrate_lanes with T = double; the
// registry-wide tests run it in SIMD lanes and on the backends.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <random>
#include <sstream>
#include <vector>

#include "swarmfit/integrators/driver.hpp"
#include "swarmfit/integrators/saba.hpp"
#include "test_support.hpp"

namespace swarmfit::testing {
namespace {

constexpr double kTwoPi = 6.283185307179586;

// Our operators with Mvs's (Wisdom & Holman's) Jacobi Kepler mass instead of REBOUND's.
template <int N, class T>
struct Saba4WisdomHolman : Saba4Jacobi<N, T, JacobiKeplerMass::kWisdomHolman> {};

// Fixed steps h of Scheme from t_start to t_end (the last step lands on t_end). MVS runs in Jacobi
// coordinates with the Kepler drift outermost, WHFast's drift-kick-drift.
template <template <int, class> class Scheme, int N>
void integrate(Bodies<N, double>& b, double h, double t_start, double t_end) {
  double radius[N] = {};
  Clock<double> clock{t_start, 0.0, 0.0, 0.0};
  StepParams p;
  p.time_step = h;
  p.mvs_coordinates = MvsCoordinates::kJacobi;
  p.mvs_splitting = MvsSplitting::kKeplerJumpKick;
  integrate_lanes<Scheme, N, double>(b, radius, clock, t_end, p, MonitorParams{});
  ASSERT_EQ(clock.status, kStatusOk);
  ASSERT_EQ(clock.time, t_end);
}

template <int N>
Bodies<N, double> read_bodies(const std::string& path) {
  const auto e = read_fixture_system(path);
  EXPECT_EQ(e->num_bodies(), N);
  Bodies<N, double> b;
  for (int i = 0; i < N; ++i) {
    b.mass[i] = e->mass(0, i);
    for (int d = 0; d < 3; ++d) {
      b.pos[i][d] = e->position(0, i, d);
      b.vel[i][d] = e->velocity(0, i, d);
    }
  }
  return b;
}

// Largest difference of a body's position (velocity) over the bodies, relative to the largest.
template <int N>
double relative_difference(const double (&a)[N][3], const double (&b)[N][3]) {
  double diff = 0, scale = 0;
  for (int i = 0; i < N; ++i) {
    diff = std::max(diff, distance3(a[i], b[i]));
    scale = std::max(scale, norm3(b[i]));
  }
  return diff / scale;
}

template <int N>
double relative_energy_error(const Bodies<N, double>& b, const Bodies<N, double>& start) {
  const double e0 = total_energy<N>(start, 1.0);
  return (total_energy<N>(b, 1.0) - e0) / e0;
}

// Step and end time of a REBOUND case (tests/fixtures/rebound/cases.csv).
void rebound_step(const std::string& name, double& dt, double& t_end) {
  std::ifstream in(std::string(SWARMFIT_SOURCE_DIR) + "/tests/fixtures/rebound/cases.csv");
  std::string line;
  while (std::getline(in, line)) {
    std::stringstream ss(line);
    std::string field[5];
    for (auto& f : field) std::getline(ss, f, ',');
    if (field[0] != name) continue;
    dt = std::stod(field[3]);
    t_end = std::stod(field[4]);
    return;
  }
  FAIL() << name << " not in cases.csv";
}

// Agreement with REBOUND's SABA4 (Jacobi, safe_mode = 0, 1000 steps of 2 pi / 100), measured on
// this CPU build: positions 1.2e-12 (n = 3) and 4.4e-13 (n = 5), velocities 2.1e-12 and 1.4e-12.
// Round-off: the two codes solve Kepler's equation differently, and REBOUND's own safe_mode = 1
// run (back to inertial coordinates after every step) differs from the fixture by 1.8e-13 and
// 3.7e-13. With c1 off by 1e-6 the positions were 4.0e-5..7.8e-5 away, with d1 off by 1e-6
// 4.0e-8..1.1e-7.
constexpr double kReboundStateTolerance = 5e-12;
// Relative energy errors: n = 5, 2.1647e-12 against REBOUND's 2.1547e-12 (0.46%).
constexpr double kReboundEnergyRelativeTolerance = 0.02;
// n = 3: 6.1e-14 against 7.6e-14, at the round-off of 1000 steps (REBOUND's safe_mode = 1: 7.1e-14).
constexpr double kReboundEnergyRoundOff = 4e-14;

template <int N>
void expect_matches_rebound(const std::string& name) {
  const std::string fixtures = std::string(SWARMFIT_SOURCE_DIR) + "/tests/fixtures/rebound/";
  const Bodies<N, double> start = read_bodies<N>(fixtures + name + "_initial.csv");
  const Bodies<N, double> expected = read_bodies<N>(fixtures + name + "_final.csv");
  double dt = 0, t_end = 0;
  rebound_step(name, dt, t_end);
  Bodies<N, double> ours = start;
  integrate<Saba4, N>(ours, dt, 0.0, t_end);
  EXPECT_LT(relative_difference<N>(ours.pos, expected.pos), kReboundStateTolerance) << name;
  EXPECT_LT(relative_difference<N>(ours.vel, expected.vel), kReboundStateTolerance) << name;
  const double energy = relative_energy_error<N>(ours, start), rebound = relative_energy_error<N>(expected, start);
  if (std::fabs(rebound) > 1e-12) {
    EXPECT_NEAR(energy / rebound, 1.0, kReboundEnergyRelativeTolerance) << name << " " << energy << " " << rebound;
  } else {
    EXPECT_NEAR(energy, rebound, kReboundEnergyRoundOff) << name;
  }
  // Wisdom & Holman's Kepler mass is another split of the same H: 1.8e-9 (n = 3) and 1.7e-9 (n = 5)
  // away, so the tolerance above tells the two apart.
  Bodies<N, double> other = start;
  integrate<Saba4WisdomHolman, N>(other, dt, 0.0, t_end);
  EXPECT_GT(relative_difference<N>(other.pos, expected.pos), 100 * kReboundStateTolerance) << name;
}

TEST(Saba4, MatchesReboundSaba4StepForStep) {
  expect_matches_rebound<3>("saba4_n3");
  expect_matches_rebound<5>("saba4_n5");
}

TEST(Saba4, CoefficientsAreGaussLegendreNodesAndWeights) {
  // Laskar & Robutel's SABA4: the drifts end at the Gauss-Legendre nodes of [0, 1], the kicks
  // carry their weights.
  using S = Saba4<3, double>;
  const double s30 = std::sqrt(30.0), outer = std::sqrt(525.0 + 70.0 * s30), inner = std::sqrt(525.0 - 70.0 * s30);
  EXPECT_NEAR(S::kC1, 0.5 - outer / 70.0, 1e-16);
  EXPECT_NEAR(S::kC2, (outer - inner) / 70.0, 1e-16);
  EXPECT_NEAR(S::kC3, inner / 35.0, 1e-16);
  EXPECT_NEAR(S::kD1, 0.25 - s30 / 72.0, 1e-16);
  EXPECT_NEAR(S::kD2, 0.25 + s30 / 72.0, 1e-16);
  EXPECT_NEAR(2.0 * (S::kC1 + S::kC2) + S::kC3, 1.0, 4e-16);
  EXPECT_NEAR(2.0 * (S::kD1 + S::kD2), 1.0, 4e-16);
  // Legendre P4(2x - 1) vanishes at the nodes c1 and c1 + c2.
  auto p4 = [](double x) {
    const double u = 2.0 * x - 1.0;
    return (35.0 * u * u * u * u - 30.0 * u * u + 3.0) / 8.0;
  };
  EXPECT_NEAR(p4(S::kC1), 0.0, 1e-14);
  EXPECT_NEAR(p4(S::kC1 + S::kC2), 0.0, 1e-14);
}

TEST(Saba4, TwoBodyOrbitIsExact) {
  // One planet: in Jacobi coordinates the Kepler part is the whole Hamiltonian and the kick is
  // round-off, so eight steps per orbit come back to the analytic state. Measured 5.4e-15
  // (circular) and 1.3e-12 (e = 0.9, ending at pericentre, where a phase error moves it most).
  for (const double e : {0.0, 0.9}) {
    const double q = 1.0 - e, m1 = 1e-3, mu = 1.0 + m1;
    const State6 rel = analytic_two_body(q, e, mu, 0.0);
    Bodies<2, double> b;
    b.mass[0] = 1.0;
    b.mass[1] = m1;
    for (int d = 0; d < 3; ++d) {
      b.pos[0][d] = -m1 / mu * rel.x[d];
      b.vel[0][d] = -m1 / mu * rel.v[d];
      b.pos[1][d] = rel.x[d] / mu;
      b.vel[1][d] = rel.v[d] / mu;
    }
    integrate<Saba4, 2>(b, kTwoPi / 8, 0.0, kTwoPi);
    const State6 exact = analytic_two_body(q, e, mu, kTwoPi);
    double x[3];
    for (int d = 0; d < 3; ++d) x[d] = b.pos[1][d] - b.pos[0][d];
    EXPECT_LT(distance3(x, exact.x) / norm3(exact.x), e > 0 ? 5e-12 : 5e-14) << "e = " << e;
  }
}

TEST(Saba4, StepsAreTimeSymmetric) {
  // A palindromic composition: 100 steps of h then 100 of -h return to the start to round-off
  // (measured 6.2e-14 in positions, 4.7e-14 in velocities); an operator out of its mirror place
  // would leave a truncation error.
  Bodies<3, double> b =
      read_bodies<3>(std::string(SWARMFIT_SOURCE_DIR) + "/tests/fixtures/rebound/saba4_n3_initial.csv");
  const Bodies<3, double> start = b;
  using S = Saba4<3, double>;
  StepParams p;
  for (const double h : {0.1, -0.1}) {
    p.time_step = h;
    S::Work w;
    double h_next;
    bool accepted;
    S::begin(b, w, p, h_next);
    for (int k = 0; k < 100; ++k) ASSERT_TRUE(S::step(b, w, h, p, h_next, accepted));
    S::end(b, w, p);
  }
  EXPECT_LT(relative_difference<3>(b.pos, start.pos), 2.5e-13);
  EXPECT_LT(relative_difference<3>(b.vel, start.vel), 2.5e-13);
}

// Star and planets of masses planet_mass * (0.3..1) at a_i = 1.6^(i-1), e < 0.1, inclinations
// below 0.05, random angles (seeded by `system`), in the barycentric frame.
template <int N>
Bodies<N, double> random_system(int system, double planet_mass) {
  std::mt19937_64 rng(1000 + system);
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  Bodies<N, double> b{};
  b.mass[0] = 1.0;
  for (int i = 1; i < N; ++i) {
    b.mass[i] = planet_mass * (0.3 + 0.7 * uniform(rng));
    const double a = std::pow(1.6, i - 1), e = 0.1 * uniform(rng), mu = 1.0 + b.mass[i];
    const double anomaly = kTwoPi * uniform(rng), omega = kTwoPi * uniform(rng), inc = 0.05 * uniform(rng);
    const double rate = std::sqrt(mu / (a * a * a)) / (1.0 - e * std::cos(anomaly)), root = std::sqrt(1.0 - e * e);
    const double x = a * (std::cos(anomaly) - e), y = a * root * std::sin(anomaly);
    const double vx = -a * std::sin(anomaly) * rate, vy = a * root * std::cos(anomaly) * rate;
    const double c = std::cos(omega), s = std::sin(omega);
    const double px = c * x - s * y, py = s * x + c * y, qx = c * vx - s * vy, qy = s * vx + c * vy;
    b.pos[i][0] = px;
    b.pos[i][1] = py * std::cos(inc);
    b.pos[i][2] = py * std::sin(inc);
    b.vel[i][0] = qx;
    b.vel[i][1] = qy * std::cos(inc);
    b.vel[i][2] = qy * std::sin(inc);
  }
  double total = 0, cx[3] = {}, cv[3] = {};
  for (int i = 0; i < N; ++i) {
    total += b.mass[i];
    for (int d = 0; d < 3; ++d) {
      cx[d] += b.mass[i] * b.pos[i][d];
      cv[d] += b.mass[i] * b.vel[i][d];
    }
  }
  for (int i = 0; i < N; ++i)
    for (int d = 0; d < 3; ++d) {
      b.pos[i][d] -= cx[d] / total;
      b.vel[i][d] -= cv[d] / total;
    }
  return b;
}

constexpr int kSystems = 15;
constexpr double kOrbits = 10;

// The median over kSystems random systems of the largest |dE/E| over 10 inner orbits at steps of
// 2 pi / steps_per_orbit, sampled after every step. The median of the maxima is smooth in the
// step: one system's error at one time jumps with the step's resonances with the orbits.
template <template <int, class> class Scheme, int N>
double median_energy_error(double planet_mass, double steps_per_orbit) {
  const double h = kTwoPi / steps_per_orbit;
  const int steps = static_cast<int>(kOrbits * steps_per_orbit);
  std::vector<double> worst;
  for (int system = 0; system < kSystems; ++system) {
    const Bodies<N, double> start = random_system<N>(system, planet_mass);
    Bodies<N, double> b = start;
    double largest = 0;
    for (int k = 1; k <= steps; ++k) {
      integrate<Scheme, N>(b, h, (k - 1) * h, k * h);
      largest = std::max(largest, std::fabs(relative_energy_error<N>(b, start)));
    }
    worst.push_back(largest);
  }
  std::nth_element(worst.begin(), worst.begin() + kSystems / 2, worst.end());
  return worst[kSystems / 2];
}

// Least-squares slope of log(error) against log(h).
double fitted_order(const std::vector<double>& steps_per_orbit, const std::vector<double>& errors) {
  double mx = 0, my = 0;
  const double n = static_cast<double>(errors.size());
  for (std::size_t k = 0; k < errors.size(); ++k) {
    mx += std::log(kTwoPi / steps_per_orbit[k]) / n;
    my += std::log(errors[k]) / n;
  }
  double sxy = 0, sxx = 0;
  for (std::size_t k = 0; k < errors.size(); ++k) {
    const double dx = std::log(kTwoPi / steps_per_orbit[k]) - mx;
    sxy += dx * (std::log(errors[k]) - my);
    sxx += dx * dx;
  }
  return sxy / sxx;
}

TEST(Saba4, EnergyErrorFallsAsH8WhereEpsH8Dominates) {
  // Planets of 3e-7..1e-6 star masses: eps h^8 dominates down to ~13 steps per orbit, below which
  // the error reaches round-off (1e-14) together with eps^2 h^2 (~1e-15 there, scaled from the test
  // below). Between 7.3 and 12.9 steps per orbit (steps that are no simple fraction of an orbit)
  // the median error falls from 2.1e-11 to 1.7e-13: fitted order 8.08 with 3 bodies, 8.21 with 4.
  // A second-order scheme gives 2; c1 or d1 off by 1e-6 gave 5.1-5.5.
  const std::vector<double> steps_per_orbit = {7.3, 8.4, 9.7, 11.2, 12.9};
  std::vector<double> three, four;
  for (const double s : steps_per_orbit) {
    three.push_back(median_energy_error<Saba4, 3>(1e-6, s));
    four.push_back(median_energy_error<Saba4, 4>(1e-6, s));
  }
  EXPECT_NEAR(fitted_order(steps_per_orbit, three), 8.0, 1.0);
  EXPECT_NEAR(fitted_order(steps_per_orbit, four), 8.0, 1.0);
}

TEST(Saba4, EnergyErrorIsEpsSquaredHSquaredForGiantPlanetsAndFarBelowMvs) {
  // Planets of 3e-4..1e-3 (and ten times lighter) star masses at 20..80 steps per orbit: eps^2 h^2
  // dominates (eps h^8, scaled from the test above, would be ~1e-11 at 20 steps per orbit), so the
  // error falls as h^2 (fitted 2.00 and 1.99) and 100x with eps (1.471e-9 / 1.467e-11 = 100.3 at 20
  // steps per orbit). MVS (Jacobi, the same step) has an O(eps h^2) error: measured 4.2e3 times
  // SABA4's for eps = 1e-3 and 4.4e4 for eps = 1e-4, i.e. 1/eps apart.
  const std::vector<double> steps_per_orbit = {20, 28, 40, 56, 80};
  std::vector<double> giant, light;
  for (const double s : steps_per_orbit) {
    giant.push_back(median_energy_error<Saba4, 3>(1e-3, s));
    light.push_back(median_energy_error<Saba4, 3>(1e-4, s));
  }
  EXPECT_NEAR(fitted_order(steps_per_orbit, giant), 2.0, 0.1);
  EXPECT_NEAR(fitted_order(steps_per_orbit, light), 2.0, 0.1);
  EXPECT_NEAR(giant[0] / light[0], 100.0, 20.0);
  const double mvs_giant = median_energy_error<Mvs, 3>(1e-3, steps_per_orbit[0]);
  const double mvs_light = median_energy_error<Mvs, 3>(1e-4, steps_per_orbit[0]);
  EXPECT_GT(mvs_giant / giant[0], 1e3) << mvs_giant << " " << giant[0];
  EXPECT_GT(mvs_light / light[0], 1e4) << mvs_light << " " << light[0];
}

}  // namespace
}  // namespace swarmfit::testing
