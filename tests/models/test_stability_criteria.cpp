// Analytic stability criteria (models/stability_criteria.hpp): the critical AMD is the boundary of
// orbit crossing found by brute force, its limits, Gladman's 2 sqrt(3) Hill radii, and the Solar
// System's verdicts in Laskar & Petit (2017, sec. 6: inner planets AMD-unstable, outer stable).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "swarmfit/models/model_config.hpp"
#include "swarmfit/models/stability.hpp"
#include "swarmfit/models/stability_criteria.hpp"
#include "swarmfit/models/status.hpp"

namespace swarmfit {
namespace {

double deficit(double e) { return 1.0 - std::sqrt(1.0 - e * e); }

// Whether an AMD C (in units of Lambda') shared between the two orbits in any way lets them touch:
// the inner orbit takes deficit(e) gamma sqrt(alpha), the outer the rest; scan e finely.
bool can_touch(double alpha, double gamma, double c) {
  const double w = gamma * std::sqrt(alpha);
  for (int k = 0; k <= 200000; ++k) {
    const double e = k / 200000.0 * 0.999999;
    const double rest = c - w * deficit(e);
    if (rest < 0) break;
    const double e_outer = std::sqrt(std::max(0.0, 1.0 - (1.0 - std::min(rest, 1.0)) * (1.0 - std::min(rest, 1.0))));
    if (alpha * (1 + e) >= 1 - e_outer) return true;
  }
  return false;
}

TEST(StabilityCriteria, CriticalAmdIsTheBoundaryOfOrbitCrossing) {
  for (double alpha : {0.3, 0.6, 0.8, 0.95})
    for (double gamma : {0.01, 0.3, 1.0, 5.0}) {
      const double cc = amd_critical_collision(alpha, gamma);
      EXPECT_FALSE(can_touch(alpha, gamma, cc * 0.999)) << alpha << " " << gamma;
      EXPECT_TRUE(can_touch(alpha, gamma, cc * 1.001)) << alpha << " " << gamma;
    }
}

TEST(StabilityCriteria, CriticalAmdLimits) {
  // A massive inner planet keeps its circular orbit: the outer one must reach a' (1 - e') = a.
  EXPECT_NEAR(amd_critical_collision(0.5, 1e9), deficit(0.5), 1e-6);
  // A massless inner planet carries all the AMD: e = 1/alpha - 1 reaches the outer circular orbit,
  // which costs it gamma sqrt(alpha) deficit(e) -> 0 in units of Lambda'.
  EXPECT_NEAR(amd_critical_collision(0.8, 1e-12), 0.0, 1e-9);
}

TEST(StabilityCriteria, HillCriterionIsGladmansTwoSqrtThreeHillRadiiForCircularOrbits) {
  for (double epsilon : {1e-7, 1e-6, 1e-5}) {
    // The alpha where the Hill critical AMD crosses 0 (circular orbits on the boundary).
    double lo = 0.5, hi = 1.0 - 1e-12;
    for (int k = 0; k < 200; ++k) {
      const double mid = 0.5 * (lo + hi);
      (amd_critical_hill(mid, 1.0, epsilon) > 0 ? lo : hi) = mid;
    }
    const double gladman = 2 * std::sqrt(3.0) * std::cbrt(epsilon / 3);  // Delta / a, Gladman (1993) eq. 23
    // The small-mass limit: the next terms are O(eps^(1/3)) (measured 0.6%, 1.2%, 2.6%).
    EXPECT_NEAR((1 - lo) / gladman, 1.0, 1.5 * std::cbrt(epsilon)) << epsilon;
  }
}

TEST(StabilityCriteria, MmrOverlapLowersTheCriticalAmdOfClosePairsOnly) {
  const double epsilon = 2e-5;  // two ~3 Earth masses about a Sun
  EXPECT_LT(amd_critical_mmr(0.95, 1.0, epsilon), amd_critical_collision(0.95, 1.0));
  EXPECT_GT(amd_critical_mmr(0.5, 1.0, epsilon), amd_critical_collision(0.5, 1.0));
  // g = 0 at 1 - alpha = (2^14 r^2 / 3^6)^(1/7) eps^(2/7) = 1.465 eps^(2/7), the overlap of
  // first-order resonances (Wisdom 1980; Deck, Payne & Holman 2013): circular orbits closer than
  // that are MMR-unstable (critical AMD 0), just outside they have a small margin.
  EXPECT_EQ(amd_critical_mmr(1.0 - 1.4 * std::pow(epsilon, 2.0 / 7.0), 1.0, epsilon), 0.0);
  EXPECT_GT(amd_critical_mmr(1.0 - 1.5 * std::pow(epsilon, 2.0 / 7.0), 1.0, epsilon), 0.0);
}

TEST(StabilityCriteria, SolarSystemVerdictsOfLaskarAndPetit) {
  // J2000 mean elements (Standish 1992; e, i to the ecliptic, close enough to the invariable plane
  // for the verdicts), masses in solar masses. With the whole system's AMD (mostly Jupiter's and
  // Saturn's), the inner pairs are AMD-unstable and the outer ones stable (Laskar & Petit 2017,
  // sec. 6).
  const double deg = M_PI / 180;
  const std::vector<PlanetOrbit> planets = {
      {1.660e-7, 0.38710, 0.20563, 7.005 * deg},  {2.448e-6, 0.72333, 0.00677, 3.395 * deg},
      {3.040e-6, 1.00000, 0.01671, 0.0},          {3.227e-7, 1.52368, 0.09340, 1.850 * deg},
      {9.548e-4, 5.20260, 0.04849, 1.303 * deg},  {2.859e-4, 9.55491, 0.05551, 2.489 * deg},
      {4.366e-5, 19.21845, 0.04630, 0.773 * deg}, {5.151e-5, 30.11039, 0.00899, 1.770 * deg}};
  const CriteriaResult all = stability_criteria(1.0, planets);
  EXPECT_FALSE(all.amd_stable);
  for (int k = 0; k < 3; ++k) EXPECT_FALSE(all.pairs[k].amd_stable) << k;
  for (int k = 3; k < 7; ++k) EXPECT_TRUE(all.pairs[k].amd_stable) << k;
  const CriteriaResult outer = stability_criteria(1.0, {planets.begin() + 4, planets.end()});
  EXPECT_TRUE(outer.amd_stable);
  EXPECT_TRUE(outer.pairs[0].hill_stable);  // Jupiter-Saturn
  EXPECT_FALSE(all.crossing);
}

// Only mutual inclinations count: the same system seen edge-on (as a model's sky-frame elements
// give it) has the same AMD as face-on; tilting one orbit by 10 degrees adds Lambda (1 - cos 10).
TEST(StabilityCriteria, AmdIsTakenAboutTheTotalAngularMomentum) {
  const double deg = M_PI / 180;
  const CriteriaResult face = stability_criteria(1.0, {{1e-4, 1.0, 0.05}, {1e-4, 1.6, 0.02}});
  const CriteriaResult edge =
      stability_criteria(1.0, {{1e-4, 1.0, 0.05, 89.5 * deg, 0.3}, {1e-4, 1.6, 0.02, 89.5 * deg, 0.3}});
  EXPECT_NEAR(edge.pairs[0].beta, face.pairs[0].beta, 1e-12);
  const CriteriaResult tilted = stability_criteria(1.0, {{1e-4, 1.0, 0.0}, {1e-4, 1.6, 0.0, 10 * deg}});
  // Two equal-Lambda-ish circular orbits 10 degrees apart: C = L1 + L2 - |L1 + L2|.
  const double l1 = 1e-4, l2 = 1e-4 * std::sqrt(1.6);
  const double c = l1 + l2 - std::sqrt(l1 * l1 + l2 * l2 + 2 * l1 * l2 * std::cos(10 * deg));
  EXPECT_NEAR(tilted.pairs[0].beta, c / l2, 1e-12);
  EXPECT_TRUE(face.amd_stable);
}

TEST(StabilityCriteria, CrossingAndHillUnstablePairsAreFlagged) {
  const CriteriaResult crossing = stability_criteria(1.0, {{1e-3, 1.0, 0.3}, {1e-3, 1.5, 0.3}});
  EXPECT_TRUE(crossing.crossing);
  EXPECT_FALSE(crossing.amd_stable);
  // Circular orbits 2 mutual Hill radii apart: Hill unstable; 5 apart: stable (at eps = 2e-3 the
  // exact boundary is 4.03, 1.16 times Gladman's small-mass 2 sqrt 3).
  const double eps = 2e-3, rh = std::cbrt(eps / 3);
  EXPECT_FALSE(stability_criteria(1.0, {{1e-3, 1.0, 0.0}, {1e-3, 1.0 + 2 * rh, 0.0}}).hill_stable);
  EXPECT_TRUE(stability_criteria(1.0, {{1e-3, 1.0, 0.0}, {1e-3, 1.0 + 5 * rh, 0.0}}).hill_stable);
}

// A fit's stability constraint on the demo model (examples/demo): its own values pass every mode;
// an inner planet at e = 0.81, whose orbit crosses the outer one, fails every mode, gets -inf and
// kStatusUnstable, or with a penalty loses exactly the penalty and is marked kStatusUnstable all the same.
TEST(StabilityConstraint, RejectsACrossingProposalInEveryMode) {
  const ModelConfig c = load_model_config(std::string(SWARMFIT_SOURCE_DIR) + "/examples/demo/fit.cfg", {});
  const PlanetaryModel& model = *c.model;
  const int np = model.num_parameters();
  std::vector<double> sets = c.values;
  sets.insert(sets.end(), c.values.begin(), c.values.end());
  sets[np + model.planet_parameter(0, 2)] = 0.9;  // sqrt(e) cos w of planet b
  sets[np + model.planet_parameter(0, 3)] = 0.0;
  for (const std::string mode : {"amd", "hill", "integrate", "megno"}) {
    SCOPED_TRACE(mode);
    StabilityConstraint constraint;
    constraint.mode = mode;
    // Within 3 mutual Hill radii in 1e3 orbits; at the default limit (1) the crossing pair first
    // meets after 1e3 orbits (measured: caught at 1e4), ten times this test's cost.
    constraint.options.horizon_orbits = 1000;
    constraint.options.close_approach = 3.0;
    double lnl[2] = {-10.0, -20.0};
    int status[2] = {0, 0};
    EXPECT_EQ(apply_stability(model, constraint, sets.data(), 2, lnl, status), 1);
    EXPECT_EQ(lnl[0], -10.0);
    EXPECT_EQ(status[0], 0);
    EXPECT_EQ(lnl[1], -std::numeric_limits<double>::infinity());
    EXPECT_EQ(status[1], kStatusUnstable);
    constraint.penalty = 50;
    double soft[2] = {-10.0, -20.0};
    int soft_status[2] = {0, 0};
    apply_stability(model, constraint, sets.data(), 2, soft, soft_status);
    EXPECT_EQ(soft[1], -70.0);
    EXPECT_EQ(soft[0], -10.0);
    EXPECT_EQ(soft_status[0], 0);
    EXPECT_EQ(soft_status[1], kStatusUnstable);
  }
}

// A stability run stopped at any call (here: an exception from the progress callback, after 3,
// 9 and 15 of the 3 batches x 5 calls) and started again with the same checkpoint ends with
// bitwise the results of an uninterrupted run; a checkpoint of other sets is refused.
TEST(StabilityRun, ResumedFromItsCheckpointGivesTheSameResultsBitwise) {
  const ModelConfig c = load_model_config(std::string(SWARMFIT_SOURCE_DIR) + "/examples/demo/fit.cfg", {});
  const PlanetaryModel& model = *c.model;
  const int np = model.num_parameters();
  const long count = 20;
  std::vector<double> sets;
  for (long s = 0; s < count; ++s) {
    std::vector<double> v = c.values;
    v[model.planet_parameter(0, 2)] += 0.02 * s;  // sqrt(e) cos w of planet b: 20 different orbits
    sets.insert(sets.end(), v.begin(), v.end());
  }
  StabilityOptions o;
  o.horizon_orbits = 200;
  o.batch = 7;
  o.progress_calls = 5;
  o.threads = 1;
  const std::vector<SetStability> whole = assess_stability(model, sets, count, o);
  const std::string path = ::testing::TempDir() + "/stability_checkpoint.h5";
  std::remove(path.c_str());
  o.checkpoint = path;
  for (int stop_after : {3, 9, 15}) {
    int calls = 0;
    struct Stop {};
    try {
      assess_stability(model, sets, count, o, [&](double) {
        if (++calls == stop_after) throw Stop{};
      });
    } catch (const Stop&) {
    }
  }
  const std::vector<SetStability> resumed = assess_stability(model, sets, count, o);
  for (long s = 0; s < count; ++s) {
    EXPECT_EQ(resumed[s].status, whole[s].status) << s;
    EXPECT_EQ(resumed[s].time, whole[s].time) << s;
    EXPECT_EQ(resumed[s].chaos.megno, whole[s].chaos.megno) << s;
    EXPECT_EQ(resumed[s].chaos.lyapunov, whole[s].chaos.lyapunov) << s;
    EXPECT_EQ(resumed[s].chaos.closest_hill, whole[s].chaos.closest_hill) << s;
    EXPECT_TRUE(resumed[s].chaos.max_e == whole[s].chaos.max_e) << s;
  }
  EXPECT_FALSE(std::filesystem::exists(path));  // removed when the run completed
  std::vector<double> other = sets;
  other[0] *= 1.01;
  try {
    assess_stability(model, other, count, o, [](double done) {
      if (done > 0.5) throw std::runtime_error("stop");
    });
  } catch (const std::runtime_error&) {
  }
  ASSERT_TRUE(std::filesystem::exists(path));
  EXPECT_THROW(assess_stability(model, sets, count, o), std::invalid_argument);
  std::remove(path.c_str());
}

}  // namespace
}  // namespace swarmfit
