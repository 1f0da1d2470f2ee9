// The large-N engine's GPU forces against its CPU forces: the same pair terms summed in another
// order, so the two agree to round-off after a fixed number of block steps (a Plummer sphere is
// chaotic: differences grow by orders of magnitude per crossing time, so the comparison is short).
#include <gtest/gtest.h>

#include <cmath>

#include "swarmfit/nbody/engine.hpp"
#include "swarmfit/nbody/initial_conditions.hpp"

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
