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
#include <cstring>
#include <iostream>

#include "model_test_support.hpp"
#include "swarmfit/integrators/backend.hpp"
#include "swarmfit/integrators/registry.hpp"
#include "swarmfit/models/cuda_setup.hpp"

namespace swarmfit {
namespace {

struct Population {
  ModelOptions options;
  PlanetaryModel model;
  std::vector<double> truth;
  LikelihoodSettings settings;
  Dataset data;
  std::vector<double> params;
};

// A population around the truth, some broken (e >= 1 every 50th, a crossing orbit every 37th).
Population population(long n) {
  const double t_ref = 2455000.0;
  ModelOptions options;
  options.reference_epoch = t_ref;
  Population pop{options, PlanetaryModel({"b", "c"}, {"synthetic"}, options), {}, {}, {}, {}};
  pop.truth = {1.0,  10.0, 30.0, 0.2,         0.1,  t_ref + 3.0, 89.5, 0.0, 20.6,
               20.0, -0.1, 0.25, t_ref + 7.0, 89.2, 0.3,         5.0,  1.5};
  pop.settings.time_step = 0.5;
  pop.data = testing::synthetic_dataset(pop.model, pop.truth, pop.settings, t_ref + 600.0, {0, 1}, 60, 3e-4, 2.0);
  const PlanetaryModel& model = pop.model;
  for (long k = 0; k < n; ++k) {
    std::vector<double> p = pop.truth;
    p[model.planet_parameter(0, 1)] *= 1.0 + 1e-3 * (k % 17);
    p[model.planet_parameter(1, 4)] += 1e-4 * (k % 23);
    p[model.planet_parameter(0, 2)] += 1e-3 * (k % 7);
    if (k % 50 == 49) p[model.planet_parameter(0, 2)] = 1.1;
    if (k % 37 == 36) p[model.planet_parameter(1, 2)] = 0.9;
    pop.params.insert(pop.params.end(), p.begin(), p.end());
  }
  return pop;
}

TEST(ObserversGpu, CpuAndCudaLogLikelihoodsAgree) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device";
  const long n = 1000;
  const Population pop = population(n);
  const PlanetaryModel& model = pop.model;
  const std::vector<double>& truth = pop.truth;
  const std::vector<double>& params = pop.params;
  const Dataset& data = pop.data;
  const LikelihoodSettings& settings = pop.settings;
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

// The GPU sets up its batches itself (cuda_setup.hpp) from the same source as the host
// (system_setup.hpp): the initial conditions agree to the round-off of the math libraries (sin,
// cos, atan2, cbrt: a few ulp on the GPU), the statuses exactly, for every parameterisation.
TEST(ObserversGpu, DeviceSetUpMatchesTheHostsInitialConditions) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device";
  const long n = 1000;
  const Population pop = population(n);
  for (int variant = 0; variant < 2; ++variant) {
    SCOPED_TRACE(variant);
    ModelOptions options = pop.options;
    std::vector<double> params = pop.params;
    if (variant == 1) {  // astrocentric, K, mean anomaly, plain eccentricity vector
      options.frame = ElementFrame::kAstrocentric;
      options.mass_from_semi_amplitude = true;
      options.phase_from_mean_anomaly = true;
      options.plain_eccentricity_vector = true;
      for (long k = 0; k < n; ++k) {
        double* p = params.data() + k * pop.model.num_parameters();
        for (int planet = 0; planet < 2; ++planet) {
          p[pop.model.planet_parameter(planet, 1)] *= 0.3;                      // K, m/s
          p[pop.model.planet_parameter(planet, 4)] = 37.0 * planet + 0.01 * k;  // degrees
          if (k % 41 == 40) p[pop.model.planet_parameter(planet, 5)] = 0.0;     // sin i = 0 with K
        }
      }
    }
    const PlanetaryModel model({"b", "c"}, {"synthetic"}, options);
    Ensemble device(n, model.num_bodies());
    setup_systems_cuda(model.shape(), params.data(), n, device);
    long valid = 0;
    for (long k = 0; k < n; ++k) {
      double mass[3], pos[3][3], vel[3][3];
      const bool ok = model.initial_state(params.data() + k * model.num_parameters(), pos, vel, mass);
      ASSERT_EQ(device.status(k), ok ? kStatusOk : kStatusInvalidParameters) << "system " << k;
      if (!ok) continue;
      ++valid;
      for (int i = 0; i < 3; ++i) {
        EXPECT_NEAR(device.mass(k, i), mass[i], 1e-14 * mass[i]) << "system " << k << " body " << i;
        for (int d = 0; d < 3; ++d) {
          EXPECT_NEAR(device.position(k, i, d), pos[i][d], 1e-13) << "system " << k << " body " << i;  // AU
          EXPECT_NEAR(device.velocity(k, i, d), vel[i][d], 1e-15) << "system " << k << " body " << i;  // AU/day
        }
      }
    }
    EXPECT_GT(valid, n / 2);
    EXPECT_LT(valid, n);
  }
}

// The GPU pipeline (CudaObservedPipeline) cuts a batch into slices set up on the host while the
// device integrates the slices before: the slicing must not change a bit of any result, and a
// second batch through the same (reused) buffers must give the first one's results.
TEST(ObserversGpu, SlicedBatchesGiveBitwiseTheResultsOfOneLaunch) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device";
  const long n = 20011;  // >= kSliceFrom: auto slicing; not a multiple of a block
  ASSERT_GE(n, CudaObservedPipeline::kSliceFrom);
  const Population pop = population(n);
  LikelihoodSettings s = pop.settings;
  s.backend = "cuda";
  s.cuda_slices = 1;
  std::vector<double> whole(n);
  std::vector<int> whole_status(n);
  DeviceTiming one;
  LikelihoodProblem(pop.data, pop.model, s, pop.truth)
      .evaluate(pop.params.data(), n, whole.data(), whole_status.data(), nullptr, &one);
  EXPECT_EQ(one.slices, 1);
  long finite = 0;
  for (long k = 0; k < n; ++k) finite += std::isfinite(whole[k]);
  EXPECT_GT(finite, n / 2);
  EXPECT_LT(finite, n);  // the broken ones are -inf
  for (int slices : {0, 3, 8}) {
    SCOPED_TRACE(slices);
    s.cuda_slices = slices;
    const LikelihoodProblem problem(pop.data, pop.model, s, pop.truth);
    for (int round = 0; round < 2; ++round) {
      std::vector<double> sliced(n, 0.0);
      std::vector<int> sliced_status(n, -1);
      DeviceTiming t;
      problem.evaluate(pop.params.data(), n, sliced.data(), sliced_status.data(), nullptr, &t);
      EXPECT_EQ(t.slices, slices == 0 ? CudaObservedPipeline::kDefaultSlices : slices);
      for (long k = 0; k < n; ++k) {
        ASSERT_EQ(sliced_status[k], whole_status[k]) << "system " << k;
        ASSERT_EQ(std::memcmp(&sliced[k], &whole[k], sizeof(double)), 0)
            << "system " << k << ": " << sliced[k] << " vs " << whole[k];
      }
    }
    // A smaller batch through the same buffers (shrinking reuses them): its systems' results.
    const long m = 777;
    std::vector<double> few(m);
    std::vector<int> few_status(m);
    problem.evaluate(pop.params.data() + 5000 * pop.model.num_parameters(), m, few.data(), few_status.data());
    for (long k = 0; k < m; ++k) {
      ASSERT_EQ(few_status[k], whole_status[5000 + k]) << "system " << 5000 + k;
      ASSERT_EQ(std::memcmp(&few[k], &whole[5000 + k], sizeof(double)), 0) << "system " << 5000 + k;
    }
  }
}

}  // namespace
}  // namespace swarmfit
