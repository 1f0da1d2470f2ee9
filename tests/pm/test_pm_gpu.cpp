// The particle-mesh engine's GPU backend against its CPU backend (skipped without a device).
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "swarmfit/pm/initial_conditions.hpp"
#include "swarmfit/pm/pm.hpp"

using namespace swarmfit::pm;

namespace {

bool have_gpu() {
  if (!pm_cuda_built()) return false;
  try {
    PmSettings s;
    s.mesh = 8;
    make_cuda_mesh_forces<double>(s);
    return true;
  } catch (const std::runtime_error&) {
    return false;
  }
}

// The largest difference of the GPU's accelerations from the CPU's, over the largest acceleration.
template <class Real>
double worst_difference(const PmSettings& s, const ParticleSet<Real>& start) {
  ParticleSet<Real> a = start, b = start;
  std::vector<Real> ca, ga;
  make_cpu_mesh_forces<Real>(s)->accelerations(a, &ca, nullptr);
  make_cuda_mesh_forces<Real>(s)->accelerations(b, &ga, nullptr);
  EXPECT_EQ(a.status, b.status);
  double top = 0, diff = 0;
  for (std::size_t i = 0; i < ca.size(); ++i) {
    top = std::max(top, std::fabs(static_cast<double>(ca[i])));
    diff = std::max(diff, std::fabs(static_cast<double>(ca[i]) - ga[i]));
  }
  return diff / top;
}

}  // namespace

TEST(PmGpu, AccelerationsAgreeWithTheCpu) {
  if (!have_gpu()) GTEST_SKIP() << "no CUDA device (or a build without CUDA)";
  const auto p64 = plummer<double>(30000, 3, 1.0, 1.0, 3.0);
  const auto p32 = plummer<float>(30000, 3, 1.0, 1.0, 3.0);
  for (Boundary boundary : {Boundary::isolated, Boundary::periodic})
    for (Assignment a : {Assignment::ngp, Assignment::cic, Assignment::tsc})
      for (int order : {0, 2, 4}) {
        if (order == 0 && boundary == Boundary::periodic) continue;
        PmSettings s;
        s.mesh = 32;
        s.box = 8.0;
        for (double& o : s.origin) o = -4.0;
        s.boundary = boundary;
        s.assignment = a;
        s.difference_order = order;
        const std::string what = std::string(boundary == Boundary::periodic ? "periodic" : "isolated") + " scheme " +
                                 std::to_string(stencil_width(a)) + " order " + std::to_string(order);
        // Atomic adds in another order: round-off of the sums.
        EXPECT_LT(worst_difference(s, p64), 1e-12) << what;
        EXPECT_LT(worst_difference(s, p32), 2e-5) << what;
      }
}

// The GPU engine keeps its particles on the device and steps them there: after 20 steps of a
// Plummer sphere they are where the CPU engine puts them, to round-off grown over the steps.
TEST(PmGpu, ResidentStepsFollowTheCpu) {
  if (!have_gpu()) GTEST_SKIP() << "no CUDA device (or a build without CUDA)";
  for (Boundary boundary : {Boundary::isolated, Boundary::periodic}) {
    PmSettings s;
    s.mesh = 32;
    s.box = 8.0;
    for (double& o : s.origin) o = -4.0;
    s.boundary = boundary;
    s.assignment = Assignment::tsc;
    const auto p = plummer<double>(20000, 4, 1.0, 1.0, 3.0);
    PmEngine<double> cpu(p, s, make_cpu_mesh_forces<double>(s)), gpu(p, s, make_cuda_mesh_forces<double>(s));
    for (int k = 0; k < 20; ++k) {
      cpu.step(0.02);
      gpu.step(0.02);
    }
    double worst = 0;
    for (int d = 0; d < 3; ++d)
      for (long i = 0; i < p.size(); ++i)
        worst = std::max(worst, std::fabs(cpu.particles().x[d][i] - gpu.particles().x[d][i]));
    EXPECT_LT(worst, 1e-10) << (boundary == Boundary::periodic ? "periodic" : "isolated");
    EXPECT_EQ(cpu.particles().status, gpu.particles().status);
    const PmDiagnostics a = cpu.diagnostics(), b = gpu.diagnostics();
    EXPECT_NEAR(a.total(), b.total(), 1e-10 * std::fabs(a.total()));
  }
}
