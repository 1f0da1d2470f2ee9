// CPU and CUDA backends give the same statuses and the same log-likelihoods to round-off on the
// same parameter sets: the observers are one source for both. Skipped without a CUDA device.
// Round-off: the GPU's 1/r is rsqrt (1 ulp), its set-up's sin, cos, atan2 and cbrt differ from the
// host's by an ulp or two, and nvcc contracts FMAs where the CPU build does not, so the two backends start
// and step with last-bit differences. How far such differences move ln L is a property of the
// problem, not of the code: the tests measure it on the CPU alone, by moving every planet's period
// and mass by one ulp (`one_ulp`), and require the CPU-GPU differences to be no larger than that
// (median, 90th percentile and largest). For near-resonant pairs with ~100 transit times the
// CPU's own one-ulp spread reaches ~1e-9 relative in the median and ~1e-8 to 1e-4 in the tail,
// largest where ln L passes near 0 (bench/RESULTS.md, "CPU and GPU likelihoods: the problem's
// own conditioning"): a relative agreement of 1e-9 for every system would need bitwise-identical
// arithmetic. A real difference (a missed or shifted transit, a wrong RV) moves ln L by orders of
// magnitude more, which the per-system bound catches. With `reproducible` the GPU sets the systems
// up on the host and runs kernels with the CPU's arithmetic (nvcc -fmad=false, IEEE 1/sqrt), and
// every ln L and status is bitwise the CPU's. The crossing orbits (every 37th system of
// the synthetic population) are there for the statuses: those that are not stopped pass close
// to each other, which amplifies round-off exponentially (ln L ~ -1e9).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <iostream>
#include <map>

#include "model_test_support.hpp"
#include "swarmfit/integrators/backend.hpp"
#include "swarmfit/integrators/registry.hpp"
#include "swarmfit/models/cuda_setup.hpp"
#include "swarmfit/models/model_config.hpp"

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

// Every planet's period and mass moved by one ulp: what the problem itself does with last-bit
// differences of its inputs.
std::vector<double> one_ulp(const PlanetaryModel& model, std::vector<double> params) {
  const long n = static_cast<long>(params.size()) / model.num_parameters();
  for (long k = 0; k < n; ++k) {
    double* p = params.data() + k * model.num_parameters();
    for (int planet = 0; planet < model.num_planets(); ++planet) {
      for (int quantity : {0, 1}) {
        double& x = p[model.planet_parameter(planet, quantity)];
        x = std::nextafter(x, 2.0 * x);
      }
    }
  }
  return params;
}

struct Spread {
  double median = 0.0, p90 = 0.0, largest = 0.0;
};
Spread spread(std::vector<double> v) {
  Spread s;
  if (v.empty()) return s;
  std::sort(v.begin(), v.end());
  s.median = v[v.size() / 2];
  s.p90 = v[v.size() * 9 / 10];
  s.largest = v.back();
  return s;
}
std::ostream& operator<<(std::ostream& out, const Spread& s) {
  return out << "median " << s.median << ", p90 " << s.p90 << ", largest " << s.largest;
}

// The GPU's ln L against the CPU's: statuses equal; per system within 1e-9 |ln L| + `absolute`
// (1e-6 |ln L| for the systems `compared` leaves out); and over the compared systems the relative differences
// no larger than the CPU's own one-ulp spread (cpu_ulp) in the median, the 90th percentile and
// the largest (with a factor for the sampling noise of the two distributions).
void expect_agreement(const std::vector<double>& cpu, const std::vector<int>& cpu_status,
                      const std::vector<double>& cpu_ulp, const std::vector<double>& gpu,
                      const std::vector<int>& gpu_status, const std::vector<bool>& compared, double absolute,
                      const char* label) {
  const long n = static_cast<long>(cpu.size());
  std::vector<double> backends, conditioning;
  long finite = 0;
  for (long k = 0; k < n; ++k) {
    ASSERT_EQ(cpu_status[k], gpu_status[k]) << "system " << k;
    if (!std::isfinite(cpu[k])) {
      EXPECT_EQ(gpu[k], cpu[k]) << "system " << k;
      continue;
    }
    ++finite;
    EXPECT_NEAR(gpu[k], cpu[k], (compared[k] ? 1e-9 : 1e-6) * std::fabs(cpu[k]) + absolute) << "system " << k;
    if (!compared[k] || !std::isfinite(cpu_ulp[k])) continue;
    backends.push_back(std::fabs(gpu[k] - cpu[k]) / std::fabs(cpu[k]));
    conditioning.push_back(std::fabs(cpu_ulp[k] - cpu[k]) / std::fabs(cpu[k]));
  }
  EXPECT_GT(finite, n / 2);
  const Spread b = spread(backends), c = spread(conditioning);
  std::cout << label << ": relative ln L differences over " << backends.size() << " systems: CPU-GPU " << b
            << "; CPU one ulp " << c << "\n";
  EXPECT_LE(b.median, 4.0 * c.median + 1e-15) << label;
  EXPECT_LE(b.p90, 4.0 * c.p90 + 1e-15) << label;
  EXPECT_LE(b.largest, 10.0 * c.largest + 1e-15) << label;
}

