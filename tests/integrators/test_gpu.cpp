// CUDA backend against the CPU backend (skipped without a device). Both backends run the same
// integrate_lanes(). By default nvcc contracts a*b+c into FMAs (the CPU is built without
// contraction) and the GPU takes 1/sqrt from rsqrt (1 ulp), the CPU divides; no fast-math. They
// agree to round-off: 1e-12 relative after 1000 fixed steps. The reproducible kernels
// (RunRequest::reproducible: nvcc -fmad=false, IEEE 1/sqrt) give the CPU's bits.
// Systems of BodyKernels<Scheme>::kFrom or more bodies run with a thread per body on the GPU
// (cuda_body_kernels.cuh), which gives bitwise what one thread per system gives.
// rkck_adaptive accepts or rejects a step by comparing an error estimate with the tolerance, and
// last-bit differences flip some of those decisions: its two paths agree to the tolerance.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

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
    for (int n : {3, 6, 9, 12, 16}) {
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

// Systems of which some stop early, one by each monitor: a close encounter (planets 1 and 2 side
// by side), an ejection (a planet beyond rmax), an unbound planet, a collision (radii), a
// non-finite state (a planet on the star); the step budget stops the rest.
Ensemble stopping_ensemble(long m, int n) {
  Ensemble e = mixed_ensemble(m, n);
  for (long s = 0; s < m; ++s)
    for (int i = 0; i < n; ++i) e.radius(s, i) = i == 0 ? 5e-3 : 1e-4;
  for (int d = 0; d < 3; ++d) e.position(3, 2, d) = e.position(3, 1, d) + (d == 0 ? 0.02 : 0.0);
  for (int d = 0; d < 3; ++d) e.velocity(3, 2, d) = e.velocity(3, 1, d);
  e.position(5, n - 1, 0) = 60.0;
  e.velocity(7, 1, 0) *= 3.0;
  e.velocity(7, 1, 1) *= 3.0;
  e.radius(9, 0) = 1.1;  // the star's surface reaches the inner planet's orbit
  for (int d = 0; d < 3; ++d) e.position(11, n - 1, d) = e.position(11, 0, d);
  return e;
}

// Equal bits, or both NaN: IEEE 754 leaves open which NaN operand's payload an operation passes
// on, and the compiler may commute operands, so a NaN's payload is not part of a result.
bool same(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0 || (std::isnan(a) && std::isnan(b)); }

// Positions, velocities, times, steps and statuses of two runs bitwise equal (the first system
// that differs is reported).
void expect_bitwise_equal(const Ensemble& a, const Ensemble& b, int n, const std::string& what, int (&stopped)[11]) {
  for (long s = 0; s < a.num_systems(); ++s) {
    stopped[a.status(s)]++;
    bool equal = a.status(s) == b.status(s) && same(a.time(s), b.time(s)) && a.steps(s) == b.steps(s);
    std::string bodies;
    for (int i = 0; i < n; ++i)
      for (int d = 0; d < 3; ++d)
        if (!same(a.position(s, i, d), b.position(s, i, d)) || !same(a.velocity(s, i, d), b.velocity(s, i, d))) {
          equal = false;
          bodies += " " + std::to_string(i);
        }
    if (!equal) {
      ADD_FAILURE() << what << " n=" << n << " system " << s << " statuses " << a.status(s) << " " << b.status(s)
                    << ", steps " << a.steps(s) << " " << b.steps(s) << ", bodies that differ:" << bodies;
      return;
    }
  }
}

struct LayoutCase {
  const char* integrator;
  MvsCoordinates coordinates;
  MvsSplitting splitting;
  int corrector;
  std::string name() const {
    std::string s = integrator;
    if (s == "mvs")
      s += std::string(coordinates == MvsCoordinates::kJacobi ? " jacobi" : " democratic") + " splitting " +
           std::to_string(static_cast<int>(splitting)) + " corrector " + std::to_string(corrector);
    return s;
  }
};

// Every integrator, and MVS in each coordinate system, splitting and corrector.
std::vector<LayoutCase> every_scheme() {
  const MvsCoordinates dh = MvsCoordinates::kDemocraticHeliocentric, jac = MvsCoordinates::kJacobi;
  return {
      {"hermite", dh, MvsSplitting::kJumpKickKepler, 0},
      {"hermite_adaptive", dh, MvsSplitting::kJumpKickKepler, 0},
      {"leapfrog", dh, MvsSplitting::kJumpKickKepler, 0},
      {"rkck", dh, MvsSplitting::kJumpKickKepler, 0},
      {"rkck_adaptive", dh, MvsSplitting::kJumpKickKepler, 0},
      {"mvs", dh, MvsSplitting::kJumpKickKepler, 0},
      {"mvs", dh, MvsSplitting::kKeplerJumpKick, 0},
      {"mvs", dh, MvsSplitting::kKickJumpKepler, 0},
      {"mvs", jac, MvsSplitting::kKeplerJumpKick, 0},
      {"mvs", jac, MvsSplitting::kKeplerJumpKick, 5},
      {"mvs", jac, MvsSplitting::kJumpKickKepler, 0},
      {"saba4", jac, MvsSplitting::kJumpKickKepler, 0},
  };
}

// Whether the scheme has a thread-per-body kernel (a scheme without one runs a thread per system).
bool has_body_kernel(const LayoutCase& c, int n) {
  return cuda_threads_per_body(find_integrator(c.integrator)->scheme, n, CudaLayout::kThreadPerBody, false);
}

// The stopping ensemble's run: every monitor armed, a step budget for the rest.
RunRequest stopping_request(const LayoutCase& c, int n, Ensemble& a, Ensemble& b) {
  // rmax beyond the outermost orbit (a = 1.4^(n-2)), and one planet beyond rmax.
  const double rmax = n > 10 ? 200.0 : 50.0;
  a.position(5, n - 1, 0) = b.position(5, n - 1, 0) = rmax + 10.0;
  RunRequest r = request_for(c.integrator, 1e-3, 2.0);
  r.step.time_step_factor = 0.01;
  r.step.mvs_coordinates = c.coordinates;
  r.step.mvs_splitting = c.splitting;
  r.step.mvs_corrector = c.corrector;
  r.monitors.close_approach = 0.5;
  r.monitors.rmax = rmax;
  r.monitors.stop_on_unbound = true;
  r.monitors.collisions = true;
  r.monitors.max_steps = c.integrator == std::string("rkck_adaptive") ? 10 : 150;
  return r;
}

TEST(Gpu, ThreadPerBodyEqualsThreadPerSystemBitwise) {
  SKIP_WITHOUT_GPU();
  const std::vector<LayoutCase> cases = every_scheme();
  for (const LayoutCase& c : cases) {
    for (int n : {3, 5, 8, 10, 16}) {
      if (!has_body_kernel(c, n)) continue;
      Ensemble per_system = stopping_ensemble(64, n), per_body = stopping_ensemble(64, n);
      RunRequest r = stopping_request(c, n, per_system, per_body);
      r.cuda_layout = CudaLayout::kThreadPerSystem;
      integrate_cuda(per_system, r);
      r.cuda_layout = CudaLayout::kThreadPerBody;
      integrate_cuda(per_body, r);
      int stopped[11] = {};
      expect_bitwise_equal(per_system, per_body, n, c.name(), stopped);
      // Every monitor fired somewhere, and the step budget stopped the rest. (The planet on the star
      // has an infinite force, which the fixed step turns into a non-finite state; the adaptive
      // step of that state is not a number either, and stops the system first.)
      for (int code : {kStatusCloseEncounter, kStatusEjected, kStatusCollision, kStatusStepBudget})
        EXPECT_GT(stopped[code], 0) << c.name() << " n=" << n << " status " << code;
      EXPECT_NE(per_system.status(11), kStatusOk) << c.name() << " n=" << n;
      EXPECT_NE(per_system.status(11), kStatusStepBudget) << c.name() << " n=" << n;
    }
  }
}

// The reproducible kernels give the CPU's bits: every scheme, with a thread per system and with a
// thread per body, monitors firing, adaptive steps (rkck_adaptive's accept/reject decisions too).
TEST(Gpu, ReproducibleKernelsGiveTheCpusBits) {
  SKIP_WITHOUT_GPU();
  for (const LayoutCase& c : every_scheme()) {
    for (int n : {3, 5, 8, 10, 16}) {
      for (const CudaLayout layout : {CudaLayout::kThreadPerSystem, CudaLayout::kThreadPerBody}) {
        if (layout == CudaLayout::kThreadPerSystem && n > 8 && has_body_kernel(c, n))
          continue;  // spills: slow, and the body layout's bits
        if (layout == CudaLayout::kThreadPerBody && !has_body_kernel(c, n)) continue;
        Ensemble cpu = stopping_ensemble(64, n), gpu = stopping_ensemble(64, n);
        RunRequest r = stopping_request(c, n, cpu, gpu);
        r.reproducible = true;
        r.cuda_layout = layout;
        integrate_cpu(cpu, r);
        integrate_cuda(gpu, r);
        int stopped[11] = {};
        expect_bitwise_equal(cpu, gpu, n,
                             c.name() + (layout == CudaLayout::kThreadPerBody ? " body" : " system") + " reproducible",
                             stopped);
      }
    }
  }
  // And over 1000 steps without monitors (mixed_ensemble, as AgreesWithCpuAfter1000Steps).
  for (const auto& info : integrator_registry()) {
    Ensemble cpu = mixed_ensemble(100, 4), gpu = mixed_ensemble(100, 4);
    RunRequest r = request_for(info.name, 1e-3, 1.0);
    r.step.time_step_factor = 0.01;
    r.reproducible = true;
    integrate_cpu(cpu, r);
    integrate_cuda(gpu, r);
    int stopped[11] = {};
    expect_bitwise_equal(cpu, gpu, 4, info.name + " 1000 steps reproducible", stopped);
  }
}

TEST(Gpu, ThreadPerBodyIsRefusedWithoutABodyKernel) {
  SKIP_WITHOUT_GPU();
  Ensemble e = mixed_ensemble(4, 3);
  RunRequest r = request_for("saba4", 1e-3, 0.01);
  r.cuda_layout = CudaLayout::kThreadPerBody;
  EXPECT_THROW(integrate_cuda(e, r), std::invalid_argument);
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
