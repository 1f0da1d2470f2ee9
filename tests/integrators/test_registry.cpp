// Every registered integrator describes itself and runs a Swarm-NG system.
#include <gtest/gtest.h>

#include <set>

#include "test_support.hpp"

namespace swarmfit::testing {
namespace {

TEST(Registry, EntriesAreSelfDescribingAndUnique) {
  std::set<std::string> names;
  ASSERT_GE(integrator_registry().size(), 6u);
  for (const auto& info : integrator_registry()) {
    EXPECT_TRUE(names.insert(info.name).second) << info.name;
    EXPECT_FALSE(info.citation.empty()) << info.name;
    EXPECT_FALSE(info.description.empty()) << info.name;
    EXPECT_FALSE(info.parameters.empty()) << info.name;
    EXPECT_GE(info.order, 2) << info.name;
    EXPECT_EQ(find_integrator(info.name), &info);
  }
  EXPECT_EQ(find_integrator("no_such_integrator"), nullptr);
}

TEST(Registry, EveryIntegratorRunsEveryBodyCount) {
  for (const auto& info : integrator_registry()) {
    for (int n = kMinBodies; n <= kMaxBodies; ++n) {
      Ensemble e(3, n);
      for (long s = 0; s < 3; ++s) set_swarm_system(e, s, {0.1 * s, 1.0 + s, 2.0, 4.0, 5.5});
      const double e0 = e.energy(0, 1.0);
      RunRequest r = request_for(info.name, 1e-3, 0.1);
      r.step.time_step_factor = 0.005;
      r.step.error_tolerance = 1e-12;
      integrate_cpu(e, r);
      for (long s = 0; s < 3; ++s) {
        EXPECT_EQ(e.status(s), kStatusOk) << info.name << " n=" << n;
        EXPECT_DOUBLE_EQ(e.time(s), 0.1) << info.name << " n=" << n;
      }
      // 100 steps of 1e-3: measured <= 4.8e-12 for the second-order schemes and <= 1.5e-15 (round-off)
      // for the others; a fourth-order scheme that lost a term would show the second-order level.
      EXPECT_LT(std::fabs((e.energy(0, 1.0) - e0) / e0), info.order >= 4 ? 1e-13 : 5e-11) << info.name << " n=" << n;
    }
  }
}

}  // namespace
}  // namespace swarmfit::testing