// The reproducible GPU path against the CPU: every status equal, every ln L the same bits.
void expect_identical(const std::vector<double>& cpu, const std::vector<int>& cpu_status,
                      const std::vector<double>& gpu, const std::vector<int>& gpu_status, const char* label) {
  long differ = 0, first = -1, finite = 0;
  for (std::size_t k = 0; k < cpu.size(); ++k) {
    ASSERT_EQ(cpu_status[k], gpu_status[k]) << label << " system " << k;
    finite += std::isfinite(cpu[k]);
    if (std::memcmp(&cpu[k], &gpu[k], sizeof(double)) != 0) {
      if (first < 0) first = static_cast<long>(k);
      ++differ;
    }
  }
  EXPECT_EQ(differ, 0) << label << ": " << differ << " of " << cpu.size() << " ln L differ, the first system " << first
                       << ": CPU " << cpu[first < 0 ? 0 : first] << ", GPU " << gpu[first < 0 ? 0 : first];
  EXPECT_GT(finite, static_cast<long>(cpu.size()) / 2) << label;
  std::cout << label << ": reproducible GPU ln L bitwise the CPU's for " << cpu.size() - differ << " of " << cpu.size()
            << " systems (" << finite << " finite)\n";
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
    std::vector<double> cpu(n), gpu(n), cpu_ulp(n);
    std::vector<int> cpu_status(n), gpu_status(n), ulp_status(n);
    s.backend = "cpu";
    LikelihoodProblem(data, model, s, truth).evaluate(params.data(), n, cpu.data(), cpu_status.data());
    const std::vector<double> moved = one_ulp(model, params);
    LikelihoodProblem(data, model, s, truth).evaluate(moved.data(), n, cpu_ulp.data(), ulp_status.data());
    s.backend = "cuda";
    LikelihoodProblem(data, model, s, truth).evaluate(params.data(), n, gpu.data(), gpu_status.data());
    std::vector<bool> sane(n);
    for (long k = 0; k < n; ++k) sane[k] = k % 37 != 36;
    // Absolute gate 1e-4: ~1e-11 d of transit time at residuals of ~10 sigma (3e-4 d errors) on
    // ~100 transits; a missed or shifted transit moves ln L by >= 1.
    expect_agreement(cpu, cpu_status, cpu_ulp, gpu, gpu_status, sane, 1e-4, v.integrator);
    s.reproducible = true;
    LikelihoodProblem(data, model, s, truth).evaluate(params.data(), n, gpu.data(), gpu_status.data());
    expect_identical(cpu, cpu_status, gpu, gpu_status, v.integrator);
    if (std::string(v.integrator) != "mvs") continue;
    // A thread per body (likelihood_body_observer.cuh): the same agreement, and bitwise in the
    // reproducible build.
    s.cuda_layout = CudaLayout::kThreadPerBody;
    s.reproducible = false;
    LikelihoodProblem(data, model, s, truth).evaluate(params.data(), n, gpu.data(), gpu_status.data());
    expect_agreement(cpu, cpu_status, cpu_ulp, gpu, gpu_status, sane, 1e-4, "mvs, a thread per body");
    s.reproducible = true;
    LikelihoodProblem(data, model, s, truth).evaluate(params.data(), n, gpu.data(), gpu_status.data());
    expect_identical(cpu, cpu_status, gpu, gpu_status, "mvs, a thread per body");
  }
}

