// Packed launches (likelihood_packing.hpp): the batches of several problems, with their own data,
// instruments, planet counts, steps and schemes, integrated in shared launches must give every
// system bitwise the ln L and status of its problem's own evaluate(); on the CPU here, on the GPU
// where there is one.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <thread>

#include "model_test_support.hpp"
#include "swarmfit/integrators/backend.hpp"
#include "swarmfit/models/catalog.hpp"
#include "swarmfit/models/likelihood_packing.hpp"

namespace swarmfit {
namespace {

struct Case {
  std::unique_ptr<PlanetaryModel> model;
  std::vector<double> truth, params;
  Dataset data;
  std::unique_ptr<LikelihoodProblem> problem;
  long n = 0;
  std::vector<double> alone;
  std::vector<int> alone_status;
};

// A population of n around the truth; every 11th system with e >= 1 (invalid), every 13th with
// its outer planet on a crossing orbit (fails in the integration).
void add_population(Case& c, long n) {
  const PlanetaryModel& m = *c.model;
  c.n = n;
  for (long k = 0; k < n; ++k) {
    std::vector<double> p = c.truth;
    p[m.planet_parameter(0, 1)] *= 1.0 + 1e-3 * (k % 17);
    p[m.planet_parameter(0, 2)] += 1e-3 * (k % 7);
    if (k % 11 == 10) p[m.planet_parameter(0, 2)] = 1.1;
    if (m.num_planets() > 1 && k % 13 == 12) p[m.planet_parameter(1, 2)] = 0.9;
    c.params.insert(c.params.end(), p.begin(), p.end());
  }
}

// Four problems: two of the same two-planet model with other data, steps and likelihoods (one
// launch), a one-planet RV-only model with two instruments (a launch of its own body count), and
// the first one's data with Hermite (a launch of its own scheme).
std::vector<Case> cases(const std::string& backend) {
  const double t_ref = 2455000.0;
  ModelOptions options;
  options.reference_epoch = t_ref;
  std::vector<Case> out(4);
  for (int k : {0, 1, 3}) {
    Case& c = out[k];
    c.model = std::make_unique<PlanetaryModel>(std::vector<std::string>{"b", "c"},
                                               std::vector<std::string>{"synthetic"}, options);
    c.truth = {1.0,  10.0, 30.0, 0.2,         0.1,  t_ref + 3.0, 89.5, 0.0, 20.6,
               20.0, -0.1, 0.25, t_ref + 7.0, 89.2, 0.3,         5.0,  1.5};
  }
  LikelihoodSettings s;
  s.backend = backend;
  s.threads = 2;
  s.time_step = 0.5;
  out[0].data = testing::synthetic_dataset(*out[0].model, out[0].truth, s, t_ref + 600.0, {0, 1}, 60, 3e-4, 2.0);
  out[0].problem = std::make_unique<LikelihoodProblem>(out[0].data, *out[0].model, s, out[0].truth);
  add_population(out[0], 45);
  {
    LikelihoodSettings b = s;
    b.time_step = 0.3;  // another step, end time, Student-t, marginalised offsets
    b.student_nu = 4.0;
    b.marginalize_offsets = true;
    out[1].data = testing::synthetic_dataset(*out[1].model, out[1].truth, b, t_ref + 300.0, {1}, 25, 5e-4, 3.0);
    out[1].problem = std::make_unique<LikelihoodProblem>(out[1].data, *out[1].model, b, out[1].truth);
    add_population(out[1], 70);
  }
  {
    Case& c = out[2];
    c.model =
        std::make_unique<PlanetaryModel>(std::vector<std::string>{"b"}, std::vector<std::string>{"x", "y"}, options);
    c.truth = {1.1, 4.2, 60.0, 0.1, -0.2, t_ref + 1.0, 90.0, 0.0, 3.0, 1.0, -7.0, 2.0};
    LikelihoodSettings r = s;
    r.time_step = 0.2;
    Dataset d = testing::synthetic_dataset(*c.model, c.truth, r, t_ref + 200.0, {}, 40, 1e-3, 4.0);
    for (std::size_t i = 0; i < d.rv.size(); i += 2) d.rv[i].instrument = 1;  // half of them the second
    d.instruments = {"x", "y"};
    c.data = d;
    c.problem = std::make_unique<LikelihoodProblem>(c.data, *c.model, r, c.truth);
    add_population(c, 33);
  }
  {
    LikelihoodSettings h = s;
    h.integrator = "hermite";
    h.time_step = 0.05;
    out[3].data = out[0].data;
    out[3].problem = std::make_unique<LikelihoodProblem>(out[3].data, *out[3].model, h, out[3].truth);
    add_population(out[3], 20);
  }
  for (Case& c : out) {
    c.alone.assign(c.n, 0.0);
    c.alone_status.assign(c.n, -1);
    c.problem->evaluate(c.params.data(), c.n, c.alone.data(), c.alone_status.data());
  }
  return out;
}

void expect_bitwise(const Case& c, const std::vector<double>& lnl, const std::vector<int>& status, int which) {
  long finite = 0, failed = 0;
  for (long s = 0; s < c.n; ++s) {
    ASSERT_EQ(status[s], c.alone_status[s]) << "problem " << which << ", system " << s;
    ASSERT_EQ(std::memcmp(&lnl[s], &c.alone[s], sizeof(double)), 0)
        << "problem " << which << ", system " << s << ": packed " << lnl[s] << ", alone " << c.alone[s];
    finite += std::isfinite(lnl[s]);
    failed += status[s] != 0;
  }
  EXPECT_GT(finite, c.n / 2) << "problem " << which;
  EXPECT_GT(failed, 0) << "problem " << which << ": the population's broken systems";
}

void packed_launches_match(const std::string& backend) {
  std::vector<Case> all = cases(backend);
  // The problems' own results differ (other data and steps), so a launch that ran one problem's
  // run for all would be caught.
  ASSERT_NE(all[0].alone[0], all[1].alone[0]);
  std::vector<std::vector<double>> lnl(all.size());
  std::vector<std::vector<int>> status(all.size());
  std::vector<PackedRequest> requests;
  for (std::size_t k = 0; k < all.size(); ++k) {
    lnl[k].assign(all[k].n, 0.0);
    status[k].assign(all[k].n, -7);
    requests.push_back({all[k].problem.get(), all[k].params.data(), all[k].n, lnl[k].data(), status[k].data()});
  }
  PackingStats stats;
  evaluate_packed(requests, &stats);
  EXPECT_EQ(stats.launches, 3);  // two-planet mvs, one-planet mvs, two-planet hermite
  EXPECT_EQ(stats.batches, 4);
  for (std::size_t k = 0; k < all.size(); ++k) expect_bitwise(all[k], lnl[k], status[k], static_cast<int>(k));

  // Through the packer, from a thread per problem: three batches each, gathered into rounds (their
  // launches one after another, or at once, as on the GPU).
  for (bool concurrent : {false, true}) {
    SCOPED_TRACE(concurrent);
    auto packer = std::make_shared<LaunchPacker>(30.0, concurrent);  // a round waits for every seated thread
    std::vector<std::unique_ptr<LikelihoodProblem>> packed_problems;
    for (std::size_t k = 0; k < all.size(); ++k) {
      const Case& c = all[k];
      LikelihoodSettings s = c.problem->settings();
      s.packer = packer;
      s.packing_label = "problem " + std::to_string(k);
      packed_problems.push_back(std::make_unique<LikelihoodProblem>(c.data, *c.model, s, c.truth));
    }
    std::vector<std::thread> threads;
    std::vector<int> ok(all.size(), 0);
    {
      std::vector<std::unique_ptr<LaunchPacker::Seat>> seats;
      for (std::size_t k = 0; k < all.size(); ++k) seats.push_back(std::make_unique<LaunchPacker::Seat>(*packer));
      for (std::size_t k = 0; k < all.size(); ++k)
        threads.emplace_back([&, k, seat = std::move(seats[k])]() mutable {
          const Case& c = all[k];
          for (int round = 0; round < 3; ++round) {
            std::vector<double> l(c.n, 0.0);
            std::vector<int> st(c.n, -7);
            packed_problems[k]->evaluate(c.params.data(), c.n, l.data(), st.data());
            bool same = true;
            for (long s = 0; s < c.n; ++s)
              same = same && st[s] == c.alone_status[s] && std::memcmp(&l[s], &c.alone[s], sizeof(double)) == 0;
            ok[k] += same;
          }
          seat.reset();
        });
    }
    for (std::thread& t : threads) t.join();
    for (std::size_t k = 0; k < all.size(); ++k) EXPECT_EQ(ok[k], 3) << "problem " << k;
    const PackingStats p = packer->stats();
    EXPECT_EQ(p.batches, 12);
    // The first round waits for all four; later ones form as launches finish (a fast problem's next
    // batch need not wait for a slow one's launch).
    EXPECT_GE(p.rounds, 3);
    EXPECT_LE(p.rounds, 12);
    EXPECT_GE(p.launches, 9);  // at least the three launches of evaluate_packed, three times
    EXPECT_LE(p.launches, 12);
    // Each problem's time, booked under its label: its three batches, each in a launch that took
    // time; the sum of the launches' times within the packer's (each launch booked by each member).
    const std::map<std::string, PackedTime> times = packer->times();
    ASSERT_EQ(times.size(), all.size());
    for (std::size_t k = 0; k < all.size(); ++k) {
      const PackedTime& t = times.at("problem " + std::to_string(k));
      EXPECT_EQ(t.batches, 3) << k;
      EXPECT_GE(t.waiting, 0.0) << k;
      EXPECT_GT(t.launched, 0.0) << k;
      EXPECT_LE(t.launched, p.seconds * 1.001 + 1e-3) << k;
    }
  }
}

TEST(Packing, PackedLaunchesGiveEachProblemItsOwnResultsBitwiseCpu) { packed_launches_match("cpu"); }

TEST(Packing, PackedLaunchesGiveEachProblemItsOwnResultsBitwiseGpu) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device";
  packed_launches_match("cuda");
}

// A thread that holds a seat but sends nothing (busy elsewhere) delays a round by max_wait only.
TEST(Packing, AnIdleSeatHoldsARoundBackOnlyMaxWait) {
  std::vector<Case> all = cases("cpu");
  auto packer = std::make_shared<LaunchPacker>(0.2);
  LikelihoodSettings s = all[0].problem->settings();
  s.packer = packer;
  const LikelihoodProblem problem(all[0].data, *all[0].model, s, all[0].truth);
  LaunchPacker::Seat idle(*packer), mine(*packer);
  std::vector<double> l(all[0].n);
  std::vector<int> st(all[0].n);
  const auto start = std::chrono::steady_clock::now();
  problem.evaluate(all[0].params.data(), all[0].n, l.data(), st.data());
  const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_GE(waited, 0.2);
  expect_bitwise(all[0], l, st, 0);
  EXPECT_EQ(packer->stats().rounds, 1);
}

// Packed launches run a thread per system; a problem whose batches may run a thread per body on
// the GPU (cuda_layout body, or auto from kCudaBodyLayoutFrom bodies, mvs in Jacobi coordinates)
// is left out of the packs (LikelihoodProblem::packed, the catalog), so that its chain is the one
// it gives alone.
TEST(Packing, ProblemsThatMayRunAThreadPerBodyAreNotPacked) {
  LikelihoodSettings s;  // mvs, Jacobi, auto
  EXPECT_FALSE(cuda_body_layout_possible(s, kCudaBodyLayoutFrom - 1));
  EXPECT_TRUE(cuda_body_layout_possible(s, kCudaBodyLayoutFrom));
  s.cuda_layout = CudaLayout::kThreadPerSystem;
  EXPECT_FALSE(cuda_body_layout_possible(s, 8));
  s.cuda_layout = CudaLayout::kThreadPerBody;
  EXPECT_TRUE(cuda_body_layout_possible(s, 3));
  s.mvs_jacobi = false;  // democratic heliocentric: no likelihood body kernel
  EXPECT_FALSE(cuda_body_layout_possible(s, 8));
  s.mvs_jacobi = true;
  s.integrator = "hermite";
  EXPECT_FALSE(cuda_body_layout_possible(s, 8));
  // And the problem itself declines its packer (built without a device: the GPU pipeline is made
  // at the first evaluation). A two-planet mvs problem on cuda: packed a thread per system, not
  // with layout body; on the cpu packed whatever the layout.
  const std::vector<Case> all = cases("cpu");
  auto packer = std::make_shared<LaunchPacker>(0.05, true);
  auto packs = [&](const std::string& backend, CudaLayout layout) {
    LikelihoodSettings l = all[0].problem->settings();
    l.backend = backend;
    l.cuda_layout = layout;
    l.packer = packer;
    return LikelihoodProblem(all[0].data, *all[0].model, l, all[0].truth).packed(nullptr);
  };
  EXPECT_TRUE(packs("cuda", CudaLayout::kAuto));  // 3 bodies
  EXPECT_TRUE(packs("cuda", CudaLayout::kThreadPerSystem));
  EXPECT_FALSE(packs("cuda", CudaLayout::kThreadPerBody));
  EXPECT_TRUE(packs("cpu", CudaLayout::kThreadPerBody));
}

// The catalog's host targets (--host-targets) share the process's cores in proportion to their
// work, at least one each, every core given (Hamilton's largest remainders, ties to the first).
TEST(Packing, HostTargetsShareTheCoresInProportionToTheirWork) {
  EXPECT_EQ(share_in_proportion({4, 1, 1}, 12), (std::vector<long>{7, 3, 2}));
  EXPECT_EQ(share_in_proportion({10, 1}, 16), (std::vector<long>{14, 2}));
  EXPECT_EQ(share_in_proportion({1, 1, 1}, 2), (std::vector<long>{1, 1, 1}));  // fewer cores: one each
  EXPECT_EQ(share_in_proportion({0, 0}, 6), (std::vector<long>{3, 3}));
  EXPECT_TRUE(share_in_proportion({}, 8).empty());
  for (long cores = 3; cores <= 40; ++cores) {
    const std::vector<double> work = {3.98e5 * 96, 8.6e4 * 64, 8.1e4 * 64};
    const std::vector<long> s = share_in_proportion(work, cores);
    EXPECT_EQ(s[0] + s[1] + s[2], cores);
    EXPECT_GE(s[0], s[1]);
    EXPECT_GE(s[1], s[2]);
    EXPECT_GE(s[2], 1);
  }
}

}  // namespace
}  // namespace swarmfit
