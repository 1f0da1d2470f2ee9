// CUDA backend against the CPU backend (skipped without a device). Both backends run the same
// integrate_lanes(); both contract a*b+c into FMAs; the GPU takes 1/sqrt from rsqrt (1 ulp), the
// CPU divides; no fast-math. They agree to round-off: 1e-12 relative after 1000 fixed steps.
// rkck_adaptive accepts or rejects a step by comparing an error estimate with the tolerance, and
// last-bit differences flip some of those decisions: its two paths agree to the tolerance.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "test_support.hpp"

namespace swarmfit::testing {
namespace {

#define SKIP_WITHOUT_GPU() \
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device (" << cuda_device_name() << ")"

Ensemble mixed_ensemble(long m, int n) {
  Ensemble e(m, n);
  for (long s = 0; s < m; ++s) set_swarm_system(e, s, {0.1 * s, 1.0 + 0.37 * s, 2.0 + 0.11 * s, 4.0, 5.0});
  return e;
}

TEST(Gpu, AgreesWithCpuAfter1000Steps) {
  SKIP_WITHOUT_GPU();
  for (const auto& info : integrator_registry()) {
    for (int n : {3, 6, 9}) {
      Ensemble cpu = mixed_ensemble(100, n), gpu = mixed_ensemble(100, n);
      RunRequest r = request_for(info.name, 1e-3, 1.0);  // 1000 fixed steps
      r.step.time_step_factor = 0.01;
      r.monitors.close_approach = 0.5;
      integrate_cpu(cpu, r);
      integrate_cuda(gpu, r);
      const bool decides_steps = info.name == "rkck_adaptive";
      const double tolerance = decides_steps ? 100 * r.step.error_tolerance : 1e-12;
      for (long s = 0; s < 100; ++s) {
        ASSERT_EQ(cpu.status(s), gpu.status(s)) << info.name;
        if (!decides_steps) ASSERT_EQ(cpu.steps(s), gpu.steps(s)) << info.name;
        double scale = 0, diff = 0;
        for (int i = 0; i < n; ++i)
          for (int d = 0; d < 3; ++d) {
            scale = std::max(scale, std::fabs(cpu.position(s, i, d)));
            diff = std::max(diff, std::fabs(cpu.position(s, i, d) - gpu.position(s, i, d)));
          }
        EXPECT_LT(diff / scale, tolerance) << info.name << " n=" << n << " system " << s;
      }
    }
  }
}

TEST(Gpu, CopiesOfOneSystemAreBitwiseEqual) {
  SKIP_WITHOUT_GPU();
  for (const auto& info : integrator_registry()) {
    Ensemble single = mixed_ensemble(1, 4);
    Ensemble many(1000, 4);
    for (long s = 0; s < 1000; ++s) set_swarm_system(many, s, {0.0, 1.0, 2.0, 4.0, 5.0});
    RunRequest r = request_for(info.name, 1e-3, 1.0);
    integrate_cuda(single, r);
    integrate_cuda(many, r);
    for (long s = 0; s < 1000; ++s)
      for (int i = 0; i < 4; ++i)
        for (int d = 0; d < 3; ++d) {
          const double a = single.position(0, i, d), b = many.position(s, i, d);
          ASSERT_EQ(std::memcmp(&a, &b, sizeof a), 0) << info.name << " system " << s;
        }
  }
}

TEST(Gpu, MonitorsStopTheSameSystemsAsOnTheCpu) {
  SKIP_WITHOUT_GPU();
  Ensemble cpu(2, 2), gpu(2, 2);
  for (Ensemble* e : {&cpu, &gpu}) {
    set_two_body(*e, 0, 1.0, 0.0, analytic_two_body(1.0, 3.0, 1.0, 0.0));
    set_two_body(*e, 1, 1.0, 0.0, analytic_two_body(1.0, 0.0, 1.0, 0.0));
  }
  RunRequest r = request_for("hermite", 1e-3, 50.0);
  r.monitors.rmax = 10.0;
  integrate_cpu(cpu, r);
  integrate_cuda(gpu, r);
  EXPECT_EQ(gpu.status(0), kStatusEjected);
  EXPECT_EQ(gpu.status(1), kStatusOk);
  EXPECT_NEAR(gpu.time(0), cpu.time(0), 1e-9);
}

}  // namespace
}  // namespace swarmfit::testing
