// MVS's dense output of a planet's star-relative state (Mvs::dense_relative, the transit times'
// states): between two kicks the map moves the Jacobi vectors on Kepler orbits, so at the ends of
// the step it must give the map's own closed states. At delta = 0 that is the stored state after
// its pending half drift; at delta = -h it is the previous step's closed state (the kick undone,
// drifted back). Each is formed independently here: the full inertial state of Mvs::end(), the
// star subtracted. dense_relative<i> drifts only the Jacobi vectors 1..i and sums the inner ones
// with the star-relative sweep, so an outer planet left out, or a wrong sweep, fails at once.
#include <gtest/gtest.h>

#include <cmath>

#include "swarmfit/integrators/mvs.hpp"

namespace swarmfit {
namespace {

constexpr int kN = 4;  // star + 3 planets
using M = Mvs<kN, double>;

// Star-relative state of every planet after closing the step (end(): the pending drift, then
// inertial coordinates).
void closed_relative(const Bodies<kN, double>& b, const M::Work& w, const StepParams& p, double (&x)[kN][3],
                     double (&v)[kN][3]) {
  Bodies<kN, double> copy = b;
  M::Work work = w;
  M::end(copy, work, p);
  for (int i = 1; i < kN; ++i)
    for (int d = 0; d < 3; ++d) {
      x[i][d] = copy.pos[i][d] - copy.pos[0][d];
      v[i][d] = copy.vel[i][d] - copy.vel[0][d];
    }
}

template <int I>
void expect_dense_matches(const Bodies<kN, double>& b, const M::Work& w, double delta, const double (&x)[kN][3],
                          const double (&v)[kN][3], const char* where) {
  double dx[3], dv[3];
  M::dense_relative<I>(b, w, delta, dx, dv);
  const double rx = std::sqrt(x[I][0] * x[I][0] + x[I][1] * x[I][1] + x[I][2] * x[I][2]);
  const double rv = std::sqrt(v[I][0] * v[I][0] + v[I][1] * v[I][1] + v[I][2] * v[I][2]);
  // Round-off of a Kepler drift and a frame change: measured 1.2e-16 relative at most. A
  // neglected inner planet's term (m/M ~ 1e-4 of its vector) is 11 orders above.
  for (int d = 0; d < 3; ++d) {
    EXPECT_NEAR(dx[d], x[I][d], 2e-15 * rx) << where << ", planet " << I << ", axis " << d;
    EXPECT_NEAR(dv[d], v[I][d], 2e-15 * rv) << where << ", planet " << I << ", axis " << d;
  }
}

TEST(MvsDenseOutput, PlanetStatesAtTheStepEndsAreTheMapsClosedStates) {
  StepParams p;
  p.G = 2.959122082855911e-4;  // AU^3 / (M_sun d^2)
  p.time_step = 1.0;
  p.mvs_coordinates = MvsCoordinates::kJacobi;
  p.mvs_splitting = MvsSplitting::kKeplerJumpKick;
  p.mvs_corrector = 0;
  // Three massive, eccentric, mutually inclined planets (inertial, about a 1 M_sun star), so that
  // every Jacobi vector and the kick matter.
  Bodies<kN, double> b{};
  b.mass[0] = 1.0;
  const double a[kN] = {0.0, 0.15, 0.24, 0.4}, mass[kN] = {0.0, 3e-4, 1e-4, 6e-4};
  const double e[kN] = {0.0, 0.1, 0.2, 0.05}, inc[kN] = {0.0, 0.02, -0.05, 0.1}, phase[kN] = {0.0, 0.3, 2.1, 4.0};
  for (int i = 1; i < kN; ++i) {
    b.mass[i] = mass[i];
    const double r = a[i] * (1.0 - e[i]), speed = std::sqrt(p.G * (1.0 + mass[i]) * (1.0 + e[i]) / r);
    const double c = std::cos(phase[i]), s = std::sin(phase[i]);
    b.pos[i][0] = r * c;
    b.pos[i][1] = r * s * std::cos(inc[i]);
    b.pos[i][2] = r * s * std::sin(inc[i]);
    b.vel[i][0] = -speed * s;
    b.vel[i][1] = speed * c * std::cos(inc[i]);
    b.vel[i][2] = speed * c * std::sin(inc[i]);
  }
  M::Work w;
  double h_next;
  M::begin(b, w, p, h_next);
  double x_prev[kN][3], v_prev[kN][3], x_now[kN][3], v_now[kN][3];
  for (int step = 0; step < 37; ++step) {
    closed_relative(b, w, p, x_prev, v_prev);
    bool accepted;
    ASSERT_TRUE(M::step(b, w, p.time_step, p, h_next, accepted));
  }
  closed_relative(b, w, p, x_now, v_now);
  expect_dense_matches<1>(b, w, 0.0, x_now, v_now, "delta = 0");
  expect_dense_matches<2>(b, w, 0.0, x_now, v_now, "delta = 0");
  expect_dense_matches<3>(b, w, 0.0, x_now, v_now, "delta = 0");
  expect_dense_matches<1>(b, w, -p.time_step, x_prev, v_prev, "delta = -h");
  expect_dense_matches<2>(b, w, -p.time_step, x_prev, v_prev, "delta = -h");
  expect_dense_matches<3>(b, w, -p.time_step, x_prev, v_prev, "delta = -h");
}

}  // namespace
}  // namespace swarmfit
