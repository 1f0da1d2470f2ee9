// Agreement with REBOUND (fixtures written by tests/fixtures/make_rebound_fixtures.py with
// REBOUND 5.2.2): IAS15 as the accuracy reference over 100 inner orbits for 3, 5 and 9 bodies,
// and WHFast in democratic heliocentric coordinates step for step against our MVS.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <sstream>

#include "test_support.hpp"

namespace swarmfit::testing {
namespace {

const std::string kFixtures = std::string(SWARMFIT_SOURCE_DIR) + "/tests/fixtures/rebound/";

struct Case {
  std::string integrator;
  double G, dt, t_end;
};

std::map<std::string, Case> read_cases() {
  std::ifstream in(kFixtures + "cases.csv");
  std::map<std::string, Case> cases;
  std::string line;
  std::getline(in, line);
  while (std::getline(in, line)) {
    std::stringstream ss(line);
    std::string name, integrator, g, dt, t_end;
    std::getline(ss, name, ',');
    std::getline(ss, integrator, ',');
    std::getline(ss, g, ',');
    std::getline(ss, dt, ',');
    std::getline(ss, t_end, ',');
    cases[name] = Case{integrator, std::stod(g), std::stod(dt), std::stod(t_end)};
  }
  return cases;
}

// Largest position difference over the bodies, relative to the largest position.
double relative_position_difference(const Ensemble& a, const Ensemble& b) {
  double diff = 0, scale = 0;
  for (int i = 0; i < a.num_bodies(); ++i) {
    double d2 = 0, r2 = 0;
    for (int d = 0; d < 3; ++d) {
      d2 += std::pow(a.position(0, i, d) - b.position(0, i, d), 2);
      r2 += std::pow(b.position(0, i, d), 2);
    }
    diff = std::max(diff, std::sqrt(d2));
    scale = std::max(scale, std::sqrt(r2));
  }
  return diff / scale;
}

double run_against(const std::string& name, const std::string& integrator,
                   const std::function<void(RunRequest&)>& tune) {
  const auto cases = read_cases();
  const Case& c = cases.at(name);
  auto initial = read_fixture_system(kFixtures + name + "_initial.csv");
  auto expected = read_fixture_system(kFixtures + name + "_final.csv");
  RunRequest r = request_for(integrator, c.dt, c.t_end, c.G);
  tune(r);
  integrate_cpu(*initial, r);
  EXPECT_EQ(initial->status(0), kStatusOk);
  EXPECT_DOUBLE_EQ(initial->time(0), c.t_end);
  return relative_position_difference(*initial, *expected);
}

TEST(Rebound, AccurateSchemesAgreeWithIas15) {
  // 100 inner orbits. RKCK at a 1e-15 tolerance agrees to 1e-9. Hermite at h = 2 pi / 4000 sits
  // on its round-off floor (1.1e-9 for n = 3, and 1.35e-9 at half the step: the error no longer
  // shrinks), so its bound is 2e-9; at 2 pi / 2000 truncation shows (2.4e-9 for n = 3).
  // The IAS15 reference itself is good to ~1e-11 (its spread over tolerances and first steps).
  for (const char* name : {"ias15_n3", "ias15_n5", "ias15_n9"}) {
    const double hermite =
        run_against(name, "hermite", [](RunRequest& r) { r.step.time_step = 6.283185307179586 / 4000; });
    EXPECT_LT(hermite, 2e-9) << name;
    const double rkck = run_against(name, "rkck_adaptive", [](RunRequest& r) {
      r.step.time_step = 1e-3;
      r.step.error_tolerance = 1e-15;
    });
    EXPECT_LT(rkck, 1e-9) << name;
  }
}

TEST(Rebound, MvsMatchesWhfastDemocraticHeliocentricStepForStep) {
  // Same splitting as WHFast (Kepler, jump, kick), same step, same 1000 steps: only round-off
  // separates the two codes. A splitting of another order differs at O(dt^2) (~1e-8 here).
  for (const char* name : {"whfast_dh_n3", "whfast_dh_n5"}) {
    const double same =
        run_against(name, "mvs", [](RunRequest& r) { r.step.mvs_splitting = MvsSplitting::kKeplerJumpKick; });
    EXPECT_LT(same, 1e-11) << name;
    const double other =
        run_against(name, "mvs", [](RunRequest& r) { r.step.mvs_splitting = MvsSplitting::kJumpKickKepler; });
    EXPECT_GT(other, 1e3 * same) << name;
  }
}

}  // namespace
}  // namespace swarmfit::testing
