// Ensembles against single systems: M copies of one system give bitwise the result of that
// system alone, whatever the thread count and the position in a SIMD pack or chunk.
#include <gtest/gtest.h>

#include <cstring>

#include "test_support.hpp"

namespace swarmfit::testing {
namespace {

bool bitwise_equal(double a, double b) { return std::memcmp(&a, &b, sizeof(double)) == 0; }

void expect_same_system(const Ensemble& a, long sa, const Ensemble& b, long sb, const std::string& what) {
  ASSERT_EQ(a.num_bodies(), b.num_bodies());
  EXPECT_TRUE(bitwise_equal(a.time(sa), b.time(sb))) << what;
  EXPECT_EQ(a.status(sa), b.status(sb)) << what;
  EXPECT_EQ(a.steps(sa), b.steps(sb)) << what;
  for (int i = 0; i < a.num_bodies(); ++i)
    for (int d = 0; d < 3; ++d) {
      EXPECT_TRUE(bitwise_equal(a.position(sa, i, d), b.position(sb, i, d))) << what << " body " << i;
      EXPECT_TRUE(bitwise_equal(a.velocity(sa, i, d), b.velocity(sb, i, d))) << what << " body " << i;
    }
}

void copy_system(const Ensemble& from, long s, Ensemble& to, long t) {
  for (int i = 0; i < from.num_bodies(); ++i) {
    to.mass(t, i) = from.mass(s, i);
    to.radius(t, i) = from.radius(s, i);
    for (int d = 0; d < 3; ++d) {
      to.position(t, i, d) = from.position(s, i, d);
      to.velocity(t, i, d) = from.velocity(s, i, d);
    }
  }
  to.set_time(t, from.time(s));
}

TEST(Ensemble, CopiesOfOneSystemEqualTheSystemAloneBitwise) {
  for (const auto& info : integrator_registry()) {
    for (int n : {3, 6}) {
      Ensemble single(1, n);
      set_swarm_system(single, 0, {0.3, 2.0, 4.1, 5.0, 1.2});
      const long copies = 70;  // more than two chunks, last chunk partly filled
      Ensemble many(copies, n);
      for (long s = 0; s < copies; ++s) copy_system(single, 0, many, s);
      RunRequest r = request_for(info.name, 2e-3, 3.0);
      r.step.time_step_factor = 0.01;
      r.step.error_tolerance = 1e-11;
      integrate_cpu(single, r);
      r.threads = 2;
      integrate_cpu(many, r);
      for (long s = 0; s < copies; ++s)
        expect_same_system(single, 0, many, s, info.name + " copy " + std::to_string(s));
    }
  }
}

TEST(Ensemble, ResultDoesNotDependOnNeighboursOrThreads) {
  // A mixed ensemble: system k integrated among others equals system k integrated alone.
  for (const auto& info : integrator_registry()) {
    const long m = 19;
    Ensemble mixed(m, 4);
    for (long s = 0; s < m; ++s) set_swarm_system(mixed, s, {0.1 * s, 1.0 + 0.7 * s, 3.0 - 0.2 * s});
    Ensemble alone(1, 4);
    copy_system(mixed, 11, alone, 0);
    RunRequest r = request_for(info.name, 2e-3, 2.0);
    r.step.time_step_factor = 0.01;
    r.threads = 1;
    integrate_cpu(alone, r);
    r.threads = 2;
    integrate_cpu(mixed, r);
    expect_same_system(alone, 0, mixed, 11, info.name);
  }
}

TEST(Ensemble, ResumingInSegmentsMatchesFixedStepRunsToRoundOff) {
  // Integrating to T in one call or in ten calls takes the same steps (fixed-step schemes).
  for (const char* name : {"hermite", "leapfrog", "rkck"}) {
    Ensemble one(3, 3), ten(3, 3);
    for (long s = 0; s < 3; ++s) {
      set_swarm_system(one, s, {0.5 * s, 2.0});
      set_swarm_system(ten, s, {0.5 * s, 2.0});
    }
    RunRequest r = request_for(name, 1e-2, 1.0);
    integrate_cpu(one, r);
    for (int k = 1; k <= 10; ++k) {
      r.destination_time = 0.1 * k;
      integrate_cpu(ten, r);
    }
    // Each segment's last step lands on its end, which may differ from a step of 1e-2 in the last
    // bit: round-off (7.8e-16 measured).
    for (long s = 0; s < 3; ++s) {
      EXPECT_EQ(one.steps(s), ten.steps(s)) << name;
      for (int i = 0; i < 3; ++i)
        for (int d = 0; d < 3; ++d) EXPECT_NEAR(one.position(s, i, d), ten.position(s, i, d), 1e-14) << name;
    }
  }
}

}  // namespace
}  // namespace swarmfit::testing
