// Priors against exact answers: normalisation, moments of draws, support, the parser's errors;
// and the HDF5 run file: what is written is what is read, and a sampler restored from it goes on
// bitwise as the original.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <limits>

#include "swarmfit/inference/prior.hpp"
#include "swarmfit/inference/run_file.hpp"

namespace swarmfit {
namespace {

double integrate(const Prior& p, double a, double b) {
  const int n = 200000;  // midpoint rule
  double sum = 0;
  for (int k = 0; k < n; ++k) sum += std::exp(p.log_density(a + (b - a) * (k + 0.5) / n));
  return sum * (b - a) / n;
}

TEST(Prior, DensitiesAreNormalisedAndDrawsHaveTheirMoments) {
  const char* texts[] = {"uniform(-2, 3)", "log_uniform(0.1, 100)", "normal(1.5, 0.3)",
                         "truncated_normal(0, 1, -0.5, 2)", " truncated_normal( 2, 0.5, 0, 10 ) "};
  for (const char* text : texts) {
    const Prior p = parse_prior(text);
    const double lo = std::isfinite(p.lower) ? p.lower : p.a - 12 * p.b;
    const double hi = std::isfinite(p.upper) ? p.upper : p.a + 12 * p.b;
    // Midpoint rule: 1.5e-7 for log_uniform, <= 3e-12 for the others; a truncated normal that
    // forgot its truncation constant (1 - 3.2e-5 for the last one) fails.
    EXPECT_NEAR(integrate(p, lo, hi), 1.0, 1e-6) << text;
    if (std::isfinite(p.lower)) {
      EXPECT_EQ(p.log_density(p.lower - 1e-9 * (1 + std::fabs(p.lower))), -INFINITY) << text;
      EXPECT_EQ(p.log_density(p.upper + 1e-9 * (1 + std::fabs(p.upper))), -INFINITY) << text;
    }
    const CounterRandom random(3);
    const int n = 200000;
    double sum = 0, sum2 = 0;
    for (int k = 0; k < n; ++k) {
      const double x =
          p.sample(random.uniform(RandomPurpose::kTest, k, 0, 0), random.uniform(RandomPurpose::kTest, k, 0, 1));
      ASSERT_GE(x, p.lower) << text;
      ASSERT_LE(x, p.upper) << text;
      sum += x;
      sum2 += x * x;
    }
    const double mean = sum / n, sd = std::sqrt(sum2 / n - mean * mean);
    EXPECT_NEAR(mean, p.mean(), 5 * p.standard_deviation() / std::sqrt(n)) << text;
    EXPECT_NEAR(sd, p.standard_deviation(), 5 * p.standard_deviation() / std::sqrt(2.0 * n) * 1.5) << text;
    // The text form parses back to the same prior.
    EXPECT_EQ(parse_prior(p.text()).text(), p.text());
  }
  EXPECT_NEAR(parse_prior("log_uniform(1, 100)").log_density(10), -std::log(10) - std::log(std::log(100.0)), 1e-15);
}

TEST(Prior, SyntaxErrorsSayWhat) {
  const struct {
    const char* text;
    const char* message;
  } bad[] = {{"uniform(1)", "takes 2 arguments"},
             {"uniform(2, 1)", "needs a < b"},
             {"log_uniform(0, 1)", "needs 0 < a < b"},
             {"normal(0, -1)", "sigma > 0"},
             {"normal(0, x)", "not a finite number"},
             {"gaussian(0, 1)", "unknown distribution"},
             {"uniform(0, 1", "missing ')'"},
             {"uniform(0, 1) x", "text after ')'"},
             {"truncated_normal(0, 1, 30, 40)", "no probability"},
             {"fixed(1, 2)", "one value"}};
  for (const auto& b : bad) {
    try {
      parse_prior(b.text);
      ADD_FAILURE() << b.text << " was accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(b.message), std::string::npos) << b.text << ": " << e.what();
    }
  }
  EXPECT_EQ(parse_prior("fixed").kind, PriorKind::kFixed);
  EXPECT_EQ(parse_prior("fixed(2.5)").value, 2.5);
}

TEST(ParameterSpace, FixedParametersStayOutOfTheSampler) {
  const ParameterSpace space(
      {"a", "b", "c"}, {parse_prior("uniform(0, 1)"), parse_prior("fixed(7)"), parse_prior("fixed")}, {0.5, 1.0, 3.0});
  ASSERT_EQ(space.num_free(), 1);
  double full[3];
  const double free[1] = {0.25};
  space.expand(free, full);
  EXPECT_EQ(full[0], 0.25);
  EXPECT_EQ(full[1], 7.0);
  EXPECT_EQ(full[2], 3.0);
  EXPECT_EQ(space.log_prior(free), 0.0);
  const double outside[1] = {1.5};
  EXPECT_EQ(space.log_prior(outside), -INFINITY);
}

TEST(RunFile, WhatIsWrittenIsReadAndTheSamplerGoesOnBitwise) {
  BatchedLogDensity f = [](const Eigen::MatrixXd& x, Eigen::VectorXd& lp, Eigen::VectorXd& ll, std::vector<int>& s) {
    lp = Eigen::VectorXd::Zero(x.cols());
    ll.resize(x.cols());
    s.assign(x.cols(), 0);
    for (long k = 0; k < x.cols(); ++k) ll(k) = -0.5 * x.col(k).squaredNorm() - (x(0, k) > 2 ? 1.0 : 0.0);
  };
  DemcmcSettings settings;
  settings.seed = 11;
  settings.snooker.probability = 0.2;
  settings.temperatures = {1.0, 3.0};
  const CounterRandom random(1);
  Eigen::MatrixXd x0(3, 2 * 12);
  for (long k = 0; k < x0.size(); ++k) x0(k) = random.normal(RandomPurpose::kTest, k, 0, 0);
  Demcmc a(x0, f, settings);
  RunRecord run;
  run.names = {"x", "y", "z", "w"};
  run.units = {"m", "", "s", ""};
  run.priors = {parse_prior("normal(0, 10)"), parse_prior("uniform(-5, 5)"), parse_prior("log_uniform(1, 2)"),
                parse_prior("fixed(3)")};
  run.values = {0, 0, 1.5, 3};
  run.free = {0, 1, 2};
  run.settings = settings;
  run.thin = 2;
  for (int g = 0; g < 20; ++g) {
    a.step();
    if (a.generation() % 2 == 0) run.chain.append(a);
  }
  run.state = a.state();
  run.attributes["config"] = "line one\nline two = [x]\n";
  const std::string path = testing::TempDir() + "/run_" + std::to_string(getpid()) + ".h5";
  write_run(path, run);
  const RunRecord back = read_run(path);
  std::remove(path.c_str());
  EXPECT_EQ(back.names, run.names);
  EXPECT_EQ(back.units, run.units);
  EXPECT_EQ(back.free, run.free);
  EXPECT_EQ(back.values, run.values);
  for (std::size_t k = 0; k < run.priors.size(); ++k) EXPECT_EQ(back.priors[k].text(), run.priors[k].text());
  EXPECT_EQ(back.chain.parameters, run.chain.parameters);
  EXPECT_EQ(back.chain.log_likelihood, run.chain.log_likelihood);
  EXPECT_EQ(back.chain.accepted, run.chain.accepted);
  EXPECT_EQ(back.chain.generation, run.chain.generation);
  EXPECT_EQ(back.settings.temperatures, settings.temperatures);
  EXPECT_EQ(back.settings.snooker.probability, settings.snooker.probability);
  EXPECT_EQ(back.settings.seed, settings.seed);
  EXPECT_EQ(back.thin, 2);
  EXPECT_EQ(back.attributes.at("config"), run.attributes.at("config"));
  Demcmc b(back.state, f, back.settings);
  for (int g = 0; g < 15; ++g) {
    a.step();
    b.step();
  }
  EXPECT_EQ((a.state().walkers - b.state().walkers).cwiseAbs().maxCoeff(), 0.0);
  EXPECT_EQ(a.state().swaps_accepted, b.state().swaps_accepted);
  EXPECT_THROW(read_run(path), std::runtime_error);
}

}  // namespace
}  // namespace swarmfit
