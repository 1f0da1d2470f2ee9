// Two-body orbits against the analytic solution (independent classical Kepler equation):
// MVS (and SABA4, in Jacobi coordinates) reproduce them to round-off (their Kepler drift is exact),
// every other scheme within its truncation error, which shrinks at the scheme's order when the
// step halves.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>

#include "test_support.hpp"

namespace swarmfit::testing {
namespace {

struct Orbit {
  const char* name;
  double q, e, t_end, dt;  // pericentre distance, eccentricity, duration, coarse step for order tests
};
const double kTwoPi = 6.283185307179586;
// One full orbit for the bound cases (a = 1), a pericentre passage and beyond for the hyperbola.
const Orbit kOrbits[] = {{"circular", 1.0, 0.0, kTwoPi, kTwoPi / 64},
                         {"eccentric_0.9", 0.1, 0.9, kTwoPi, kTwoPi / 4096},
                         {"hyperbolic_1.5", 1.0, 1.5, 10.0, 0.05}};

// Relative position error after integrating the orbit once with `integrator`.
double position_error(const std::string& integrator, const Orbit& o, double dt, double m1,
                      const std::function<void(RunRequest&)>& tune = {}) {
  const double m0 = 1.0, G = 1.0;
  Ensemble e(1, 2);
  set_two_body(e, 0, m0, m1, analytic_two_body(o.q, o.e, G * (m0 + m1), 0.0));
  RunRequest r = request_for(integrator, dt, o.t_end, G);
  if (tune) tune(r);
  integrate_cpu(e, r);
  EXPECT_EQ(e.status(0), kStatusOk);
  EXPECT_DOUBLE_EQ(e.time(0), o.t_end);
  const State6 exact = analytic_two_body(o.q, o.e, G * (m0 + m1), o.t_end);
  const State6 got = relative_state(e, 0);
  return distance3(got.x, exact.x) / norm3(exact.x);
}

TEST(TwoBody, MvsDemocraticHeliocentricTestParticleIsExact) {
  // With a massless planet the jump and the interaction vanish: only the Kepler drift remains.
  // What is left is round-off: largest for e = 0.9, which ends at its pericentre, where a phase
  // error of 512 drifts' round-off (~1e-13) moves the position ~40x more than on a circle:
  // 4.4e-12 without FMA contraction (the CPU build). (1.6e-12 while the clock summed its steps
  // uncompensated: its -6.4e-14 error in the end time happened to cancel part of the phase error.)
  for (const Orbit& o : kOrbits) {
    const double err = position_error("mvs", o, o.dt * 8, 0.0);
    EXPECT_LT(err, o.e == 0.9 ? 6e-12 : 1e-12) << o.name;
  }
}

TEST(TwoBody, MvsJacobiIsExactForAMassivePair) {
  // In Jacobi coordinates the Kepler part of a two-body system is the whole Hamiltonian; the kick
  // is the full acceleration minus the Kepler term, which cancel only to the round-off of the
  // acceleration (largest at the e = 0.9 pericentre). Measured 1.5e-14, 9.2e-13 and 6.7e-16.
  const double bound[] = {1e-13, 5e-12, 1e-14};
  for (int k = 0; k < 3; ++k) {
    const Orbit& o = kOrbits[k];
    const double err = position_error("mvs", o, o.dt * 8, 1e-3,
                                      [](RunRequest& r) { r.step.mvs_coordinates = MvsCoordinates::kJacobi; });
    EXPECT_LT(err, bound[k]) << o.name;
  }
}

// Schemes in Jacobi coordinates only, whose Kepler drift is the whole two-body motion (the kick
// is round-off): exact here, with no order to measure.
bool exact_for_two_bodies(const std::string& name) { return name == "saba4" || name == "whfast"; }

TEST(TwoBody, FixedStepSchemesConvergeAtTheirOrder) {
  for (const auto& info : integrator_registry()) {
    if (info.adaptive) continue;
    for (const Orbit& o : kOrbits) {
      // MVS with a massive planet in democratic heliocentric coordinates is not exact: its
      // error is the splitting error, of order 2.
      const double coarse = position_error(info.name, o, o.dt, 1e-3);
      const double fine = position_error(info.name, o, o.dt / 2, 1e-3);
      if (exact_for_two_bodies(info.name)) {
        // saba4: measured 5.5e-14 (circular), 3.3e-11 (e = 0.9, 4096 steps ending at pericentre;
        // MVS in Jacobi coordinates 1.8e-11 there) and 2.6e-15 (hyperbolic).
        EXPECT_LT(std::max(coarse, fine), o.e == 0.9 ? 1e-10 : 5e-13) << info.name << " " << o.name;
        continue;
      }
      const double order = std::log2(coarse / fine);
      EXPECT_NEAR(order, info.order, 0.3) << info.name << " " << o.name << " errors " << coarse << " " << fine;
    }
  }
}

TEST(TwoBody, AdaptiveHermiteConvergesAtFourthOrderInTau) {
  // The adaptive step is proportional to tau (Swarm-NG eq. 5), so the error scales as tau^4.
  auto with_tau = [](double tau) { return [tau](RunRequest& r) { r.step.time_step_factor = tau; }; };
  for (const Orbit& o : kOrbits) {
    const double coarse = position_error("hermite_adaptive", o, 0.0, 1e-3, with_tau(0.02));
    const double fine = position_error("hermite_adaptive", o, 0.0, 1e-3, with_tau(0.01));
    EXPECT_NEAR(std::log2(coarse / fine), 4.0, 0.4) << o.name << " errors " << coarse << " " << fine;
  }
}

TEST(TwoBody, AdaptiveRkckMeetsItsTolerance) {
  auto with_tolerance = [](double tol) { return [tol](RunRequest& r) { r.step.error_tolerance = tol; }; };
  // error_tolerance bounds the local error per step; the global error is larger by the number of
  // steps at most. Measured at 1e-12: 5.9e-11 (circular), 4.2e-9 (e = 0.9), 1.5e-12 (hyperbolic),
  // each ~1000x below its error at 1e-9, as the tolerances' ratio says.
  const double bound[] = {3e-10, 2e-8, 1e-11};
  for (int k = 0; k < 3; ++k) {
    const Orbit& o = kOrbits[k];
    const double loose = position_error("rkck_adaptive", o, o.dt, 1e-3, with_tolerance(1e-9));
    const double tight = position_error("rkck_adaptive", o, o.dt, 1e-3, with_tolerance(1e-12));
    EXPECT_LT(tight, bound[k]) << o.name;
    EXPECT_LT(tight, loose / 300) << o.name << " " << loose << " " << tight;
  }
}

TEST(TwoBody, TheRoundOffBoundRejectsASlightlyWrongForce) {
  // The 1e-12 bound above is not vacuous: gravity off by one part in 1e9 already breaks it.
  const Orbit& o = kOrbits[0];
  const double err = position_error("mvs", o, o.dt * 8, 0.0, [](RunRequest& r) { r.step.G = 1.0 + 1e-9; });
  EXPECT_GT(err, 1e-10);
}

}  // namespace
}  // namespace swarmfit::testing
