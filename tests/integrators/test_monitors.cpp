// Monitors fire at the right time on constructed cases, and a stopped system leaves the others
// untouched.
#include <gtest/gtest.h>

#include <cmath>

#include "test_support.hpp"

namespace swarmfit::testing {
namespace {

// A test particle in straight-line-like hyperbolic flight: r(t) from the analytic solution.
TEST(Monitors, EjectionStopsWhenTheDistancePassesRmax) {
  const double q = 1.0, e = 3.0, rmax = 10.0;
  Ensemble ens(2, 2);
  set_two_body(ens, 0, 1.0, 0.0, analytic_two_body(q, e, 1.0, 0.0));
  set_two_body(ens, 1, 1.0, 0.0, analytic_two_body(1.0, 0.0, 1.0, 0.0));  // circular: never ejected
  for (const auto& info : integrator_registry()) {
    Ensemble run = ens;
    RunRequest r = request_for(info.name, 1e-3, 50.0);
    r.monitors.rmax = rmax;
    integrate_cpu(run, r);
    EXPECT_EQ(run.status(0), kStatusEjected) << info.name;
    EXPECT_EQ(run.status(1), kStatusOk) << info.name;
    EXPECT_EQ(run.time(1), 50.0) << info.name;
    // Crossing time from the analytic orbit, by bisection on r(t) = rmax.
    double lo = 0, hi = 50;
    for (int k = 0; k < 100; ++k) {
      const double mid = 0.5 * (lo + hi);
      (norm3(analytic_two_body(q, e, 1.0, mid).x) < rmax ? lo : hi) = mid;
    }
    const double stop = run.time(0);
    // Detection happens at the end of the step that crosses rmax; an adaptive scheme's steps
    // there are about the step it proposes next.
    const double step = info.adaptive ? 1.5 * run.time_step(0) : 1e-3;
    EXPECT_GE(stop, lo - 1e-9) << info.name;
    EXPECT_LE(stop, lo + step) << info.name;
  }
}

TEST(Monitors, UnboundPlanetIsEjected) {
  Ensemble ens(1, 2);
  set_two_body(ens, 0, 1.0, 1e-3, analytic_two_body(1.0, 1.2, 1.0 + 1e-3, 0.0));
  RunRequest r = request_for("hermite", 1e-3, 1.0);
  r.monitors.stop_on_unbound = true;
  integrate_cpu(ens, r);
  EXPECT_EQ(ens.status(0), kStatusEjected);
  EXPECT_LT(ens.time(0), 0.01);
}

// Two planets on crossing paths: the encounter is flagged when their separation first drops
// below close_approach mutual Hill radii.
TEST(Monitors, CloseEncounterFiresAtTheHillDistance) {
  Ensemble ens(2, 3);
  for (long s = 0; s < 2; ++s) {
    ens.mass(s, 0) = 1.0;
    ens.mass(s, 1) = 1e-3;
    ens.mass(s, 2) = 1e-3;
  }
  // System 0: planets on circular orbits at a = 1 and 1.05 in conjunction at t = 0 on opposite
  // sides, converging slowly; system 1: the same radii far apart in phase (no encounter soon).
  auto place = [&](long s, int i, double a, double phase) {
    const double v = std::sqrt((1.0 + 1e-3) / a);
    ens.position(s, i, 0) = a * std::cos(phase);
    ens.position(s, i, 1) = a * std::sin(phase);
    ens.velocity(s, i, 0) = -v * std::sin(phase);
    ens.velocity(s, i, 1) = v * std::cos(phase);
  };
  place(0, 1, 1.0, 0.0);
  place(0, 2, 1.2, 0.5);  // ~6 mutual Hill radii apart, closing at 0.24 rad per time unit
  place(1, 1, 1.0, 0.0);
  place(1, 2, 3.0, 3.1);
  const double k = 3.0;
  RunRequest r = request_for("hermite", 1e-3, 30.0);
  r.monitors.close_approach = k;
  Ensemble run = ens;
  integrate_cpu(run, r);
  ASSERT_EQ(run.status(0), kStatusCloseEncounter);
  EXPECT_EQ(run.status(1), kStatusOk);
  // At the stop the criterion holds, one step earlier it did not.
  auto hill_ratio = [](const Ensemble& e, long s) {
    double d2 = 0, r1 = 0, r2 = 0;
    for (int d = 0; d < 3; ++d) {
      const double x1 = e.position(s, 1, d) - e.position(s, 0, d), x2 = e.position(s, 2, d) - e.position(s, 0, d);
      d2 += (x1 - x2) * (x1 - x2);
      r1 += x1 * x1;
      r2 += x2 * x2;
    }
    const double hill = std::cbrt((e.mass(s, 1) + e.mass(s, 2)) / (3 * e.mass(s, 0))) * std::sqrt(0.5 * (r1 + r2));
    return std::sqrt(d2) / hill;
  };
  EXPECT_LT(hill_ratio(run, 0), k);
  EXPECT_GT(run.time(0), 1.0);
  Ensemble before = ens;
  RunRequest r_before = r;
  r_before.destination_time = run.time(0) - 1e-3;
  r_before.monitors.close_approach = 0;
  integrate_cpu(before, r_before);
  EXPECT_GE(hill_ratio(before, 0), k);
}

TEST(Monitors, CollisionUsesPhysicalRadii) {
  Ensemble ens(1, 2);
  // Pericentre 0.01, radii adding up to 0.012: the bodies touch shortly before pericentre.
  set_two_body(ens, 0, 1.0, 1e-3, analytic_two_body(0.01, 0.99, 1.0 + 1e-3, -0.05));
  ens.radius(0, 0) = 0.008;
  ens.radius(0, 1) = 0.004;
  RunRequest r = request_for("hermite_adaptive", 1e-3, 1.0);
  r.step.time_step_factor = 0.01;
  r.monitors.collisions = true;
  integrate_cpu(ens, r);
  EXPECT_EQ(ens.status(0), kStatusCollision);
  EXPECT_LT(norm3(relative_state(ens, 0).x), 0.012);
  EXPECT_GT(ens.time(0), 0.0);
  EXPECT_LT(ens.time(0), 0.05);
}

TEST(Monitors, StepBudgetAndNonFiniteStopOnlyTheirSystem) {
  Ensemble ens(3, 2);
  set_two_body(ens, 0, 1.0, 1e-3, analytic_two_body(1.0, 0.0, 1.0 + 1e-3, 0.0));
  set_two_body(ens, 1, 1.0, 1e-3, analytic_two_body(1.0, 0.0, 1.0 + 1e-3, 0.0));
  set_two_body(ens, 2, 1.0, 1e-3, analytic_two_body(1.0, 0.0, 1.0 + 1e-3, 0.0));
  ens.position(2, 1, 0) = 0.0;  // planet on top of the star: infinite force
  ens.position(2, 1, 1) = 0.0;
  ens.position(2, 0, 0) = 0.0;
  ens.position(2, 0, 1) = 0.0;
  Ensemble reference = ens;
  RunRequest r = request_for("leapfrog", 1e-2, 5.0);
  integrate_cpu(reference, r);
  r.monitors.max_steps = 100;
  integrate_cpu(ens, r);
  EXPECT_EQ(ens.status(0), kStatusStepBudget);
  EXPECT_DOUBLE_EQ(ens.time(0), 1.0);
  EXPECT_EQ(ens.status(2), kStatusNonFinite);
  EXPECT_EQ(reference.status(2), kStatusNonFinite);
  EXPECT_EQ(reference.status(0), kStatusOk);
  EXPECT_EQ(reference.position(1, 1, 0), reference.position(0, 1, 0));
}

TEST(Monitors, RejectedAdaptiveStepsSpendTheStepBudget) {
  // max_steps bounds a call's work: an adaptive step that is tried and rejected counts as a step,
  // so a system whose steps keep failing stops with step_budget instead of running on. A first
  // step of 10 time units on a 2 pi orbit at tolerance 1e-12 is rejected several times in a row.
  Ensemble ens(1, 2);
  set_two_body(ens, 0, 1.0, 1e-3, analytic_two_body(1.0, 0.0, 1.0 + 1e-3, 0.0));
  ens.set_time_step(0, 10.0);
  Ensemble reference = ens;
  RunRequest r = request_for("rkck_adaptive", 10.0, 5.0);
  r.step.error_tolerance = 1e-12;
  r.step.min_time_step = 1e-9;
  r.step.max_time_step = 10.0;
  integrate_cpu(reference, r);
  ASSERT_EQ(reference.status(0), kStatusOk);
  r.monitors.max_steps = 3;
  integrate_cpu(ens, r);
  EXPECT_EQ(ens.status(0), kStatusStepBudget);
  // Three attempts, at least one of them rejected: fewer than three steps accepted, the time short of the end.
  EXPECT_LT(ens.steps(0), 3.0);
  EXPECT_LT(ens.time(0), 5.0);
}

TEST(Monitors, StoppedSystemsDoNotChangeAndOthersAreUnaffected) {
  // A system already stopped (status != ok) keeps its state bitwise on a later call, and the
  // result of a running system does not depend on whether its neighbour stopped.
  for (const auto& info : integrator_registry()) {
    Ensemble ens(2, 3);
    set_swarm_system(ens, 0, {0.0, 2.0});
    set_swarm_system(ens, 1, {1.0, 3.0});
    Ensemble alone(1, 3);
    set_swarm_system(alone, 0, {1.0, 3.0});
    ens.set_status(0, kStatusEjected);
    const Ensemble before = ens;
    RunRequest r = request_for(info.name, 1e-3, 0.5);
    integrate_cpu(ens, r);
    integrate_cpu(alone, r);
    for (int i = 0; i < 3; ++i)
      for (int d = 0; d < 3; ++d) {
        EXPECT_EQ(ens.position(0, i, d), before.position(0, i, d)) << info.name;
        EXPECT_EQ(ens.velocity(0, i, d), before.velocity(0, i, d)) << info.name;
        EXPECT_EQ(ens.position(1, i, d), alone.position(0, i, d)) << info.name;
      }
    EXPECT_EQ(ens.time(0), 0.0);
  }
}

}  // namespace
}  // namespace swarmfit::testing
