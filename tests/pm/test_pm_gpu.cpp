// The particle-mesh engine's GPU backend against its CPU backend (skipped without a device).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "swarmfit/pm/initial_conditions.hpp"
#include "swarmfit/pm/multigrid.hpp"
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

// The largest difference of two meshes over the largest value of the first.
double worst_mesh_difference(const std::vector<double>& cpu, const std::vector<double>& gpu) {
  EXPECT_EQ(cpu.size(), gpu.size());
  double top = 0, diff = 0;
  for (std::size_t c = 0; c < cpu.size() && c < gpu.size(); ++c) {
    top = std::max(top, std::fabs(cpu[c]));
    diff = std::max(diff, std::fabs(cpu[c] - gpu[c]));
  }
  return diff / top;
}

// A 32^3 mesh of side 8 about the origin (the test spheres' mesh).
PmSettings sphere_mesh(Boundary boundary, Assignment a, int order = 4) {
  PmSettings s;
  s.mesh = 32;
  s.box = 8.0;
  for (double& o : s.origin) o = -4.0;
  s.boundary = boundary;
  s.assignment = a;
  s.difference_order = order;
  return s;
}

std::string describe(const PmSettings& s) {
  return std::string(s.boundary == Boundary::periodic ? "periodic" : "isolated") + " scheme " +
         std::to_string(stencil_width(s.assignment)) + " order " + std::to_string(s.difference_order);
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
        const PmSettings s = sphere_mesh(boundary, a, order);
        const std::string what = describe(s);
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
    const PmSettings s = sphere_mesh(boundary, Assignment::tsc);
    const auto p = plummer<double>(20000, 4, 1.0, 1.0, 3.0);
    PmEngine<double> cpu(p, s, make_cpu_mesh_forces<double>(s)), gpu(p, s, make_cuda_mesh_forces<double>(s));
    for (int k = 0; k < 20; ++k) {
      cpu.step(0.02);
      gpu.step(0.02);
    }
    EXPECT_GE(gpu.forces().timings().brick_sorts, 1);  // (20000 particles: half a particle a cell or more)
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

// The GPU writes the masses straight into the FFT's input and keeps the potential in the FFT's
// buffer; the density and potential it reports for snapshots are still the CPU's, after a solve and
// after resident steps (the density deposited again from the device's positions; the potential
// from the brick-sorted deposit).
TEST(PmGpu, DensityAndPotentialMeshesAgreeWithTheCpu) {
  if (!have_gpu()) GTEST_SKIP() << "no CUDA device (or a build without CUDA)";
  for (Boundary boundary : {Boundary::isolated, Boundary::periodic})
    for (Assignment a : {Assignment::ngp, Assignment::cic, Assignment::tsc})
      for (int order : {0, 4}) {
        if (order == 0 && boundary == Boundary::periodic) continue;
        const PmSettings s = sphere_mesh(boundary, a, order);
        const std::string what = describe(s);
        auto p64 = plummer<double>(20000, 5, 1.0, 1.0, 3.0);
        auto p32 = plummer<float>(20000, 5, 1.0, 1.0, 3.0);
        auto q64 = p64;
        auto q32 = p32;
        std::vector<double> acc64;
        std::vector<float> acc32;
        auto cpu64 = make_cpu_mesh_forces<double>(s), gpu64 = make_cuda_mesh_forces<double>(s);
        auto cpu32 = make_cpu_mesh_forces<float>(s), gpu32 = make_cuda_mesh_forces<float>(s);
        cpu64->accelerations(p64, &acc64, nullptr);
        gpu64->accelerations(q64, &acc64, nullptr);
        cpu32->accelerations(p32, &acc32, nullptr);
        gpu32->accelerations(q32, &acc32, nullptr);
        EXPECT_LT(worst_mesh_difference(cpu64->density(), gpu64->density()), 1e-13) << what;
        EXPECT_LT(worst_mesh_difference(cpu64->potential(), gpu64->potential()), 1e-12) << what;
        EXPECT_LT(worst_mesh_difference(cpu32->density(), gpu32->density()), 1e-5) << what;
        EXPECT_LT(worst_mesh_difference(cpu32->potential(), gpu32->potential()), 2e-5) << what;

        // After resident steps: the meshes of the positions the last step's forces were solved at.
        PmEngine<double> cpu(plummer<double>(20000, 6, 1.0, 1.0, 3.0), s, make_cpu_mesh_forces<double>(s)),
            gpu(plummer<double>(20000, 6, 1.0, 1.0, 3.0), s, make_cuda_mesh_forces<double>(s));
        for (int k = 0; k < 5; ++k) {
          cpu.step(0.02);
          gpu.step(0.02);
        }
        EXPECT_GE(gpu.forces().timings().brick_sorts, 1) << what;
        EXPECT_LT(worst_mesh_difference(cpu.forces().density(), gpu.forces().density()), 1e-10) << what;
        EXPECT_LT(worst_mesh_difference(cpu.forces().potential(), gpu.forces().potential()), 1e-10) << what;
        // (the potential energy interpolated at the particles, from the solve diagnostics() adds)
        const PmDiagnostics dc = cpu.diagnostics(), dg = gpu.diagnostics();
        EXPECT_NEAR(dc.potential, dg.potential, 1e-10 * std::fabs(dc.potential)) << what;
      }
}

// The GPU keeps its particles sorted by bricks of cells and sorts them again once enough have left
// their bricks. Particles crossing a cell or two a step (a hot gas; isolated: many leave the mesh)
// stray, are re-sorted at most steps, and still end where the CPU engine puts them, in the host's
// order, also after a snapshot's copy mid-run. FP32 periodic only: an FP32 particle within round-off
// of an isolated mesh's edge may leave it on one backend and not the other.
template <class Real>
void hot_gas_follows_the_cpu(Boundary boundary, Assignment a, double tolerance) {
  const PmSettings s = sphere_mesh(boundary, a);
  auto p = plummer<Real>(40000, 7, 1.0, 1.0, 3.0);
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> u(-20.0, 20.0);  // up to 1.6 cells a step of 0.02
  for (int d = 0; d < 3; ++d)
    for (Real& v : p.v[d]) v = static_cast<Real>(u(rng));
  PmEngine<Real> cpu(p, s, make_cpu_mesh_forces<Real>(s)), gpu(p, s, make_cuda_mesh_forces<Real>(s));
  for (int k = 0; k < 30; ++k) {
    cpu.step(0.02);
    gpu.step(0.02);
    if (k == 14) (void)gpu.particles();  // a snapshot's copy mid-run (the order undone, then sorted again)
  }
  const std::string what = describe(s) + (sizeof(Real) == 4 ? " FP32" : " FP64");
  // (isolated: once most particles have left the mesh, the few strays left trigger no sort)
  EXPECT_GE(gpu.forces().timings().brick_sorts, boundary == Boundary::periodic ? 10 : 3) << what;
  double worst = 0;
  for (int d = 0; d < 3; ++d)
    for (long i = 0; i < p.size(); ++i)
      worst = std::max(worst, std::fabs(static_cast<double>(cpu.particles().x[d][i]) - gpu.particles().x[d][i]) +
                                  std::fabs(static_cast<double>(cpu.particles().v[d][i]) - gpu.particles().v[d][i]));
  EXPECT_LT(worst, tolerance) << what;
  std::printf("hot gas, %s: |dx| + |dv| at most %.3g, %ld sorts\n", what.c_str(), worst,
              gpu.forces().timings().brick_sorts);
  EXPECT_EQ(cpu.particles().status, gpu.particles().status) << what;
  if (boundary == Boundary::isolated) {
    long off = 0;
    for (int st : gpu.particles().status) off += st != 0;
    EXPECT_GT(off, 1000) << what;  // (the off-mesh bin was sorted too)
  }
}

TEST(PmGpu, ParticlesThatCrossBricksFollowTheCpu) {
  if (!have_gpu()) GTEST_SKIP() << "no CUDA device (or a build without CUDA)";
  for (Assignment a : {Assignment::cic, Assignment::tsc}) {
    for (Boundary boundary : {Boundary::periodic, Boundary::isolated})
      hot_gas_follows_the_cpu<double>(boundary, a, 1e-9);
    hot_gas_follows_the_cpu<float>(Boundary::periodic, a, 1e-4);  // (TSC measured 7e-6)
  }
}

// Multigrid on the GPU (multigrid_cuda.cu) runs the CPU's V-cycles kernel for kernel with the same
// per-cell arithmetic (multigrid.hpp), so the two stop after the same cycle with the same potential
// to round-off. The residual norms agree to 1e-3 of themselves, not to round-off: near convergence
// f and lap(phi) cancel to the tolerance, so the round-off of lap(phi) (other summation orders, the
// density's atomic adds) is that much larger a share of their difference. A V-cycle more or less, a
// sweep or a colour missing, or the colours swapped change it by far more. FP32 particles differ
// as the FFT's do (their density's float sums in another order). Against the GPU's own FFT solve:
// the discretisation difference PmPoisson.FftAndMultigridAgree accepts on the CPU. Isolated meshes
// are refused as on the CPU.
template <class Real>
void multigrid_follows_the_cpu(int mesh, double tolerance) {
  PmSettings s = sphere_mesh(Boundary::periodic, Assignment::cic);
  s.mesh = mesh;
  s.box = 4.0;
  for (double& o : s.origin) o = -2.0;
  s.solver = Solver::multigrid;
  auto p = plummer<Real>(50000, 9, 1.0, 0.5);
  auto q = p;
  auto cpu = make_cpu_mesh_forces<Real>(s), gpu = make_cuda_mesh_forces<Real>(s);
  std::vector<Real> ca, ga, cu, gu;
  cpu->accelerations(p, &ca, &cu);
  gpu->accelerations(q, &ga, &gu);
  const std::string what = std::to_string(mesh) + "^3" + (sizeof(Real) == 4 ? " FP32" : " FP64");
  const PmTimings &tc = cpu->timings(), &tg = gpu->timings();
  std::printf("multigrid %s: %d cycles (CPU %d), residual %.6g (CPU %.6g)\n", what.c_str(), tg.multigrid_cycles,
              tc.multigrid_cycles, tg.multigrid_residual, tc.multigrid_residual);
  EXPECT_GE(tc.multigrid_cycles, 3) << what;  // (a solve of several cycles, not one that stops at once)
  EXPECT_EQ(tg.multigrid_cycles, tc.multigrid_cycles) << what;
  EXPECT_LT(tg.multigrid_residual, s.multigrid_tolerance) << what;
  EXPECT_NEAR(tg.multigrid_residual, tc.multigrid_residual, 1e-3 * tc.multigrid_residual) << what;
  EXPECT_LT(worst_mesh_difference(cpu->potential(), gpu->potential()), tolerance) << what;
  double top = 0, diff = 0, utop = 0, udiff = 0;
  for (std::size_t i = 0; i < ca.size(); ++i) {
    top = std::max(top, std::fabs(static_cast<double>(ca[i])));
    diff = std::max(diff, std::fabs(static_cast<double>(ca[i]) - ga[i]));
  }
  for (std::size_t i = 0; i < cu.size(); ++i) {
    utop = std::max(utop, std::fabs(static_cast<double>(cu[i])));
    udiff = std::max(udiff, std::fabs(static_cast<double>(cu[i]) - gu[i]));
  }
  std::printf("  potential %.3g, accelerations %.3g, at the particles %.3g of the largest\n",
              worst_mesh_difference(cpu->potential(), gpu->potential()), diff / top, udiff / utop);
  EXPECT_LT(diff, tolerance * top) << what;
  EXPECT_LT(udiff, tolerance * utop) << what;
  EXPECT_EQ(p.status, q.status) << what;
}

TEST(PmGpu, MultigridFollowsTheCpusVCycles) {
  if (!have_gpu()) GTEST_SKIP() << "no CUDA device (or a build without CUDA)";
  for (int mesh : {32, 64}) {
    multigrid_follows_the_cpu<double>(mesh, 1e-12);
    multigrid_follows_the_cpu<float>(mesh, 2e-5);
  }
  {
    PmSettings s = sphere_mesh(Boundary::isolated, Assignment::cic);
    s.solver = Solver::multigrid;
    EXPECT_THROW(make_cpu_mesh_forces<double>(s), std::invalid_argument);
    EXPECT_THROW(make_cuda_mesh_forces<double>(s), std::invalid_argument);
  }
  // The GPU's multigrid against the GPU's FFT (PmPoisson.FftAndMultigridAgree's mesh, particles
  // and bounds), and the residual the GPU reports is the residual of the potential it returns.
  for (int mesh : {32, 64}) {
    PmSettings s = sphere_mesh(Boundary::periodic, Assignment::cic);
    s.mesh = mesh;
    s.box = 4.0;
    for (double& o : s.origin) o = -2.0;
    auto p = plummer<double>(50000, 9, 1.0, 0.5);
    auto q = p;
    auto fft = make_cuda_mesh_forces<double>(s);
    s.solver = Solver::multigrid;
    s.multigrid_tolerance = 1e-11;
    auto mg = make_cuda_mesh_forces<double>(s);
    std::vector<double> a1, a2;
    fft->accelerations(p, &a1, nullptr);
    mg->accelerations(q, &a2, nullptr);
    const std::string what = std::to_string(mesh) + "^3";
    EXPECT_LT(mg->timings().multigrid_residual, 1e-11) << what;
    EXPECT_LE(mg->timings().multigrid_cycles, 20) << what;
    const std::vector<double> phi1 = fft->potential(), phi2 = mg->potential();
    const double dphi = worst_mesh_difference(phi1, phi2);
    double amax = 0, adiff = 0;
    for (std::size_t i = 0; i < a1.size(); ++i) {
      amax = std::max(amax, std::fabs(a1[i]));
      adiff = std::max(adiff, std::fabs(a1[i] - a2[i]));
    }
    std::printf("GPU FFT against GPU multigrid, %s: potential %.3g, accelerations %.3g of the largest\n", what.c_str(),
                dphi, adiff / amax);
    EXPECT_LT(dphi, 1e-9) << what;
    EXPECT_LT(adiff, 1e-8 * amax) << what;
    // The reported residual: |f - lap(phi)| / |f| from the potential the GPU returned (its FP64
    // mesh), with f = 4 pi G (rho - mean rho) of the density the GPU reports.
    const std::vector<double> rho = mg->density();
    double mean = 0;
    for (double r : rho) mean += r;
    mean /= static_cast<double>(rho.size());
    std::vector<double> f(rho.size()), lap;
    for (std::size_t c = 0; c < rho.size(); ++c) f[c] = 4.0 * M_PI * s.G * (rho[c] - mean);
    periodic_laplacian(mesh, s.cell(), phi2, lap, 1);
    double fr = 0, ff = 0;
    for (std::size_t c = 0; c < f.size(); ++c) {
      fr += (f[c] - lap[c]) * (f[c] - lap[c]);
      ff += f[c] * f[c];
    }
    std::printf("  residual reported %.6g, recomputed %.6g\n", mg->timings().multigrid_residual, std::sqrt(fr / ff));
    EXPECT_NEAR(std::sqrt(fr / ff), mg->timings().multigrid_residual, 1e-2 * mg->timings().multigrid_residual) << what;
  }
  // Resident steps (kdk) solve with the same V-cycles: the CPU engine's positions after 10 steps.
  {
    PmSettings s = sphere_mesh(Boundary::periodic, Assignment::tsc);
    s.solver = Solver::multigrid;
    const auto p = plummer<double>(20000, 4, 1.0, 1.0, 3.0);
    PmEngine<double> cpu(p, s, make_cpu_mesh_forces<double>(s)), gpu(p, s, make_cuda_mesh_forces<double>(s));
    for (int k = 0; k < 10; ++k) {
      cpu.step(0.02);
      gpu.step(0.02);
    }
    EXPECT_EQ(gpu.forces().timings().multigrid_cycles, cpu.forces().timings().multigrid_cycles);
    EXPECT_GE(gpu.forces().timings().multigrid_cycles, 3);
    double worst = 0;
    for (int d = 0; d < 3; ++d)
      for (long i = 0; i < p.size(); ++i)
        worst = std::max(worst, std::fabs(cpu.particles().x[d][i] - gpu.particles().x[d][i]));
    EXPECT_LT(worst, 1e-10) << "resident multigrid";
  }
}
