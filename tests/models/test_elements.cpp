// Orbital elements and the model's parameter conventions: round trips, the time of conjunction,
// both element frames and the K <-> mass relation.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "swarmfit/models/elements.hpp"
#include "swarmfit/models/planetary_model.hpp"
#include "swarmfit/models/units.hpp"

namespace swarmfit {
namespace {

double angle_difference(double a, double b) { return std::remainder(a - b, 2 * M_PI); }

TEST(Elements, KeplerEquationToRoundOff) {
  for (double e : {0.0, 0.1, 0.5, 0.9, 0.99})
    for (double M = -10.0; M < 10.0; M += 0.37) {
      const double E = solve_kepler(M, e);
      EXPECT_NEAR(E - e * std::sin(E), M, 1e-13 * (1 + std::fabs(M))) << "e " << e << " M " << M;
    }
}

TEST(Elements, CartesianRoundTrip) {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> u(0, 1);
  for (int k = 0; k < 2000; ++k) {
    Elements el;
    el.a = 0.01 + 10 * u(rng);
    el.e = 0.95 * u(rng);
    el.inc = 0.01 + (M_PI - 0.02) * u(rng);
    el.node = 2 * M_PI * u(rng) - M_PI;
    el.omega = 2 * M_PI * u(rng) - M_PI;
    el.mean_anomaly = 2 * M_PI * u(rng) - M_PI;
    const double mu = units::kG * (1 + 1e-3 * u(rng));
    double x[3], v[3];
    elements_to_cartesian(el, mu, x, v);
    const Elements back = cartesian_to_elements(x, v, mu);
    EXPECT_NEAR(back.a, el.a, 1e-11 * el.a);
    EXPECT_NEAR(back.e, el.e, 1e-10);
    EXPECT_NEAR(back.inc, el.inc, 1e-10);
    EXPECT_NEAR(angle_difference(back.node, el.node), 0, 1e-9);
    if (el.e > 1e-3) {
      EXPECT_NEAR(angle_difference(back.omega, el.omega), 0, 1e-7 / el.e);
      EXPECT_NEAR(angle_difference(back.mean_anomaly, el.mean_anomaly), 0, 1e-7 / el.e);
    }
  }
}

// At tc the planet (two-body orbit from the reference epoch) is in conjunction in front of the
// star: argument of latitude pi/2, so z = r sin(inc) (README, "Conventions"). For a circular
// orbit that is also the minimum of the sky-plane separation (x vx + y vy = 0); an eccentric,
// inclined orbit reaches that minimum slightly off conjunction, which the observers measure.
TEST(Elements, TimeOfConjunctionIsATransit) {
  for (double omega : {-2.5, -0.3, 0.0, 1.0, 2.9})
    for (double e : {0.0, 0.2, 0.6}) {
      ModelOptions options;
      options.reference_epoch = 2455000.0;
      const PlanetaryModel model({"b"}, {}, options);
      const double tc = 2455003.7, period = 11.0, inc = 87.0 * units::kDegree;
      const std::vector<double> params = {
          0.8, period, 1e-6, std::sqrt(e) * std::cos(omega), std::sqrt(e) * std::sin(omega), tc, 87.0, 30.0};
      std::vector<PlanetState> s;
      ASSERT_TRUE(model.planet_states(params.data(), s));
      Elements el{s[0].a,    s[0].e,     s[0].inc,
                  s[0].node, s[0].omega, s[0].mean_anomaly + 2 * M_PI * (tc - options.reference_epoch) / period};
      EXPECT_NEAR(s[0].inc, inc, 1e-15);
      double x[3], v[3];
      elements_to_cartesian(el, units::kG * (0.8 + s[0].mass), x, v);
      const double speed = std::sqrt(v[0] * v[0] + v[1] * v[1]);
      const double r = std::sqrt(x[0] * x[0] + x[1] * x[1] + x[2] * x[2]);
      EXPECT_NEAR(x[2], r * std::sin(inc), 1e-12 * r) << "omega " << omega << " e " << e;
      if (e == 0.0) EXPECT_NEAR((x[0] * v[0] + x[1] * v[1]) / (r * speed), 0, 1e-12) << "omega " << omega;
    }
}

// eccentricity_parameter = ecosw: (e cos w, e sin w) give the system that (sqrt(e) cos w,
// sqrt(e) sin w) give, to round-off; |(ecosw, esinw)| >= 1 is refused.
TEST(Elements, PlainAndSqrtEccentricityVectorsGiveTheSameSystem) {
  ModelOptions sqrt_basis, plain_basis;
  sqrt_basis.reference_epoch = plain_basis.reference_epoch = 2455000.0;
  plain_basis.plain_eccentricity_vector = true;
  const PlanetaryModel by_sqrt({"b", "c"}, {}, sqrt_basis), by_plain({"b", "c"}, {}, plain_basis);
  EXPECT_EQ(by_sqrt.parameters()[3].name, "secosw_b");
  EXPECT_EQ(by_plain.parameters()[3].name, "ecosw_b");
  EXPECT_EQ(by_plain.parameters()[11].name, "esinw_c");
  const double e[2] = {0.31, 0.004}, omega[2] = {2.2, -0.7};
  std::vector<double> a = {1.02, 19.2, 40.0, 0, 0, 2455003.1, 89.0, 0.0, 39.0, 30.0, 0, 0, 2455011.4, 88.5, 1.0};
  std::vector<double> b = a;
  for (int p = 0; p < 2; ++p) {
    a[1 + 7 * p + 2] = std::sqrt(e[p]) * std::cos(omega[p]);
    a[1 + 7 * p + 3] = std::sqrt(e[p]) * std::sin(omega[p]);
    b[1 + 7 * p + 2] = e[p] * std::cos(omega[p]);
    b[1 + 7 * p + 3] = e[p] * std::sin(omega[p]);
  }
  double pa[3][3], va[3][3], ma[3], pb[3][3], vb[3][3], mb[3];
  ASSERT_TRUE(by_sqrt.initial_state(a.data(), pa, va, ma));
  ASSERT_TRUE(by_plain.initial_state(b.data(), pb, vb, mb));
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(ma[i], mb[i]);
    for (int d = 0; d < 3; ++d) {
      EXPECT_NEAR(pa[i][d], pb[i][d], 1e-14);
      EXPECT_NEAR(va[i][d], vb[i][d], 1e-16);
    }
  }
  std::vector<PlanetState> s;
  ASSERT_TRUE(by_plain.planet_states(b.data(), s));
  EXPECT_NEAR(s[0].e, 0.31, 1e-15);
  EXPECT_NEAR(s[1].omega, -0.7, 1e-12);
  b[1 + 2] = 0.8;  // |(0.8, 0.31 sin 2.2)| = 0.84: allowed here, 0.64 + 0.06 in the sqrt basis too
  EXPECT_TRUE(by_plain.planet_states(b.data(), s));
  b[1 + 2] = 1.0;  // e = |(1.0, 0.25)| > 1
  std::string reason;
  EXPECT_FALSE(by_plain.planet_states(b.data(), s, &reason));
  EXPECT_NE(reason.find("|(ecosw, esinw)|"), std::string::npos) << reason;
}

// Jacobi elements describe each planet about the interior centre of mass with mu = G eta_i;
// astrocentric ones about the star with mu = G (m0 + m_i): each frame gives back its elements.
TEST(Elements, BothFramesRecoverTheirElements) {
  for (ElementFrame frame : {ElementFrame::kJacobi, ElementFrame::kAstrocentric}) {
    ModelOptions options;
    options.frame = frame;
    options.phase_from_mean_anomaly = true;
    options.reference_epoch = 0.0;
    const PlanetaryModel model({"b", "c", "d"}, {}, options);
    const std::vector<double> params = {1.1,                                         // star
                                        5.0,  300.0, 0.2,  0.1,  10.0,  80.0, 5.0,   // b
                                        12.0, 900.0, -0.3, 0.2,  200.0, 95.0, 40.0,  // c
                                        40.0, 50.0,  0.1,  -0.4, 300.0, 70.0, 170.0};
    double pos[4][3], vel[4][3], mass[4];
    ASSERT_TRUE(model.initial_state(params.data(), pos, vel, mass));
    // The barycentre is at rest at the origin.
    for (int d = 0; d < 3; ++d) {
      double p = 0, q = 0;
      for (int i = 0; i < 4; ++i) {
        p += mass[i] * pos[i][d];
        q += mass[i] * vel[i][d];
      }
      EXPECT_NEAR(p, 0, 1e-16);
      EXPECT_NEAR(q, 0, 1e-18);
    }
    double interior = mass[0], cx[3], cv[3];
    for (int d = 0; d < 3; ++d) {
      cx[d] = pos[0][d];
      cv[d] = vel[0][d];
    }
    for (int i = 1; i < 4; ++i) {
      double x[3], v[3];
      const bool jacobi = frame == ElementFrame::kJacobi;
      for (int d = 0; d < 3; ++d) {
        x[d] = pos[i][d] - (jacobi ? cx[d] : pos[0][d]);
        v[d] = vel[i][d] - (jacobi ? cv[d] : vel[0][d]);
      }
      const double mu = units::kG * ((jacobi ? interior : mass[0]) + mass[i]);
      const Elements el = cartesian_to_elements(x, v, mu);
      const double period = 2 * M_PI * std::sqrt(el.a * el.a * el.a / mu);
      const int k = 1 + 7 * (i - 1);
      EXPECT_NEAR(period, params[k], 1e-10 * params[k]);
      EXPECT_NEAR(mass[i], params[k + 1] * units::kEarthMass, 1e-20);
      EXPECT_NEAR(el.e, params[k + 2] * params[k + 2] + params[k + 3] * params[k + 3], 1e-12);
      EXPECT_NEAR(angle_difference(el.omega, std::atan2(params[k + 3], params[k + 2])), 0, 1e-10);
      EXPECT_NEAR(angle_difference(el.mean_anomaly, params[k + 4] * units::kDegree), 0, 1e-10);
      EXPECT_NEAR(el.inc, params[k + 5] * units::kDegree, 1e-12);
      EXPECT_NEAR(angle_difference(el.node, params[k + 6] * units::kDegree), 0, 1e-12);
      for (int d = 0; d < 3; ++d) {
        cx[d] = (interior * cx[d] + mass[i] * pos[i][d]) / (interior + mass[i]);
        cv[d] = (interior * cv[d] + mass[i] * vel[i][d]) / (interior + mass[i]);
      }
      interior += mass[i];
    }
  }
}

TEST(Elements, SemiAmplitudeAndMassAreInverse) {
  for (double K : {0.5, 10.0, 300.0, 5000.0})
    for (double e : {0.0, 0.5})
      for (double inc : {0.5, 1.5707963267948966}) {
        const double m = mass_from_semi_amplitude(K, 0.9, 13.0, e, inc);
        EXPECT_NEAR(semi_amplitude(m, 0.9, 13.0, e, inc), K, 1e-12 * K);
      }
  // The textbook form K = 28.4329 m/s (m / M_J) ((M + m) / Msun)^(-2/3) (P / yr)^(-1/3)
  // (Lovis & Fischer 2010; 6 digits): a Jupiter on 51 Peg b's 4.23 d about 1.12 Msun.
  const double textbook =
      28.4329 * std::pow(4.23 / 365.25, -1.0 / 3.0) * std::pow(1.12 + units::kJupiterMass, -2.0 / 3.0);
  EXPECT_NEAR(semi_amplitude(units::kJupiterMass, 1.12, 4.23, 0.0, M_PI / 2), textbook, 1e-4 * textbook);
}

}  // namespace
}  // namespace swarmfit
