// Chaos indicators on tangent lanes (models/chaos_observer.hpp, integrators/dual.hpp): the tangent
// is the derivative of each scheme's map, the trajectory is bitwise that of a plain run, MEGNO
// tends to 2 for a quasi-periodic system and grows for a chaotic one, and copies of a system give
// bitwise one system's indicators.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "swarmfit/models/chaos.hpp"
#include "test_support.hpp"

namespace swarmfit {
namespace {

using testing::request_for;

// Star (m = 1) and two planets on coplanar orbits at a = 1 and a2 with eccentricity e2, G = 1.
void set_two_planets(Ensemble& e, long s, double m1, double m2, double a2, double e2) {
  const double m0 = 1.0;
  e.mass(s, 0) = m0;
  e.mass(s, 1) = m1;
  e.mass(s, 2) = m2;
  for (int i = 0; i < 3; ++i)
    for (int d = 0; d < 3; ++d) e.position(s, i, d) = e.velocity(s, i, d) = 0.0;
  e.position(s, 1, 0) = 1.0;
  e.velocity(s, 1, 1) = std::sqrt(m0 + m1);
  // Planet 2 at apocentre of its orbit about the star.
  const double r2 = a2 * (1 + e2);
  e.position(s, 2, 0) = -r2;
  e.velocity(s, 2, 1) = -std::sqrt((m0 + m2) * (1 - e2) / r2);
  // Barycentric frame.
  for (int d = 0; d < 3; ++d) {
    double p = 0, v = 0, m = 0;
    for (int i = 0; i < 3; ++i) {
      p += e.mass(s, i) * e.position(s, i, d);
      v += e.mass(s, i) * e.velocity(s, i, d);
      m += e.mass(s, i);
    }
    for (int i = 0; i < 3; ++i) {
      e.position(s, i, d) -= p / m;
      e.velocity(s, i, d) -= v / m;
    }
  }
}

const double kTwoPi = 6.283185307179586;

// The tangent after a run is the derivative of the run's map along the initial tangent: central
// differences of two plain runs from x0 +- eps delta0 agree to O(eps^2) and round-off.
TEST(Chaos, TangentIsTheDerivativeOfEachSchemesMap) {
  for (const IntegratorInfo& info : integrator_registry()) {
    SCOPED_TRACE(info.name);
    const double h = kTwoPi / 40, t_end = 60 * h;
    RunRequest r = request_for(info.name, h, t_end);
    r.step.error_tolerance = 1e-10;
    Ensemble base(1, 3);
    set_two_planets(base, 0, 1e-3, 1e-3, 1.6, 0.1);
    ChaosState chaos(base, {});
    const std::vector<double> delta0 = chaos.tangent(0);
    Ensemble e = base;
    integrate_chaos(e, chaos, r, "cpu");
    ASSERT_EQ(e.status(0), 0);
    const std::vector<double> tangent = chaos.tangent(0);

    const double eps = 1e-6;
    Ensemble plus = base, minus = base;
    for (int i = 0; i < 3; ++i)
      for (int d = 0; d < 3; ++d) {
        plus.position(0, i, d) += eps * delta0[6 * i + d];
        plus.velocity(0, i, d) += eps * delta0[6 * i + 3 + d];
        minus.position(0, i, d) -= eps * delta0[6 * i + d];
        minus.velocity(0, i, d) -= eps * delta0[6 * i + 3 + d];
      }
    integrate_cpu(plus, r);
    integrate_cpu(minus, r);
    double scale = 0, worst = 0;
    for (int i = 0; i < 3; ++i)
      for (int d = 0; d < 3; ++d) {
        const double fx = (plus.position(0, i, d) - minus.position(0, i, d)) / (2 * eps);
        const double fv = (plus.velocity(0, i, d) - minus.velocity(0, i, d)) / (2 * eps);
        scale = std::max({scale, std::fabs(tangent[6 * i + d]), std::fabs(tangent[6 * i + 3 + d])});
        worst = std::max({worst, std::fabs(fx - tangent[6 * i + d]), std::fabs(fv - tangent[6 * i + 3 + d])});
      }
    EXPECT_GT(scale, 0.1);
    EXPECT_LT(worst / scale, 1e-7) << "worst " << worst << " of " << scale;
  }
}

// Tangent lanes carry the values through the same arithmetic: the state is bitwise that of a plain run.
TEST(Chaos, TrajectoryIsBitwiseThatOfAPlainRun) {
  for (const IntegratorInfo& info : integrator_registry()) {
    SCOPED_TRACE(info.name);
    const double h = kTwoPi / 30;
    RunRequest r = request_for(info.name, h, 200 * h);
    Ensemble a(5, 3);
    for (long s = 0; s < 5; ++s) set_two_planets(a, s, 1e-3, 2e-3 * (s + 1) / 5, 1.7 + 0.05 * s, 0.05);
    Ensemble b = a;
    ChaosState chaos(a);
    integrate_chaos(a, chaos, r, "cpu");
    integrate_cpu(b, r);
    EXPECT_TRUE(a.body_data() == b.body_data());
    EXPECT_TRUE(a.clock_data() == b.clock_data());
  }
}

// Copies of a system, spread over SIMD lanes and chunks, give bitwise the indicators of one system alone.
TEST(Chaos, CopiesOfOneSystemGiveOneSystemsIndicators) {
  const double h = kTwoPi / 30;
  RunRequest r = request_for("saba4", h, 300 * h);
  r.threads = 2;
  Ensemble one(1, 3);
  set_two_planets(one, 0, 1e-3, 1e-3, 1.5, 0.1);
  ChaosState c1(one);
  integrate_chaos(one, c1, r, "cpu");
  const long m = 37;
  Ensemble many(m, 3);
  for (long s = 0; s < m; ++s) set_two_planets(many, s, 1e-3, 1e-3, 1.5, 0.1);
  ChaosState cm(many);
  integrate_chaos(many, cm, r, "cpu");
  for (long s = 0; s < m; ++s)
    for (int f = 0; f < kChaosFields; ++f)
      ASSERT_EQ(cm.field(f, s), c1.field(f, 0)) << "system " << s << " field " << f;
}

// MEGNO of a quasi-periodic system (well separated planets) tends to 2; of a chaotic one (the
// close pair of the REBOUND fixtures) it grows about linearly, as lambda t / 2, and the slope of
// <Y> is about half the finite-time Lyapunov exponent.
TEST(Chaos, MegnoTendsToTwoForQuasiPeriodicAndGrowsForChaotic) {
  const double h = kTwoPi / 40;
  Ensemble quiet(1, 3);
  set_two_planets(quiet, 0, 1e-3, 1e-3, 2.0, 0.05);
  ChaosState cq(quiet);
  integrate_chaos(quiet, cq, request_for("saba4", h, 3000 * kTwoPi), "cpu");
  EXPECT_EQ(quiet.status(0), 0);
  EXPECT_NEAR(cq.indicators(0).megno, 2.0, 0.01);

  std::unique_ptr<Ensemble> e =
      testing::read_fixture_system(std::string(SWARMFIT_SOURCE_DIR) + "/tests/fixtures/megno/chaotic_initial.csv");
  ChaosState c(*e);
  std::vector<double> megno;
  for (double orbits : {1000.0, 2000.0, 3000.0}) {
    integrate_chaos(*e, c, request_for("saba4", h, orbits * kTwoPi), "cpu");
    ASSERT_EQ(e->status(0), 0);
    megno.push_back(c.indicators(0).megno);
  }
  const ChaosIndicators chaotic = c.indicators(0);
  std::printf("chaotic: MEGNO %.2f %.2f %.2f, slope %.3g, finite-time lambda %.3g\n", megno[0], megno[1], megno[2],
              chaotic.megno_slope, chaotic.lyapunov);
  EXPECT_GT(megno[0], 10.0);
  EXPECT_GT(megno[1], 1.5 * megno[0]);
  EXPECT_GT(megno[2], 1.2 * megno[1]);
  EXPECT_NEAR(2 * chaotic.megno_slope / chaotic.lyapunov, 1.0, 0.2);  // measured 0.97
}

// REBOUND's MEGNO (tests/fixtures/make_megno_fixtures.py): the same initial state and tangent,
// REBOUND's WHFast (Jacobi, safe_mode = 1) against swarmfit's whfast at the same steps, and
// REBOUND's IAS15 (the flow) against saba4 at P/100. MEGNO within 1% at every checkpoint, and the
// slope of <Y> (REBOUND's sim.lyapunov()) within 5% where the system is chaotic.
std::vector<std::vector<double>> read_csv(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::string line;
  std::getline(in, line);
  std::vector<std::vector<double>> rows;
  while (std::getline(in, line)) {
    std::vector<double> row;
    std::istringstream fields(line);
    for (std::string f; std::getline(fields, f, ',');) row.push_back(std::stod(f));
    rows.push_back(row);
  }
  return rows;
}

void expect_rebound_megno(const std::string& system, const std::string& rebound, const std::string& ours,
                          double steps_per_orbit = 100, double until = 1e300) {
  SCOPED_TRACE(system + " " + rebound + " vs " + ours);
  const std::string dir = std::string(SWARMFIT_SOURCE_DIR) + "/tests/fixtures/megno/" + system;
  std::unique_ptr<Ensemble> e = testing::read_fixture_system(dir + "_initial.csv");
  std::vector<double> tangent;
  for (const auto& row : read_csv(dir + "_tangent.csv")) tangent.insert(tangent.end(), row.begin() + 1, row.end());
  ChaosState chaos(*e, tangent);
  const double h = kTwoPi / steps_per_orbit;
  for (const auto& row : read_csv(dir + "_" + rebound + ".csv")) {
    const double t = row[0], megno = row[1], slope = row[2];
    if (t > until) break;
    RunRequest r = request_for(ours, h, t);
    integrate_chaos(*e, chaos, r, "cpu");
    ASSERT_EQ(e->status(0), 0);
    const ChaosIndicators c = chaos.indicators(0);
    std::printf("%s %s t = %.1f: MEGNO %.5f (REBOUND %.5f), slope %.4g (REBOUND %.4g), lambda %.4g\n", system.c_str(),
                ours.c_str(), t, c.megno, megno, c.megno_slope, slope, c.lyapunov);
    EXPECT_NEAR(c.megno / megno, 1.0, 0.01) << "t = " << t;
    if (system == "chaotic" && t > 500) EXPECT_NEAR(c.megno_slope / slope, 1.0, 0.05) << "t = " << t;
  }
}

TEST(Chaos, MegnoAgreesWithReboundsWhfast) {
  expect_rebound_megno("quasi", "whfast", "whfast");
  expect_rebound_megno("chaotic", "whfast", "whfast");
}

// The flow (IAS15) against saba4's map at P/400: MEGNO sums the map at its steps, REBOUND's IAS15
// integrates dY with its own quadrature. On the chaotic orbit the two trajectories separate as
// exp(lambda t) from their ~1e-10 difference, so the comparison stops at lambda t ~ 10 (t = 630).
TEST(Chaos, MegnoAgreesWithReboundsIas15) {
  expect_rebound_megno("quasi", "ias15", "saba4", 400);
  expect_rebound_megno("chaotic", "ias15", "saba4", 400, 630);
}

// Instability times of compact three-planet systems against REBOUND's on the same initial states
// (tests/fixtures/make_instability_fixtures.py: 200 systems, three 1e-5 planets 2.5-5.5 mutual
// Hill radii apart, WHFast at P_inner/20 in both codes, stopped when two planets come within the
// sum of their Hill radii, horizon 1e4 inner orbits). Chaos makes single times differ between any
// two codes, so the test is statistical: the two samples of log10(orbits) pass a two-sample
// Kolmogorov-Smirnov test at the 1% level (D < 1.628 sqrt(2 / 200) = 0.163), their medians
// agree within 0.3 dex and the survivors' fractions within 0.08.
TEST(Chaos, InstabilityTimesHaveReboundsDistribution) {
  const std::string dir = std::string(SWARMFIT_SOURCE_DIR) + "/tests/fixtures/instability/";
  const auto rows = read_csv(dir + "systems.csv");
  const auto times = read_csv(dir + "times.csv");
  const long m = static_cast<long>(times.size());
  Ensemble e(m, 4);
  for (const auto& r : rows) {
    const long sys = static_cast<long>(r[0]);
    const int i = static_cast<int>(r[1]);
    e.mass(sys, i) = r[2];
    e.radius(sys, i) = r[3];
    for (int d = 0; d < 3; ++d) {
      e.position(sys, i, d) = r[4 + d];
      e.velocity(sys, i, d) = r[7 + d];
    }
  }
  const double horizon = 1e4 * kTwoPi;
  RunRequest req = request_for("whfast", kTwoPi / 20, horizon);
  req.monitors.collisions = true;
  req.threads = 2;
  integrate_cpu(e, req);
  std::vector<double> ours, theirs;
  int ours_survived = 0, theirs_survived = 0;
  for (long s = 0; s < m; ++s) {
    ASSERT_TRUE(e.status(s) == kStatusOk || e.status(s) == kStatusCollision) << s << " " << e.status(s);
    ours.push_back(std::log10(e.time(s) / kTwoPi));
    theirs.push_back(std::log10(times[s][1] / kTwoPi));
    ours_survived += e.status(s) == kStatusOk;
    theirs_survived += times[s][1] >= horizon * (1 - 1e-6);
  }
  std::sort(ours.begin(), ours.end());
  std::sort(theirs.begin(), theirs.end());
  double d = 0;
  for (double x : ours) {
    const double fa = static_cast<double>(std::upper_bound(ours.begin(), ours.end(), x) - ours.begin()) / m;
    const double fb = static_cast<double>(std::upper_bound(theirs.begin(), theirs.end(), x) - theirs.begin()) / m;
    d = std::max(d, std::fabs(fa - fb));
  }
  for (double x : theirs) {
    const double fa = static_cast<double>(std::upper_bound(ours.begin(), ours.end(), x) - ours.begin()) / m;
    const double fb = static_cast<double>(std::upper_bound(theirs.begin(), theirs.end(), x) - theirs.begin()) / m;
    d = std::max(d, std::fabs(fa - fb));
  }
  std::printf("instability times: KS D = %.3f; median log10 orbits %.3f (REBOUND %.3f); survived %d (REBOUND %d)\n", d,
              ours[m / 2], theirs[m / 2], ours_survived, theirs_survived);
  EXPECT_LT(d, 1.628 * std::sqrt(2.0 / m));
  EXPECT_NEAR(ours[m / 2], theirs[m / 2], 0.3);
  EXPECT_NEAR(static_cast<double>(ours_survived) / m, static_cast<double>(theirs_survived) / m, 0.08);
}

// The GPU runs the same observer on Dual<double> lanes: with the reproducible kernels (the CPU's
// arithmetic) bitwise the CPU's indicators, with the fast ones within round-off growth.
TEST(ChaosGpu, CpuAndGpuIndicatorsAgree) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device";
  const long m = 300;
  Ensemble base(m, 3);
  for (long s = 0; s < m; ++s) set_two_planets(base, s, 1e-3, 1e-3 * (0.2 + s % 7 * 0.1), 1.5 + 0.002 * s, 0.05);
  for (const std::string& name : {"whfast", "saba4", "mvs", "hermite"}) {
    SCOPED_TRACE(name);
    RunRequest r = request_for(name, kTwoPi / 40, 200 * kTwoPi);
    r.monitors.close_approach = 1.0;
    Ensemble cpu = base, gpu = base, strict = base;
    ChaosState c_cpu(cpu), c_gpu(gpu), c_strict(strict);
    integrate_chaos(cpu, c_cpu, r, "cpu");
    integrate_chaos(gpu, c_gpu, r, "cuda");
    RunRequest rs = r;
    rs.reproducible = true;
    integrate_chaos(strict, c_strict, rs, "cuda");
    EXPECT_TRUE(c_strict.data() == c_cpu.data());
    EXPECT_TRUE(strict.body_data() == cpu.body_data());
    int compared = 0;
    for (long s = 0; s < m; ++s) {
      ASSERT_EQ(gpu.status(s), cpu.status(s)) << s;
      const ChaosIndicators a = c_cpu.indicators(s), b = c_gpu.indicators(s);
      if (cpu.status(s) != 0 || a.megno > 3) continue;  // chaotic orbits separate from round-off
      ++compared;
      EXPECT_NEAR(b.megno / a.megno, 1.0, 1e-6) << s;
      EXPECT_NEAR(b.max_e[0] / a.max_e[0], 1.0, 1e-6) << s;
    }
    EXPECT_GT(compared, m / 4);
  }
}

}  // namespace
}  // namespace swarmfit