// The real Kepler-9 data (../shared/data, 30 RVs and 107 transit times) near the posterior mode,
// 2000 parameter sets spread over about the posterior's width, the default step: the population a
// sampler evaluates.
TEST(ObserversGpu, CpuAndCudaAgreeOnKepler9NearItsPosterior) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device";
  if (!testing::shared_data_present()) GTEST_SKIP() << "../shared/data is absent: the Kepler-9 data are needed";
  const ModelConfig c = load_model_config(testing::source_path("examples/kepler9.cfg"), {});
  const PlanetaryModel& model = *c.model;
  std::vector<double> mode = c.values;
  // Posterior medians of a short `swarmfit fit --config examples/kepler9.cfg optimize=1500` run.
  const std::pair<const char*, double> near_mode[] = {
      {"period_b", 19.22756793},    {"mass_b", 42.76870397},         {"secosw_b", 0.2548884166},
      {"sesinw_b", -0.01102312054}, {"tc_b", 2454977.248},           {"period_c", 39.03975255},
      {"mass_c", 29.45620524},      {"secosw_c", -0.2551476995},     {"sesinw_c", 0.05121381021},
      {"tc_c", 2454969.307},        {"offset_HARPS-N", 2334.862512}, {"jitter_HARPS-N", 0.84}};
  for (const auto& [name, value] : near_mode) {
    ASSERT_GE(model.index(name), 0) << name;
    mode[model.index(name)] = value;
  }
  const long n = 2000;
  std::vector<double> params;
  for (long k = 0; k < n; ++k) {
    std::vector<double> p = mode;
    const double u = std::sin(12.9898 * (k + 1)) * 0.5, w = std::cos(78.233 * (k + 1)) * 0.5;
    for (int planet = 0; planet < model.num_planets(); ++planet) {
      p[model.planet_parameter(planet, 1)] *= 1.0 + 0.04 * u;  // ~1 sigma in mass
      p[model.planet_parameter(planet, 0)] *= 1.0 + 1e-5 * w;  // ~1 sigma in period
      p[model.planet_parameter(planet, 4)] += 2e-3 * u * w;
    }
    params.insert(params.end(), p.begin(), p.end());
  }
  const std::vector<double> moved = one_ulp(model, params);
  for (const char* integrator : {"mvs", "hermite"}) {
    SCOPED_TRACE(integrator);
    LikelihoodSettings s = c.likelihood;
    s.integrator = integrator;
    if (std::string(integrator) != "mvs") s.time_step = 0.1;
    std::vector<double> cpu(n), gpu(n), cpu_ulp(n);
    std::vector<int> cpu_status(n), gpu_status(n), ulp_status(n);
    s.backend = "cpu";
    LikelihoodProblem(c.data, model, s, mode).evaluate(params.data(), n, cpu.data(), cpu_status.data());
    LikelihoodProblem(c.data, model, s, mode).evaluate(moved.data(), n, cpu_ulp.data(), ulp_status.data());
    s.backend = "cuda";
    LikelihoodProblem(c.data, model, s, mode).evaluate(params.data(), n, gpu.data(), gpu_status.data());
    long ok = 0;
    for (long k = 0; k < n; ++k) ok += cpu_status[k] == kStatusOk;
    EXPECT_EQ(ok, n);  // all sane
    // Absolute gate 1e-3: the CPU's own one-ulp spread reaches 4e-4 (mvs) and 8e-4 (hermite) on
    // the systems far out in the tails (|ln L| ~ 1e5); a transit time off by 1 s moves ln L by ~0.1.
    expect_agreement(cpu, cpu_status, cpu_ulp, gpu, gpu_status, std::vector<bool>(n, true), 1e-3, integrator);
    s.reproducible = true;
    LikelihoodProblem(c.data, model, s, mode).evaluate(params.data(), n, gpu.data(), gpu_status.data());
    expect_identical(cpu, cpu_status, gpu, gpu_status, integrator);
    if (std::string(integrator) != "mvs") continue;
    s.cuda_layout = CudaLayout::kThreadPerBody;  // the RVs from the star's thread, the transits from the planets'
    s.reproducible = false;
    LikelihoodProblem(c.data, model, s, mode).evaluate(params.data(), n, gpu.data(), gpu_status.data());
    expect_agreement(cpu, cpu_status, cpu_ulp, gpu, gpu_status, std::vector<bool>(n, true), 1e-3,
                     "mvs, a thread per body");
    s.reproducible = true;
    LikelihoodProblem(c.data, model, s, mode).evaluate(params.data(), n, gpu.data(), gpu_status.data());
    expect_identical(cpu, cpu_status, gpu, gpu_status, "mvs, a thread per body");
  }
}

