// The run loop, the optimiser and the initial walkers on targets with known answers, with fixed
// seeds: the stopping rule stops a Gaussian's run once R-hat and ESS reach their targets, and a run
// stopped and continued from its state ends bitwise as an uninterrupted one; the DE optimiser finds
// a Gaussian's mode; initial walkers are redrawn until their posterior is finite.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "swarmfit/inference/initial_walkers.hpp"
#include "swarmfit/inference/optimizer.hpp"
#include "swarmfit/inference/run_loop.hpp"
#include "swarmfit/inference/summary.hpp"

namespace swarmfit {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// Independent Gaussians N(mean_p, scale_p^2): ln L only, ln prior 0.
struct Gaussian {
  Eigen::VectorXd mean, scale;
  explicit Gaussian(int d) : mean(d), scale(d) {
    for (int p = 0; p < d; ++p) {
      mean(p) = 1.5 * p - 2.0;
      scale(p) = 0.5 + 0.25 * p;
    }
  }
  BatchedLogDensity density() const {
    return [this](const Eigen::MatrixXd& x, Eigen::VectorXd& lp, Eigen::VectorXd& ll, std::vector<int>& status) {
      lp = Eigen::VectorXd::Zero(x.cols());
      ll.resize(x.cols());
      status.assign(x.cols(), 0);
      for (long k = 0; k < x.cols(); ++k) ll(k) = -0.5 * ((x.col(k) - mean).array() / scale.array()).square().sum();
    };
  }
};

Eigen::MatrixXd scattered(int d, int walkers, double width, std::uint64_t seed) {
  const CounterRandom random(seed);
  Eigen::MatrixXd x(d, walkers);
  for (int w = 0; w < walkers; ++w)
    for (int p = 0; p < d; ++p) x(p, w) = width * random.normal(RandomPurpose::kTest, w, 0, p);
  return x;
}

TEST(RunLoop, ConvergenceChecksThinOutAsTheChainGrows) {
  EXPECT_TRUE(convergence_check_due(100, 100));
  EXPECT_FALSE(convergence_check_due(150, 100));
  EXPECT_TRUE(convergence_check_due(3100, 100));
  EXPECT_FALSE(convergence_check_due(3300, 100));  // beyond 32 intervals: every 200
  EXPECT_TRUE(convergence_check_due(3400, 100));
  EXPECT_FALSE(convergence_check_due(6500, 100));  // beyond 64 intervals of 100: every 400
  EXPECT_TRUE(convergence_check_due(6800, 100));
}

// The stopping rule ends the run at the first check where every R-hat is below its target and every
// bulk ESS above its own, far before the generation limit; the diagnostics then say so.
TEST(RunLoop, StoppingRuleStopsAGaussianOnceConverged) {
  const Gaussian target(4);
  DemcmcSettings settings;
  settings.seed = 17;
  Demcmc sampler(scattered(4, 16, 3.0, 1), target.density(), settings);
  Chain chain;
  RunLoopSettings loop;
  loop.generations = 20000;
  loop.check_every = 50;
  loop.rhat_target = 1.02;
  loop.ess_target = 400;
  long reports = 0;
  bool finished = false;
  RunLoopCallbacks callbacks;
  callbacks.progress = [&](const RunProgress& p) {
    ++reports;
    finished = p.finished;
  };
  loop.progress_seconds = 0;
  const RunLoopResult r = run_loop(sampler, chain, loop, callbacks);
  EXPECT_TRUE(r.converged);
  EXPECT_FALSE(r.interrupted);
  EXPECT_LT(sampler.generation(), loop.generations / 4);
  EXPECT_TRUE(convergence_check_due(sampler.generation(), loop.check_every));
  EXPECT_LT(r.worst_rhat, loop.rhat_target);
  EXPECT_GE(r.min_ess, loop.ess_target);
  EXPECT_EQ(chain.num_draws(), sampler.generation());
  EXPECT_EQ(reports, sampler.generation() + 1);  // every generation with progress_seconds = 0, and the last
  EXPECT_TRUE(finished);
  // The kept draws after the burn-in have the target's moments (within 5 Monte-Carlo errors).
  RunRecord run;
  run.chain = chain;
  run.names = {"a", "b", "c", "d"};
  run.units.assign(4, "");
  run.free = {0, 1, 2, 3};
  const std::vector<SummaryRow> rows = summarize_chain(run, first_kept_draw(chain, loop.burn_in));
  for (int p = 0; p < 4; ++p) {
    EXPECT_NEAR(rows[p].mean, target.mean(p), 5 * target.scale(p) / std::sqrt(rows[p].ess_bulk)) << p;
    EXPECT_NEAR(rows[p].sd, target.scale(p), 0.15 * target.scale(p)) << p;
  }
}

// Stopped by should_stop at some generation and continued from the sampler's state and the chain
// (as a checkpoint and --resume do), the run ends at the same generation with the same chain, bitwise;
// checkpoints come at their cadence with the state they will resume from.
TEST(RunLoop, StoppedAndContinuedEqualsUninterrupted) {
  const Gaussian target(3);
  DemcmcSettings settings;
  settings.seed = 5;
  settings.snooker.probability = 0.1;
  RunLoopSettings loop;
  loop.generations = 3000;
  loop.thin = 2;
  loop.check_every = 40;
  loop.ess_target = 300;
  loop.checkpoint_every = 30;
  loop.checkpoint_seconds = 1e9;
  Demcmc whole(scattered(3, 12, 2.0, 2), target.density(), settings);
  Chain whole_chain;
  std::vector<long> checkpoints;
  RunLoopCallbacks count;
  count.checkpoint = [&](const Demcmc& s, const Chain& c) {
    checkpoints.push_back(s.generation());
    EXPECT_EQ(c.generation.back(), s.generation());
  };
  const RunLoopResult a = run_loop(whole, whole_chain, loop, count);
  ASSERT_TRUE(a.converged);
  ASSERT_GT(checkpoints.size(), 2u);
  for (std::size_t k = 0; k < checkpoints.size(); ++k) EXPECT_EQ(checkpoints[k], 30 * static_cast<long>(k + 1));

  Demcmc first(scattered(3, 12, 2.0, 2), target.density(), settings);
  Chain chain;
  RunLoopCallbacks stop;
  stop.should_stop = [&] { return first.generation() == 90; };
  const RunLoopResult b = run_loop(first, chain, loop, stop);
  ASSERT_TRUE(b.interrupted);
  Demcmc second(first.state(), target.density(), settings);
  const RunLoopResult c = run_loop(second, chain, loop, {});
  EXPECT_TRUE(c.converged);
  EXPECT_EQ(second.generation(), whole.generation());
  EXPECT_EQ(chain.generation, whole_chain.generation);
  EXPECT_TRUE(chain.parameters == whole_chain.parameters);
  EXPECT_EQ(chain.accepted, whole_chain.accepted);
  EXPECT_EQ(b.walkers_reset + c.walkers_reset, a.walkers_reset);
}

// A density that throws Interrupted inside a generation (a signal seen during a long stability
// pass, after the first half's call): run_loop returns interrupted with the sampler as it was after
// the last whole generation, and continued from that state the run is the uninterrupted one, bitwise.
TEST(RunLoop, InterruptedInsideAGenerationKeepsTheLastWholeOne) {
  const Gaussian target(3);
  DemcmcSettings settings;
  settings.seed = 9;
  RunLoopSettings loop;
  loop.generations = 400;
  loop.check_every = 50;
  Demcmc whole(scattered(3, 12, 2.0, 3), target.density(), settings);
  Chain whole_chain;
  run_loop(whole, whole_chain, loop, {});

  long calls = 0;
  const BatchedLogDensity plain = target.density();
  const BatchedLogDensity throwing = [&](const Eigen::MatrixXd& x, Eigen::VectorXd& lp, Eigen::VectorXd& ll,
                                         std::vector<int>& status) {
    // The initial evaluation, then two calls (halves) per generation g = 0, 1, ...: 2 g + 2 and
    // 2 g + 3. This is the second half of generation 57, after the first half has moved.
    if (++calls == 2 * 57 + 3) throw Interrupted("test signal");
    plain(x, lp, ll, status);
  };
  // The test has teeth only if the first half of generation 57 moved a walker: it does.
  Demcmc reference(scattered(3, 12, 2.0, 3), plain, settings);
  for (int g = 0; g < 57; ++g) reference.step();
  const DemcmcState at57 = reference.state();
  reference.step();
  const auto& moved = reference.accepted_last();
  ASSERT_GT(std::count(moved.begin(), moved.begin() + 6, 1), 0);

  Demcmc first(scattered(3, 12, 2.0, 3), throwing, settings);
  Chain chain;
  const RunLoopResult b = run_loop(first, chain, loop, {});
  ASSERT_TRUE(b.interrupted);
  EXPECT_EQ(first.generation(), 57);
  EXPECT_EQ(chain.num_draws(), 57);
  EXPECT_TRUE(first.state().walkers == at57.walkers);
  EXPECT_EQ(first.state().accepted, at57.accepted);
  Demcmc second(first.state(), plain, settings);
  run_loop(second, chain, loop, {});
  EXPECT_EQ(second.generation(), whole.generation());
  EXPECT_TRUE(chain.parameters == whole_chain.parameters);
  EXPECT_EQ(chain.accepted, whole_chain.accepted);
  EXPECT_TRUE(second.state().log_likelihood == whole.state().log_likelihood);
}

// DE/rand/1/bin from a population spread far around the mode ends within 1e-4 standard deviations
// of it (a maximum that the population's spread, 10 sd, would miss by far without optimising).
TEST(Optimizer, FindsTheModeOfAGaussian) {
  const Gaussian target(5);
  long reports = 0;
  const Eigen::VectorXd best =
      optimize_differential_evolution(scattered(5, 40, 10.0, 3), target.density(), 400, 11, [&](const RunProgress& p) {
        ++reports;
        EXPECT_EQ(p.phase, RunProgress::Phase::kOptimize);
      });
  for (int p = 0; p < 5; ++p) EXPECT_NEAR(best(p), target.mean(p), 1e-4 * target.scale(p)) << p;
  EXPECT_GE(reports, 1);
}

// With a screened constraint (x_0 <= mean_0 - 1: the mode excluded), the optimiser that screens
// only its improving trials ends bitwise where the one with the constraint inside the density ends,
// on the constraint's boundary, after screening far fewer trials than it evaluated.
TEST(Optimizer, ScreenedConstraintGivesTheSameOptimum) {
  const Gaussian target(4);
  const BatchedLogDensity plain = target.density();
  auto violates = [&](const Eigen::VectorXd& x) { return x(0) > target.mean(0) - 1.0; };
  const BatchedLogDensity inside = [&](const Eigen::MatrixXd& x, Eigen::VectorXd& lp, Eigen::VectorXd& ll,
                                       std::vector<int>& status) {
    plain(x, lp, ll, status);
    for (long k = 0; k < x.cols(); ++k)
      if (violates(x.col(k))) ll(k) = -kInf;
  };
  long screened = 0, evaluated = 0;
  const BatchedLogDensity counted = [&](const Eigen::MatrixXd& x, Eigen::VectorXd& lp, Eigen::VectorXd& ll,
                                        std::vector<int>& status) {
    evaluated += x.cols();
    plain(x, lp, ll, status);
  };
  const BatchedScreen screen = [&](const Eigen::MatrixXd& x, const std::vector<char>& candidates, Eigen::VectorXd& ll,
                                   std::vector<int>&) {
    for (long k = 0; k < x.cols(); ++k) {
      if (!candidates[k]) continue;
      ++screened;
      if (violates(x.col(k))) ll(k) = -kInf;
    }
  };
  Eigen::MatrixXd start = scattered(4, 24, 3.0, 5);
  for (long k = 0; k < start.cols(); ++k) start(0, k) = std::min(start(0, k), target.mean(0) - 1.5);
  const Eigen::VectorXd a = optimize_differential_evolution(start, inside, 300, 7);
  const Eigen::VectorXd b = optimize_differential_evolution(start, counted, 300, 7, {}, 0.5, screen);
  EXPECT_EQ((a - b).cwiseAbs().maxCoeff(), 0.0);
  EXPECT_NEAR(a(0), target.mean(0) - 1.0, 1e-3);
  EXPECT_LT(screened, evaluated / 2);
}

// A guess on the bounds of its priors (an optimum the data push against the prior's edges, as
// CoRoT-3's in the archive catalog): scattered walkers are reflected into the support, so all of
// them start on the first round; redrawn instead, each draw would be inside with probability 2^-12
// and 100 rounds would leave nearly every walker outside.
TEST(InitialWalkers, ScatterAroundAGuessOnThePriorBoundsStaysInside) {
  std::vector<std::string> names;
  std::vector<Prior> priors;
  for (int p = 0; p < 12; ++p) {
    names.push_back("p" + std::to_string(p));
    priors.push_back(parse_prior(p % 2 ? "uniform(0, 1)" : "log_uniform(0.01, 100)"));
  }
  std::vector<double> values(12);
  Eigen::VectorXd guess(12);
  for (int p = 0; p < 12; ++p) guess(p) = values[p] = p % 2 ? 1.0 : 0.01;  // upper and lower bounds
  const ParameterSpace space(names, priors, values);
  long calls = 0;
  const BatchedLogDensity posterior = [&](const Eigen::MatrixXd& x, Eigen::VectorXd& lp, Eigen::VectorXd& ll,
                                          std::vector<int>& status) {
    ++calls;
    lp.resize(x.cols());
    ll = Eigen::VectorXd::Zero(x.cols());
    status.assign(x.cols(), 0);
    for (long k = 0; k < x.cols(); ++k) lp(k) = space.log_prior(x.col(k).data());
  };
  const Eigen::MatrixXd x = initial_walkers(space, guess, 32, false, 0.01, 3, 2, posterior);
  EXPECT_EQ(calls, 1);
  for (long k = 0; k < x.cols(); ++k)
    for (int p = 0; p < 12; ++p) {
      EXPECT_GE(x(p, k), priors[p].lower) << p;
      EXPECT_LE(x(p, k), priors[p].upper) << p;
      EXPECT_NEAR(x(p, k), guess(p), 0.05 * priors[p].standard_deviation() + 1e-12) << p;
    }
}

// A box-shaped posterior (-inf outside [0, 1] in the first parameter): walkers drawn around a guess
// at its edge are redrawn until inside; where nothing is finite the walkers' last status codes come
// back with the error.
TEST(InitialWalkers, RedrawnUntilFiniteOrRefusedWithTheirStatus) {
  const ParameterSpace space({"x", "y"}, {parse_prior("uniform(-1, 2)"), parse_prior("normal(0, 1)")}, {0.0, 0.0});
  auto box = [](double lower) {
    return [lower](const Eigen::MatrixXd& x, Eigen::VectorXd& lp, Eigen::VectorXd& ll, std::vector<int>& status) {
      lp = Eigen::VectorXd::Zero(x.cols());
      ll.resize(x.cols());
      status.assign(x.cols(), 0);
      for (long k = 0; k < x.cols(); ++k) {
        const bool inside = x(0, k) >= lower && x(0, k) <= 1;
        ll(k) = inside ? 0.0 : -kInf;
        status[k] = inside ? 0 : 7;
      }
    };
  };
  const Eigen::Vector2d guess(0.0, 0.0);
  const Eigen::MatrixXd x = initial_walkers(space, guess, 64, false, 0.5, 3, 0, box(0.0));
  EXPECT_GE(x.row(0).minCoeff(), 0.0);
  EXPECT_LE(x.row(0).maxCoeff(), 1.0);
  const Eigen::MatrixXd again = initial_walkers(space, guess, 64, false, 0.5, 3, 0, box(0.0));
  EXPECT_EQ((x - again).cwiseAbs().maxCoeff(), 0.0);
  const Eigen::MatrixXd drawn = initial_walkers(space, guess, 64, true, 0.5, 3, 0, box(0.0));
  EXPECT_GE(drawn.row(0).minCoeff(), 0.0);
  try {
    initial_walkers(space, guess, 8, true, 0.5, 3, 0, box(5.0));
    ADD_FAILURE() << "no walker can be finite";
  } catch (const NoFiniteStart& e) {
    EXPECT_EQ(e.last_status, std::vector<int>(8, 7));
  }
  // With a fallback density (an optimiser's population under a screen few draws pass): the walkers
  // that no draw of 100 puts inside the narrow box are drawn on the wide one instead.
  const auto narrow = box(0.99);
  const BatchedLogDensity wide = box(0.0);
  const Eigen::MatrixXd mixed = initial_walkers(space, guess, 64, true, 0.5, 3, 0, narrow, &wide);
  long kept = 0;
  for (long k = 0; k < 64; ++k) {
    EXPECT_GE(mixed(0, k), 0.0);
    EXPECT_LE(mixed(0, k), 1.0);
    kept += mixed(0, k) >= 0.99;
  }
  // uniform(-1, 2): a draw lands in [0.99, 1] with probability 1/300, so 100 rounds place about
  // 28% of the walkers there and leave the rest to the fallback.
  EXPECT_GT(kept, 5);
  EXPECT_LT(kept, 40);
}

// A line fitted to points that scatter less than their errors, with a jitter s added to the errors
// in quadrature under a log-uniform prior, as every RV instrument of a catalog fit: the jitter's
// posterior spreads evenly over the decades down to its prior's bound, where a walker's room in s
// is thousands of times narrower than the population's spread. Moved in ln s (the sampler's
// log_coordinates, as the fit sets them from the priors) the run meets the stopping rule (R-hat <
// 1.01, ESS >= 400) within 5,000 generations with the exact marginal of s; moved in s, walkers sit
// down there for hundreds of generations and the rule is not met by then (bench/RESULTS.md, "C1:
// jitters moved in ln s").
TEST(RunLoop, JitterUnderALogUniformPriorMixesInLogCoordinates) {
  constexpr int kPoints = 16, kWalkers = 16;
  std::vector<double> t(kPoints), y(kPoints);
  const CounterRandom noise(3);
  for (int i = 0; i < kPoints; ++i) {
    t[i] = -1.0 + 2.0 * i / (kPoints - 1);
    y[i] = 0.5 + 0.3 * t[i] + 0.6 * noise.normal(RandomPurpose::kTest, i, 0, 0);  // errors 1
  }
  const ParameterSpace space(
      {"offset", "slope", "jitter"},
      {parse_prior("uniform(-10, 10)"), parse_prior("uniform(-10, 10)"), parse_prior("log_uniform(0.01, 100)")},
      {0.5, 0.3, 1.0});
  const BatchedLogDensity density = [&](const Eigen::MatrixXd& x, Eigen::VectorXd& lp, Eigen::VectorXd& ll,
                                        std::vector<int>& status) {
    lp.resize(x.cols());
    ll.resize(x.cols());
    status.assign(x.cols(), 0);
    for (long k = 0; k < x.cols(); ++k) {
      lp(k) = space.log_prior(x.col(k).data());
      const double v = 1.0 + x(2, k) * x(2, k);
      double chi2 = 0;
      for (int i = 0; i < kPoints; ++i) chi2 += std::pow(y[i] - x(0, k) - x(1, k) * t[i], 2);
      ll(k) = lp(k) > -kInf ? -0.5 * chi2 / v - 0.5 * kPoints * std::log(v) : -kInf;
    }
  };
  // The exact P(s < 0.1): offset and slope integrate out (flat priors far wider than the
  // posterior), leaving p(ln s) proportional to v^-(n-2)/2 exp(-S / 2v), v = 1 + s^2, S the least
  // squares' residual sum of squares; summed on a fine grid in ln s.
  double st = 0, sy = 0, stt = 0, sty = 0;
  for (int i = 0; i < kPoints; ++i) {
    st += t[i];
    sy += y[i];
    stt += t[i] * t[i];
    sty += t[i] * y[i];
  }
  const double slope = (kPoints * sty - st * sy) / (kPoints * stt - st * st), offset = (sy - slope * st) / kPoints;
  double rss = 0;
  for (int i = 0; i < kPoints; ++i) rss += std::pow(y[i] - offset - slope * t[i], 2);
  double below = 0, all = 0;
  for (int k = 0; k < 200000; ++k) {
    const double s = 0.01 * std::exp((k + 0.5) / 200000 * std::log(1e4)), v = 1 + s * s;
    const double p = std::pow(v, -0.5 * (kPoints - 2)) * std::exp(-0.5 * rss / v);
    all += p;
    if (s < 0.1) below += p;
  }
  const double exact_below = below / all;
  ASSERT_GT(exact_below, 0.2);  // the data make the jitter's spike at its bound a real share

  RunLoopSettings loop;
  loop.generations = 5000;
  loop.check_every = 100;
  loop.rhat_target = 1.01;
  loop.ess_target = 400;
  auto run = [&](bool log_coordinates, Chain& chain) {
    DemcmcSettings settings;
    settings.seed = 11;
    if (log_coordinates) settings.log_coordinates = space.log_coordinates();
    Eigen::MatrixXd x0(3, kWalkers);
    const CounterRandom random(7);
    for (int w = 0; w < kWalkers; ++w)
      for (int p = 0; p < 3; ++p)
        x0(p, w) = space.priors()[p].sample(random.uniform(RandomPurpose::kTest, w, 1, p),
                                            random.uniform(RandomPurpose::kTest, w, 2, p));
    Demcmc sampler(x0, density, settings);
    return run_loop(sampler, chain, loop, {});
  };
  EXPECT_EQ(space.log_coordinates(), (std::vector<char>{0, 0, 1}));
  Chain logged;
  const RunLoopResult fast = run(true, logged);
  EXPECT_TRUE(fast.converged) << "R-hat " << fast.worst_rhat << ", ESS " << fast.min_ess;
  const long first = first_kept_draw(logged, loop.burn_in);
  long count = 0, n = 0;
  for (long d = first; d < logged.num_draws(); ++d)
    for (int w = 0; w < kWalkers; ++w, ++n) count += logged.parameter(d, w, 2) < 0.1;
  const double tail_ess = logged.diagnostics(first)[2].ess_tail;
  EXPECT_NEAR(static_cast<double>(count) / n, exact_below, 4 * std::sqrt(exact_below * (1 - exact_below) / tail_ess));
  Chain linear;
  const RunLoopResult slow = run(false, linear);
  EXPECT_FALSE(slow.converged) << "generations " << linear.num_draws() << ", R-hat " << slow.worst_rhat;
}

TEST(Summary, QuantilesMeanAndSdOfKnownValues) {
  std::vector<double> values;
  for (int k = 0; k <= 100; ++k) values.push_back(100 - k);  // 100 .. 0, unsorted
  values.push_back(std::nan(""));
  const SummaryRow r = summarize_values("x", "m", values);
  EXPECT_DOUBLE_EQ(r.median, 50.0);
  EXPECT_DOUBLE_EQ(r.lower, 16.0);
  EXPECT_DOUBLE_EQ(r.upper, 84.0);
  EXPECT_DOUBLE_EQ(r.lower95, 2.5);
  EXPECT_DOUBLE_EQ(r.upper95, 97.5);
  EXPECT_DOUBLE_EQ(r.mean, 50.0);
  EXPECT_NEAR(r.sd, std::sqrt(101.0 * 102.0 / 12.0), 1e-12);
  EXPECT_TRUE(std::isnan(r.rhat));
  EXPECT_THROW(summarize_values("y", "", {std::nan("")}), std::runtime_error);
}

}  // namespace
}  // namespace swarmfit
