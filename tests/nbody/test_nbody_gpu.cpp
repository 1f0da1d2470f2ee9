// The large-N engine's GPU forces against its CPU forces: the same pair terms summed in another
// order, so the two agree to round-off after a fixed number of block steps (a Plummer sphere is
// chaotic: differences grow by orders of magnitude per crossing time, so the comparison is short).
#include <gtest/gtest.h>

#include <cmath>

#include "backend_steps.hpp"
#include "swarmfit/nbody/engine.hpp"
#include "swarmfit/nbody/initial_conditions.hpp"
#include "swarmfit/nbody/particles.hpp"
#include "tape_run.hpp"

namespace swarmfit::nbody {
namespace {

bool have_gpu() {
  if (!nbody_cuda_built()) return false;
  try {
    make_cuda_backend();
    return true;
  } catch (const std::exception&) {
    return false;
  }
}

// One force pass of every body (predicted, with accelerations, as the block steps call it): the
// GPU's pair kernel (a single-precision rsqrt estimate refined in FP64, fused sums) against the
// CPU's 1 / sqrt, term by term. Sums of 4,096 terms in different orders agree to ~1e-14 of their
// size; an unrefined or once-refined rsqrt would be off by 1e-7 or 1e-13.
TEST(NbodyGpu, OneForcePassAgreesWithTheCpuToRoundOff) {
  if (!have_gpu()) GTEST_SKIP() << "no CUDA device (or a build without CUDA)";
  const long n = 4096;
  Bodies b = plummer_sphere(n, 5);
  std::vector<double> gm(n, 1.0 / n), time(n, 0.0);
  for (long i = 0; i < n; ++i)
    for (int d = 0; d < 3; ++d) b.state[i].a[d] = -b.state[i].x[d];  // a field for the snap's a_ij
  IBatch batch;
  for (long i = 0; i < n; ++i) {
    batch.index.push_back(static_cast<int>(i));
    for (int d = 0; d < 3; ++d) {
      batch.x.push_back(b.state[i].x[d]);
      batch.v.push_back(b.state[i].v[d]);
      batch.a.push_back(b.state[i].a[d]);
    }
  }
  auto cpu = make_cpu_backend(), gpu = make_cuda_backend();
  cpu->load(b.state, time, gm);
  gpu->load(b.state, time, gm);
  for (int order : {4, 6})
    for (bool potential : {false, true})
      for (double eps : {0.0, 1e-3}) {
        batch.potential = potential;
        ForceResult c, g;
        c.resize(static_cast<int>(n), order);
        g.resize(static_cast<int>(n), order);
        cpu->forces(0.0, order, eps * eps, JSlice{}, batch, c);
        gpu->forces(0.0, order, eps * eps, JSlice{}, batch, g);
        double worst[4] = {0, 0, 0, 0};
        for (long i = 0; i < n; ++i) {
          const int k = static_cast<int>(i);
          const double* terms[3] = {c.acc(k), c.jerk(k), order == 6 ? c.snap(k) : nullptr};
          const double* gterms[3] = {g.acc(k), g.jerk(k), order == 6 ? g.snap(k) : nullptr};
          for (int t = 0; t < (order == 6 ? 3 : 2); ++t) {
            const double* x = terms[t];
            const double* y = gterms[t];
            const double size = std::sqrt(x[0] * x[0] + x[1] * x[1] + x[2] * x[2]);
            for (int d = 0; d < 3; ++d) worst[t] = std::max(worst[t], std::fabs(x[d] - y[d]) / size);
          }
          if (potential)
            worst[3] = std::max(worst[3], std::fabs(c.pot(k) - g.pot(k)) / c.pot(k));
          else
            EXPECT_EQ(g.pot(k), 0.0);
        }
        const std::string what = "order " + std::to_string(order) + (potential ? " with" : " without") +
                                 " potential, eps " + std::to_string(eps);
        EXPECT_LT(worst[0], 1e-13) << what;
        EXPECT_LT(worst[1], 1e-12) << what;  // jerk and snap: differences of larger terms
        if (order == 6) EXPECT_LT(worst[2], 1e-11) << what;
        EXPECT_LT(worst[3], 1e-14) << what;
      }
}

// Test particles through the recorded field: the GPU's threads against the CPU's, the same
// advance_particle (nvcc contracts multiply-adds, so round-off apart), over 200 years of the giant
// planets and 500 belt particles, orders 4 and 6.
TEST(NbodyGpu, TapeParticlesAgreeWithTheCpu) {
  if (!have_gpu()) GTEST_SKIP() << "no CUDA device (or a build without CUDA)";
  for (int order : {4, 6}) {
    const NbodySettings s = giants_settings(order);
    const Bodies start = solar_system(500, 9, true);
    const ParticleRules rules = giants_rules(s);
    auto cpu = make_cpu_particles(), gpu = make_cuda_particles();
    const Particles c = tape_run(start, s, 200.0, 50.0, *cpu, rules);
    const Particles g = tape_run(start, s, 200.0, 50.0, *gpu, rules);
    double worst = 0;
    for (long i = 0; i < c.size(); ++i) {
      ASSERT_EQ(c.status[i], g.status[i]) << i;
      ASSERT_EQ(c.steps[i], g.steps[i]) << i;
      for (int d = 0; d < 3; ++d) worst = std::max(worst, std::fabs(c.state[i].x[d] - g.state[i].x[d]) / 40.0);
    }
    EXPECT_LT(worst, 1e-11) << "order " << order;
  }
}

// The GPU backend's own steps (predictor and corrector on the device, built without contraction)
// against the engine's host steps with the same GPU forces: bitwise.
TEST(NbodyGpu, BackendStepsEqualHostStepsBitwise) {
  if (!have_gpu()) GTEST_SKIP() << "no CUDA device (or a build without CUDA)";
  expect_backend_steps_equal_host_steps([] { return make_cuda_backend(); });
}

TEST(NbodyGpu, ForcesAgreeWithTheCpusToRoundOff) {
  if (!have_gpu()) GTEST_SKIP() << "no CUDA device (or a build without CUDA)";
  // Every active-set size from all bodies to a few, test particles too.
  Bodies b = plummer_sphere(3000, 11);
  append_test_particles(b, 500);
  for (long i = 3000; i < 3500; ++i)
    for (int d = 0; d < 3; ++d) {
      b.state[i].x[d] = 0.7 * b.state[i - 3000].x[d];
      b.state[i].v[d] = b.state[i - 3000].v[d];
    }
  for (int order : {4, 6}) {
    NbodySettings s;
    s.order = order;
    s.softening = 0.01;
    BlockHermite cpu(b, s, make_cpu_backend()), gpu(b, s, make_cuda_backend());
    cpu.initialise();
    gpu.initialise();
    for (int k = 0; k < 64; ++k) {
      cpu.step();
      gpu.step();
    }
    ASSERT_EQ(cpu.time(), gpu.time()) << "order " << order;
    double worst = 0;
    for (long i = 0; i < b.size(); ++i)
      for (int d = 0; d < 3; ++d) {
        const double scale = 1.0 + std::fabs(cpu.bodies().state[i].x[d]);
        worst = std::max(worst, std::fabs(cpu.bodies().state[i].x[d] - gpu.bodies().state[i].x[d]) / scale);
      }
    EXPECT_LT(worst, 1e-11) << "order " << order;
    // On to a time every body reaches (the energy needs them together).
    cpu.run_until(0.125);
    gpu.run_until(0.125);
    const Energy ec = cpu.energy(), eg = gpu.energy();
    EXPECT_NEAR(ec.total(), eg.total(), 1e-12 * std::fabs(ec.total())) << "order " << order;
  }
}

}  // namespace
}  // namespace swarmfit::nbody
