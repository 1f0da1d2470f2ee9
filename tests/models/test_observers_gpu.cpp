// CPU and CUDA backends give the same statuses and the same log-likelihoods to round-off on the
// same parameter sets: the observers are one source for both. Skipped without a CUDA device.
// Round-off: the GPU's 1/r is rsqrt (1 ulp) and nvcc and g++ contract FMAs differently, so the
// states drift apart by ~1e-13 over ~1e4 steps and transit times by ~1e-11 d. With the
// synthetic errors of 3e-4 d and residuals of up to ~10 sigma over ~100 transits that moves ln L
// by up to ~1e-4 (measured on an H100: median relative difference 3e-9, largest absolute 3.5e-5;
// bench/RESULTS.md). A real difference (a missed or shifted transit, a wrong RV) moves it by
// orders of magnitude more. The crossing orbits (every 37th system) are there for the statuses:
// those that are not stopped pass close to each other, which amplifies the round-off
// differences exponentially, so their ln L (~ -1e9) agree to 1e-6 relative, not 1e-9.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <iostream>

#include "model_test_support.hpp"
#include "swarmfit/integrators/backend.hpp"
#include "swarmfit/integrators/registry.hpp"

namespace swarmfit {
namespace {

TEST(ObserversGpu, CpuAndCudaLogLikelihoodsAgree) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device";
  const double t_ref = 2455000.0;
  ModelOptions options;
  options.reference_epoch = t_ref;
  const PlanetaryModel model({"b", "c"}, {"synthetic"}, options);
  const std::vector<double> truth = {1.0,  10.0, 30.0, 0.2,         0.1,  t_ref + 3.0, 89.5, 0.0, 20.6,
                                     20.0, -0.1, 0.25, t_ref + 7.0, 89.2, 0.3,         5.0,  1.5};
  LikelihoodSettings settings;
  settings.time_step = 0.5;
  const Dataset data = testing::synthetic_dataset(model, truth, settings, t_ref + 600.0, {0, 1}, 60, 3e-4, 2.0);
  // A population around the truth, some broken (e >= 1 every 50th, a crossing orbit every 37th).
  const long n = 1000;
  std::vector<double> params;
  for (long k = 0; k < n; ++k) {
    std::vector<double> p = truth;
    p[model.planet_parameter(0, 1)] *= 1.0 + 1e-3 * (k % 17);
    p[model.planet_parameter(1, 4)] += 1e-4 * (k % 23);
    p[model.planet_parameter(0, 2)] += 1e-3 * (k % 7);
    if (k % 50 == 49) p[model.planet_parameter(0, 2)] = 1.1;
    if (k % 37 == 36) p[model.planet_parameter(1, 2)] = 0.9;
    params.insert(params.end(), p.begin(), p.end());
  }
  struct Variant {
    const char* integrator;
    bool marginalize;
    double nu;
  };
  for (const Variant v : {Variant{"mvs", false, 0.0}, Variant{"mvs", true, 4.0}, Variant{"hermite", false, 0.0},
                          Variant{"rkck", false, 0.0}, Variant{"leapfrog", false, 0.0}}) {
    SCOPED_TRACE(v.integrator);
    LikelihoodSettings s = settings;
    s.integrator = v.integrator;
    s.marginalize_offsets = v.marginalize;
    s.student_nu = v.nu;
    if (std::string(v.integrator) != "mvs") s.time_step = 0.05;
    std::vector<double> cpu(n), gpu(n);
    std::vector<int> cpu_status(n), gpu_status(n);
    s.backend = "cpu";
    LikelihoodProblem(data, model, s, truth).evaluate(params.data(), n, cpu.data(), cpu_status.data());
    s.backend = "cuda";
    LikelihoodProblem(data, model, s, truth).evaluate(params.data(), n, gpu.data(), gpu_status.data());
    int finite = 0;
    std::vector<double> relative;
    for (long k = 0; k < n; ++k) {
      ASSERT_EQ(cpu_status[k], gpu_status[k]) << "system " << k;
      if (std::isfinite(cpu[k])) {
        ++finite;
        const double relative_tolerance = k % 37 == 36 ? 1e-6 : 1e-9;
        EXPECT_NEAR(gpu[k], cpu[k], relative_tolerance * std::fabs(cpu[k]) + 1e-4) << "system " << k;
        relative.push_back(std::fabs(gpu[k] - cpu[k]) / std::fabs(cpu[k]));
      } else {
        EXPECT_EQ(gpu[k], cpu[k]);
      }
    }
    EXPECT_GT(finite, n / 2);
    std::sort(relative.begin(), relative.end());
    if (!relative.empty()) {
      EXPECT_LT(relative[relative.size() / 2], 1e-8) << "median relative difference";
      std::cout << v.integrator << ": median relative difference " << relative[relative.size() / 2] << ", largest "
                << relative.back() << "\n";
    }
  }
}

}  // namespace
}  // namespace swarmfit
