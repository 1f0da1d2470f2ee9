// The DEMCMC sampler on targets with known answers, with fixed seeds (design/STYLE.md habit 7).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "swarmfit/inference/demcmc.hpp"
#include "swarmfit/inference/diagnostics.hpp"

namespace swarmfit {
namespace {

// A correlated 10-d Gaussian: covariance C_ij = s_i s_j rho^|i-j|, means m_i.
struct Gaussian {
  int d = 10;
  Eigen::VectorXd mean, scale;
  Eigen::MatrixXd cov, precision;
  Gaussian() : mean(d), scale(d), cov(d, d) {
    for (int i = 0; i < d; ++i) {
      mean(i) = 0.5 * i - 2.0;
      scale(i) = 0.3 + 0.2 * i;
    }
    for (int i = 0; i < d; ++i)
      for (int j = 0; j < d; ++j) cov(i, j) = scale(i) * scale(j) * std::pow(0.7, std::abs(i - j));
    precision = cov.inverse();
  }
  BatchedLogDensity density() const {
    return [this](const Eigen::MatrixXd& x, Eigen::VectorXd& logp, std::vector<int>& status) {
      logp.resize(x.cols());
      status.assign(x.cols(), 0);
      for (long k = 0; k < x.cols(); ++k) {
        const Eigen::VectorXd r = x.col(k) - mean;
        logp(k) = -0.5 * r.dot(precision * r);
      }
    };
  }
};

Eigen::MatrixXd start(int d, int walkers, std::uint64_t seed) {
  CounterRandom random(seed);
  Eigen::MatrixXd x(d, walkers);
  for (int w = 0; w < walkers; ++w)
    for (int p = 0; p < d; ++p) x(p, w) = 3.0 * random.normal(RandomPurpose::kInitial, w, 0, p);
  return x;
}

TEST(Random, CounterStreamsAreReproducibleAndUniform) {
  CounterRandom a(42), b(42), c(43);
  EXPECT_EQ(a.uniform(RandomPurpose::kTest, 3, 7, 11), b.uniform(RandomPurpose::kTest, 3, 7, 11));
  EXPECT_NE(a.uniform(RandomPurpose::kTest, 3, 7, 11), c.uniform(RandomPurpose::kTest, 3, 7, 11));
  EXPECT_NE(a.uniform(RandomPurpose::kTest, 3, 7, 11), a.uniform(RandomPurpose::kAccept, 3, 7, 11));
  // Moments of 1e5 uniforms and normals within 5 standard errors.
  const int n = 100000;
  double su = 0, su2 = 0, sn = 0, sn2 = 0;
  for (int k = 0; k < n; ++k) {
    const double u = a.uniform(RandomPurpose::kTest, k % 97, k / 97, k % 5);
    const double z = a.normal(RandomPurpose::kTest, k % 89, k / 89, k % 3);
    ASSERT_GT(u, 0.0);
    ASSERT_LT(u, 1.0);
    su += u;
    su2 += u * u;
    sn += z;
    sn2 += z * z;
  }
  EXPECT_NEAR(su / n, 0.5, 5 * std::sqrt(1.0 / 12 / n));
  EXPECT_NEAR(su2 / n - 0.25, 1.0 / 12, 5 * std::sqrt(1.0 / 180 / n));
  EXPECT_NEAR(sn / n, 0.0, 5 * std::sqrt(1.0 / n));
  EXPECT_NEAR(sn2 / n, 1.0, 5 * std::sqrt(2.0 / n));
}

TEST(Demcmc, CorrelatedGaussianMeansAndCovariances) {
  const Gaussian target;
  const int walkers = 40, burn = 1000, kept = 4000;
  DemcmcSettings settings;
  settings.seed = 20261122;
  Demcmc sampler(start(target.d, walkers, 7), target.density(), settings);
  for (int g = 0; g < burn; ++g) sampler.step();
  std::vector<Eigen::MatrixXd> draws;
  std::vector<std::vector<double>> walker_means(target.d);
  for (int g = 0; g < kept; ++g) {
    sampler.step();
    draws.push_back(sampler.walkers());
    for (int p = 0; p < target.d; ++p) walker_means[p].push_back(sampler.walkers().row(p).mean());
  }
  // Monte-Carlo error from the integrated autocorrelation time of the walker-averaged series.
  double tau = 1;
  for (int p = 0; p < target.d; ++p) tau = std::max(tau, integrated_autocorrelation_time(walker_means[p]));
  const double ess = static_cast<double>(kept) * walkers / tau;
  EXPECT_GT(ess, 1000.0) << "tau " << tau;
  Eigen::VectorXd mean = Eigen::VectorXd::Zero(target.d);
  for (const auto& x : draws) mean += x.rowwise().sum();
  mean /= static_cast<double>(kept) * walkers;
  Eigen::MatrixXd cov = Eigen::MatrixXd::Zero(target.d, target.d);
  for (const auto& x : draws) {
    const Eigen::MatrixXd r = x.colwise() - mean;
    cov += r * r.transpose();
  }
  cov /= static_cast<double>(kept) * walkers - 1;
  for (int i = 0; i < target.d; ++i) {
    EXPECT_NEAR(mean(i), target.mean(i), 4.5 * target.scale(i) / std::sqrt(ess)) << "mean " << i;
    for (int j = 0; j < target.d; ++j) {
      // Standard error of a sample covariance: sqrt((C_ii C_jj + C_ij^2) / ess).
      const double se = std::sqrt((target.cov(i, i) * target.cov(j, j) + target.cov(i, j) * target.cov(i, j)) / ess);
      EXPECT_NEAR(cov(i, j), target.cov(i, j), 4.5 * se) << "cov " << i << "," << j;
    }
  }
  EXPECT_GT(sampler.acceptance_fraction(), 0.1);
  EXPECT_LT(sampler.acceptance_fraction(), 0.6);
}

TEST(Demcmc, SameSeedSameChainAndRestoreContinuesExactly) {
  const Gaussian target;
  DemcmcSettings settings;
  settings.seed = 5;
  Demcmc a(start(target.d, 24, 1), target.density(), settings);
  Demcmc b(start(target.d, 24, 1), target.density(), settings);
  for (int g = 0; g < 50; ++g) {
    a.step();
    b.step();
  }
  EXPECT_EQ((a.walkers() - b.walkers()).cwiseAbs().maxCoeff(), 0.0);
  // A fresh sampler restored from a's state continues as a does (no hidden generator state).
  Demcmc c(start(target.d, 24, 99), target.density(), settings);
  c.restore(a.walkers(), a.log_density(), a.status(), a.accepted(), a.generation());
  for (int g = 0; g < 30; ++g) {
    a.step();
    c.step();
  }
  EXPECT_EQ((a.walkers() - c.walkers()).cwiseAbs().maxCoeff(), 0.0);
  EXPECT_EQ(a.accepted(), c.accepted());
}

TEST(Demcmc, ImpossibleProposalsAreNeverAccepted) {
  // A box prior: -inf outside [0, 1]^d; every walker must stay inside.
  const int d = 3;
  BatchedLogDensity box = [](const Eigen::MatrixXd& x, Eigen::VectorXd& logp, std::vector<int>& status) {
    logp.resize(x.cols());
    status.assign(x.cols(), 0);
    for (long k = 0; k < x.cols(); ++k) {
      const bool inside = (x.col(k).array() >= 0).all() && (x.col(k).array() <= 1).all();
      logp(k) = inside ? 0.0 : -std::numeric_limits<double>::infinity();
      status[k] = inside ? 0 : 9;
    }
  };
  Eigen::MatrixXd x0 = (start(d, 12, 3).array().abs() * 0.1 + 0.3).matrix().cwiseMin(0.9);
  Demcmc sampler(x0, box, DemcmcSettings{});
  for (int g = 0; g < 500; ++g) sampler.step();
  EXPECT_GE(sampler.walkers().minCoeff(), 0.0);
  EXPECT_LE(sampler.walkers().maxCoeff(), 1.0);
  for (int s : sampler.status()) EXPECT_EQ(s, 0);
}

TEST(Demcmc, RefusesTooFewWalkers) {
  const Gaussian target;
  EXPECT_THROW(Demcmc(start(target.d, 20, 1), target.density(), DemcmcSettings{}), std::invalid_argument);
  EXPECT_THROW(Demcmc(start(target.d, 23, 1), target.density(), DemcmcSettings{}), std::invalid_argument);
}

}  // namespace
}  // namespace swarmfit

