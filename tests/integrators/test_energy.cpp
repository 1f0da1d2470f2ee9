// Energy conservation in the Swarm-NG Table 1 setup (Dindar et al. 2013, sec. 5.2.2): n = 3
// Swarm-NG systems (sec. 5.1), G = 1, with the step parameters of the Swarm-NG sample
// configurations. The published |dE/E| after 0.45e6 time units are the bounds; this is the short
// version (the full length is the benchmark `swarmfit bench --only energy`).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "test_support.hpp"

namespace swarmfit::testing {
namespace {

constexpr long kSystems = 16;

Ensemble swarm_ensemble(long systems) {
  Ensemble e(systems, 3);
  for (long s = 0; s < systems; ++s) set_swarm_system(e, s, {0.37 * s, 2.1 + 0.91 * s});
  return e;
}

std::vector<double> energy_errors(Ensemble& e, const RunRequest& r) {
  std::vector<double> e0(e.num_systems()), errors;
  for (long s = 0; s < e.num_systems(); ++s) e0[s] = e.energy(s, 1.0);
  integrate_cpu(e, r);
  for (long s = 0; s < e.num_systems(); ++s) {
    EXPECT_EQ(e.status(s), kStatusOk);
    errors.push_back(std::fabs((e.energy(s, 1.0) - e0[s]) / e0[s]));
  }
  return errors;
}

double worst(const std::vector<double>& v) { return *std::max_element(v.begin(), v.end()); }
double median(std::vector<double> v) {
  std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
  return v[v.size() / 2];
}

// The published figure is compared with the ensemble median; systems whose planets pass close
// to each other have larger errors, bounded here by ten times the published value.
void expect_within_published(const std::vector<double>& errors, double published) {
  EXPECT_LE(median(errors), published) << "worst " << worst(errors);
  EXPECT_LE(worst(errors), 10 * published) << "median " << median(errors);
}

TEST(Energy, HermiteAdaptiveWithinSwarmNgTable1) {
  Ensemble e = swarm_ensemble(kSystems);
  RunRequest r = request_for("hermite_adaptive", 1e-3, 200.0);
  r.step.time_step_factor = 0.017;  // Swarm-NG samples/Hermite_Adaptive.cfg
  r.step.min_time_step = 1e-5;
  r.step.max_time_step = 0.01;
  expect_within_published(energy_errors(e, r), 2.9e-11);
}

TEST(Energy, RkckAdaptiveWithinSwarmNgTable1) {
  Ensemble e = swarm_ensemble(4);
  RunRequest r = request_for("rkck_adaptive", 1e-4, 50.0);
  r.step.error_tolerance = 1e-13;
  r.step.min_time_step = 1e-4;
  r.step.max_time_step = 1e-3;
  const std::vector<double> errors = energy_errors(e, r);
  expect_within_published(errors, 3.7e-11);
  // Far below the published value at this length: round-off, ~5e-16 measured.
  EXPECT_LE(worst(errors), 5e-15) << "median " << median(errors);
}

TEST(Energy, RkckRoundOffIsCompensated) {
  // At error_tolerance 1e-13 the steps (h = 1e-3) are far below the truncation limit and round-off
  // sets the energy error: a plain x + h dx grew it to a median 4.2e-14 by T = 450 (4.0e-10 at the
  // full 4.5e5). With compensated summation of the state it stays at ~6e-16 here.
  Ensemble e = swarm_ensemble(kSystems);
  RunRequest r = request_for("rkck_adaptive", 1e-4, 450.0);
  r.step.error_tolerance = 1e-13;
  r.step.min_time_step = 1e-4;
  r.step.max_time_step = 1e-3;
  const std::vector<double> errors = energy_errors(e, r);
  EXPECT_LE(median(errors), 1e-14) << "worst " << worst(errors);
  EXPECT_LE(worst(errors), 1e-14) << "median " << median(errors);
}

TEST(Energy, MvsWithinSwarmNgTable1AndWithoutDrift) {
  // The error of a symplectic map oscillates about zero: the worst error over the last tenth of
  // a run is no larger than over the first tenth (a drifting scheme would grow 10x).
  for (MvsSplitting splitting : {MvsSplitting::kJumpKickKepler, MvsSplitting::kKeplerJumpKick}) {
    Ensemble e = swarm_ensemble(kSystems);
    std::vector<double> e0(kSystems);
    for (long s = 0; s < kSystems; ++s) e0[s] = e.energy(s, 1.0);
    RunRequest r = request_for("mvs", 1e-3, 0.0);
    r.step.mvs_splitting = splitting;
    double early = 0, late = 0;
    std::vector<double> final_errors(kSystems);
    const int segments = 50;
    const double t_end = 500.0;
    for (int k = 1; k <= segments; ++k) {
      r.destination_time = t_end * k / segments;
      integrate_cpu(e, r);
      for (long s = 0; s < kSystems; ++s) {
        const double err = std::fabs((e.energy(s, 1.0) - e0[s]) / e0[s]);
        if (k <= segments / 10) early = std::max(early, err);
        if (k > segments - segments / 10) late = std::max(late, err);
        final_errors[s] = err;
        ASSERT_EQ(e.status(s), kStatusOk);
      }
    }
    expect_within_published(final_errors, 5.0e-11);
    EXPECT_LE(late, 1.5 * early) << static_cast<int>(splitting) << " early " << early << " late " << late;
  }
}

TEST(Energy, NonSymplecticRungeKuttaDrifts) {
  // The drift test above can fail: Runge-Kutta (not symplectic) at a coarse step loses energy
  // secularly, so its late error exceeds its early error by far.
  Ensemble e = swarm_ensemble(4);
  std::vector<double> e0(4);
  for (long s = 0; s < 4; ++s) e0[s] = e.energy(s, 1.0);
  RunRequest r = request_for("rkck", 0.1, 0.0);
  double early = 0, late = 0;
  for (int k = 1; k <= 50; ++k) {
    r.destination_time = 500.0 * k / 50;
    integrate_cpu(e, r);
    for (long s = 0; s < 4; ++s) {
      const double err = std::fabs((e.energy(s, 1.0) - e0[s]) / e0[s]);
      if (k <= 5) early = std::max(early, err);
      if (k > 45) late = std::max(late, err);
    }
  }
  EXPECT_GT(late, 3.0 * early);
}

}  // namespace
}  // namespace swarmfit::testing
