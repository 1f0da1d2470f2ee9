// The universal-variable Kepler drift on its own: exact against the classical solution for
// elliptic, near-parabolic and hyperbolic orbits, many periods, backwards in time; never NaN.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "swarmfit/integrators/dual.hpp"
#include "swarmfit/integrators/kepler.hpp"
#include "test_support.hpp"

namespace swarmfit::testing {
namespace {

double drift_error(double q, double e, double h) {
  const State6 s0 = analytic_two_body(q, e, 1.0, 0.0);
  const State6 s1 = analytic_two_body(q, e, 1.0, h);
  double x[3] = {s0.x[0], s0.x[1], s0.x[2]}, v[3] = {s0.v[0], s0.v[1], s0.v[2]};
  EXPECT_TRUE(kepler_drift(x, v, 1.0, h));
  return distance3(x, s1.x) / norm3(s1.x);
}

TEST(Kepler, MatchesTheClassicalSolution) {
  struct Case {
    double q, e, h, tolerance;
  };
  // Tolerances: round-off of the classical solution (long double) and of f, g in double, a few
  // times what is measured (e = 0.999: 2.8e-15; e = 1.001: 3.1e-16; 50 periods of e = 0.5:
  // 3.7e-14, its anomaly's round-off grows with the time): a solver stopped at ~1e-12 fails.
  const Case cases[] = {{1.0, 0.0, 1.0, 2e-15},  {1.0, 0.0, -2.5, 2e-15},   {0.1, 0.9, 0.01, 1e-14},
                        {0.1, 0.9, 3.0, 1e-13},  {0.01, 0.999, 0.5, 2e-14}, {1.0, 1.5, 0.4, 2e-15},
                        {1.0, 1.5, 50.0, 1e-14}, {1.0, 1.001, 5.0, 3e-15},  {1.0, 0.5, 314.0, 2e-13},
                        {1.0, 10.0, -3.0, 1e-14}};
  for (const Case& c : cases) EXPECT_LT(drift_error(c.q, c.e, c.h), c.tolerance) << c.q << " " << c.e << " " << c.h;
}

TEST(Kepler, NeverReturnsNaNOnHostileInput) {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> u(-1, 1);
  for (int k = 0; k < 20000; ++k) {
    double x[3] = {u(rng) * std::pow(10, 3 * u(rng)), u(rng), u(rng) * 1e-3};
    double v[3] = {u(rng) * std::pow(10, 2 * u(rng)), u(rng) * 10, u(rng)};
    const double h = u(rng) * std::pow(10, 4 * u(rng));
    const double mu = std::pow(10, 2 * u(rng));
    kepler_drift(x, v, mu, h);
    for (int d = 0; d < 3; ++d) {
      ASSERT_TRUE(std::isfinite(x[d])) << k;
      ASSERT_TRUE(std::isfinite(v[d])) << k;
    }
  }
  // Degenerate: a body at the origin cannot be drifted; it reports failure and stays finite.
  double x[3] = {0, 0, 0}, v[3] = {1, 0, 0};
  EXPECT_FALSE(kepler_drift(x, v, 1.0, 1.0));
  EXPECT_EQ(x[0], 0.0);
}

TEST(Kepler, ConservesEnergyAndAngularMomentumOverManySteps) {
  const State6 s0 = analytic_two_body(0.3, 0.7, 1.0, 0.0);
  double x[3] = {s0.x[0], s0.x[1], 0.0}, v[3] = {s0.v[0], s0.v[1], 0.0};
  auto energy = [&] { return 0.5 * (v[0] * v[0] + v[1] * v[1]) - 1.0 / std::hypot(x[0], x[1]); };
  auto angular = [&] { return x[0] * v[1] - x[1] * v[0]; };
  const double e0 = energy(), l0 = angular();
  for (int k = 0; k < 100000; ++k) kepler_drift(x, v, 1.0, 0.0137);
  EXPECT_LT(std::fabs(energy() / e0 - 1), 1e-12);
  EXPECT_LT(std::fabs(angular() / l0 - 1), 1e-12);
}

// The drift on tangent lanes (kepler_drift_bodies on Dual): the values are bitwise the T drift's,
// and the tangent is the derivative of the drift along the tangent direction, against a central
// difference (step 1e-6 of the state: its error ~1e-11 relative, a wrong tangent term is O(1));
// elliptic, near-parabolic and hyperbolic orbits, a drift of many periods (whole periods removed),
// backwards, and a mass derivative.
TEST(Kepler, TangentDriftIsTheDerivativeOfTheDrift) {
  struct Case {
    double q, e, h;
  };
  const Case cases[] = {{1.0, 0.0, 0.3},  {1.0, 0.3, 0.5},   {0.1, 0.9, 0.01}, {0.1, 0.9, 3.0},
                        {1.0, 0.5, 31.4}, {1.0, 0.5, -40.0}, {1.0, 1.5, 0.4},  {1.0, 1.001, 5.0}};
  const double dir[6] = {0.3, -0.7, 0.2, 0.5, 0.1, -0.4}, dmu = 0.6;
  using D = Dual<double>;
  for (const Case& c : cases) {
    const State6 s0 = analytic_two_body(c.q, c.e, 1.0, 0.0);
    const double x0[3] = {s0.x[0], s0.x[1], 0.01}, v0[3] = {s0.v[0], s0.v[1], 0.02};
    D x[2][3], v[2][3], mu[2] = {D(0.0), D(1.0, dmu)}, factor[2] = {D(0.0), D(kepler_period_factor(1.0))};
    for (int d = 0; d < 3; ++d) {
      x[1][d] = D(x0[d], dir[d]);
      v[1][d] = D(v0[d], dir[3 + d]);
    }
    ASSERT_TRUE(kepler_drift_bodies<2>(x, v, mu, factor, D(c.h)));
    double xp[3], vp[3];
    for (int d = 0; d < 3; ++d) xp[d] = x0[d], vp[d] = v0[d];
    ASSERT_TRUE(kepler_drift(xp, vp, 1.0, c.h));
    for (int d = 0; d < 3; ++d) {
      EXPECT_EQ(x[1][d].v, xp[d]);
      EXPECT_EQ(v[1][d].v, vp[d]);
    }
    const double eps = 1e-6;
    double plus[6], minus[6];
    for (int sign : {1, -1}) {
      double xs[3], vs[3];
      for (int d = 0; d < 3; ++d) {
        xs[d] = x0[d] + sign * eps * dir[d];
        vs[d] = v0[d] + sign * eps * dir[3 + d];
      }
      ASSERT_TRUE(kepler_drift(xs, vs, 1.0 + sign * eps * dmu, c.h));
      double* out = sign > 0 ? plus : minus;
      for (int d = 0; d < 3; ++d) out[d] = xs[d], out[3 + d] = vs[d];
    }
    double scale = 0.0;
    for (int k = 0; k < 6; ++k) scale = std::max(scale, std::fabs((plus[k] - minus[k]) / (2 * eps)));
    for (int k = 0; k < 6; ++k) {
      const double fd = (plus[k] - minus[k]) / (2 * eps);
      const double tangent = k < 3 ? x[1][k].d : v[1][k - 3].d;
      EXPECT_NEAR(tangent, fd, 1e-7 * scale) << c.q << " " << c.e << " " << c.h << " component " << k;
    }
  }
}

}  // namespace
}  // namespace swarmfit::testing