namespace swarmfit {
namespace {

std::vector<std::vector<double>> ar1_chains(int chains, int draws, double phi, std::uint64_t seed, double shift_last) {
  CounterRandom random(seed);
  std::vector<std::vector<double>> out(chains, std::vector<double>(draws));
  for (int c = 0; c < chains; ++c) {
    double x = random.normal(RandomPurpose::kTest, c, 0, 0) / std::sqrt(1 - phi * phi);
    for (int t = 0; t < draws; ++t) {
      x = phi * x + random.normal(RandomPurpose::kTest, c, t + 1, 0);
      out[c][t] = x + (c == chains - 1 ? shift_last : 0.0);
    }
  }
  return out;
}

// Known answers: independent draws have R-hat ~ 1 and ESS ~ the number of draws; AR(1) draws
// with coefficient phi have ESS ~ S (1 - phi) / (1 + phi); a chain shifted by two standard
// deviations shows in R-hat.
TEST(Diagnostics, RhatAndEssOnKnownChains) {
  const auto iid = ar1_chains(4, 2000, 0.0, 11, 0.0);
  const ConvergenceDiagnostics a = convergence_diagnostics(iid);
  EXPECT_LT(a.rhat, 1.01);
  EXPECT_NEAR(a.ess_bulk, 8000, 0.12 * 8000);
  EXPECT_NEAR(a.ess_tail, 8000, 0.2 * 8000);
  const double phi = 0.9;
  const auto ar = ar1_chains(4, 4000, phi, 12, 0.0);
  const ConvergenceDiagnostics b = convergence_diagnostics(ar);
  const double expected = 16000 * (1 - phi) / (1 + phi);
  EXPECT_NEAR(b.ess_bulk, expected, 0.25 * expected);
  EXPECT_LT(b.rhat, 1.02);
  const double sd = 1 / std::sqrt(1 - phi * phi);
  const auto shifted = ar1_chains(4, 4000, phi, 13, 2.0 * sd);
  EXPECT_GT(convergence_diagnostics(shifted).rhat, 1.1);
  EXPECT_THROW(convergence_diagnostics({iid[0]}), std::invalid_argument);
}

}  // namespace
}  // namespace swarmfit