// TRAPPIST-1 (../shared/data, 447 transit times of seven planets, Student-t): eight bodies, the
// fit a thread per body was built for. 512 parameter sets about the example's starting values,
// every 41st with c on an orbit through b's, every 43rd refused: the thread-per-body kernel agrees with the CPU
// as the thread-per-system kernel does, and is bitwise the CPU in the reproducible build.
TEST(ObserversGpu, ThreadPerBodyLikelihoodsOfTrappist1AreTheCpus) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device";
  if (!testing::shared_data_present()) GTEST_SKIP() << "../shared/data is absent: the TRAPPIST-1 data are needed";
  const ModelConfig c = load_model_config(testing::source_path("examples/trappist1.cfg"), {});
  const PlanetaryModel& model = *c.model;
  ASSERT_EQ(model.num_planets(), 7);
  const long n = 512;
  std::vector<double> params;
  for (long k = 0; k < n; ++k) {
    std::vector<double> p = c.values;
    const double u = std::sin(12.9898 * (k + 1)), w = std::cos(78.233 * (k + 1));
    for (int planet = 0; planet < model.num_planets(); ++planet) {
      p[model.planet_parameter(planet, 1)] *= 1.0 + 0.1 * u;                 // mass
      p[model.planet_parameter(planet, 0)] *= 1.0 + 2e-6 * w * (1 + k % 5);  // period: far ones miss transits
      p[model.planet_parameter(planet, 2)] += 0.002 * u * w;                 // e cos w
    }
    if (k % 41 == 40) p[model.planet_parameter(1, 2)] = 0.9;  // c through b's orbit each period
    if (k % 43 == 42) p[model.planet_parameter(0, 2)] = 1.2;  // e >= 1: refused at the set-up
    params.insert(params.end(), p.begin(), p.end());
  }
  const std::vector<double> moved = one_ulp(model, params);
  LikelihoodSettings s = c.likelihood;
  ASSERT_GT(s.student_nu, 0.0);
  std::vector<double> cpu(n), cpu_ulp(n), gpu(n);
  std::vector<int> cpu_status(n), ulp_status(n), gpu_status(n);
  s.backend = "cpu";
  LikelihoodProblem(c.data, model, s, c.values).evaluate(params.data(), n, cpu.data(), cpu_status.data());
  LikelihoodProblem(c.data, model, s, c.values).evaluate(moved.data(), n, cpu_ulp.data(), ulp_status.data());
  std::map<int, long> statuses;
  for (long k = 0; k < n; ++k) ++statuses[cpu_status[k]];
  for (const auto& [code, count] : statuses) std::cout << "status " << code << ": " << count << " systems\n";
  EXPECT_GT(statuses[kStatusOk], n / 2);
  EXPECT_LT(statuses[kStatusOk], n);  // statuses other than ok too
  s.backend = "cuda";
  for (const CudaLayout layout : {CudaLayout::kThreadPerSystem, CudaLayout::kThreadPerBody}) {
    const char* label =
        layout == CudaLayout::kThreadPerBody ? "TRAPPIST-1, a thread per body" : "TRAPPIST-1, a thread per system";
    s.cuda_layout = layout;
    s.reproducible = false;
    LikelihoodProblem(c.data, model, s, c.values).evaluate(params.data(), n, gpu.data(), gpu_status.data());
    // Absolute gate 1e-3, as for Kepler-9: 447 transits at residuals up to ~100 sigma.
    expect_agreement(cpu, cpu_status, cpu_ulp, gpu, gpu_status, std::vector<bool>(n, true), 1e-3, label);
    s.reproducible = true;
    LikelihoodProblem(c.data, model, s, c.values).evaluate(params.data(), n, gpu.data(), gpu_status.data());
    expect_identical(cpu, cpu_status, gpu, gpu_status, label);
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

// The GPU pipeline (LikelihoodPipeline) cuts a batch into slices set up on the host while the
// device integrates the slices before: the slicing must not change a bit of any result, and a
// second batch through the same (reused) buffers must give the first one's results.
TEST(ObserversGpu, SlicedBatchesGiveBitwiseTheResultsOfOneLaunch) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device";
  const long n = 20011;  // >= kSliceFrom: auto slicing; not a multiple of a block
  ASSERT_GE(n, CudaBatchPipeline::kSliceFrom);
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
      EXPECT_EQ(t.slices, slices == 0 ? CudaBatchPipeline::kDefaultSlices : slices);
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
