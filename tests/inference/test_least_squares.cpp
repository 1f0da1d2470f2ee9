// The Levenberg-Marquardt optimiser and its Laplace walkers (least_squares.hpp,
// initial_walkers.hpp) against exact answers: the normal equations of a linear model, the
// minimum of Rosenbrock's valley, the Student-t location found by an independent root search, a
// bound-constrained optimum, and draws whose moments are the covariance's.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "swarmfit/inference/initial_walkers.hpp"
#include "swarmfit/inference/least_squares.hpp"

using namespace swarmfit;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// Residual rows r(theta) (whitened) with ln L = -sum r^2 / 2 (Gaussian rows) or the Student-t's
// -(nu + 1)/2 sum ln(1 + r^2 / nu), flat priors on [lower, upper].
struct Problem {
  std::function<Eigen::VectorXd(const Eigen::VectorXd&)> r;
  std::vector<double> nu;
  Eigen::VectorXd lower, upper;
  long calls = 0, columns = 0;

  LeastSquaresProblem make() {
    LeastSquaresProblem p;
    const long d = lower.size();
    p.residuals = [this](const Eigen::MatrixXd& x, Eigen::MatrixXd& res, Eigen::VectorXd& lp, Eigen::VectorXd& ll,
                         std::vector<int>& status) {
      ++calls;
      columns += x.cols();
      res.resize(static_cast<long>(nu.size()), x.cols());
      lp.setZero(x.cols());
      ll.resize(x.cols());
      status.assign(x.cols(), 0);
      for (long k = 0; k < x.cols(); ++k) {
        const bool inside = (x.col(k).array() >= lower.array()).all() && (x.col(k).array() <= upper.array()).all();
        if (!inside) {
          lp(k) = -kInf;
          ll(k) = -kInf;
          res.col(k).setConstant(std::nan(""));
          continue;
        }
        res.col(k) = r(x.col(k));
        double s = 0;
        for (std::size_t i = 0; i < nu.size(); ++i) {
          const double z = res(static_cast<long>(i), k);
          s += nu[i] > 0 ? -0.5 * (nu[i] + 1) * std::log1p(z * z / nu[i]) : -0.5 * z * z;
        }
        ll(k) = s;
      }
    };
    p.row_nu = nu;
    p.active.assign(d, 1);
    p.lower = lower;
    p.upper = upper;
    p.scale = (upper - lower) / std::sqrt(12.0);
    return p;
  }
};

// y = A theta + noise (sigma 0.3, 40 rows: 1, t, sin 6t): the linear model two tests share, with
// its exact least-squares solution and Laplace covariance sigma^2 (A^T A)^-1.
struct LinearModel {
  static constexpr long m = 40, d = 3;
  static constexpr double sigma = 0.3;
  Eigen::MatrixXd A{m, d};
  Eigen::VectorXd y{m};
  Problem prob;
  Eigen::VectorXd exact;
  Eigen::MatrixXd covariance;

  explicit LinearModel(unsigned seed) {
    std::mt19937_64 rng(seed);
    std::normal_distribution<double> normal;
    for (long i = 0; i < m; ++i) {
      const double t = i / double(m - 1);
      A.row(i) << 1.0, t, std::sin(6 * t);
      y(i) = A.row(i).dot(Eigen::Vector3d(1.5, -2.0, 0.7)) + sigma * normal(rng);
    }
    prob.r = [this](const Eigen::VectorXd& x) { return Eigen::VectorXd((y - A * x) / sigma); };
    prob.nu.assign(m, 0.0);
    prob.lower = Eigen::Vector3d::Constant(-50);
    prob.upper = Eigen::Vector3d::Constant(50);
    exact = (A.transpose() * A).ldlt().solve(A.transpose() * y);
    covariance = (A.transpose() * A / (sigma * sigma)).inverse();
  }
  LinearModel(const LinearModel&) = delete;  // prob.r captures this
};

}  // namespace

// y = A theta + noise, sigma = 0.3: the optimum is the normal equations' solution and the Laplace
// covariance sigma^2 (A^T A)^-1: from 30 standard deviations away, in a few steps, to the stopping
// rule's 1% of a standard deviation; the covariance to rounding (a linear model's forward
// differences are exact).
TEST(LeastSquares, LinearModelGivesTheNormalEquationsAndTheirCovariance) {
  LinearModel lm(5);
  const long d = LinearModel::d;
  const double sigma = LinearModel::sigma;
  const Eigen::MatrixXd& A = lm.A;
  const Eigen::VectorXd& y = lm.y;
  const Eigen::VectorXd& exact = lm.exact;
  const Eigen::MatrixXd& covariance = lm.covariance;
  Problem& prob = lm.prob;
  Eigen::VectorXd start = exact;
  for (long j = 0; j < d; ++j) start(j) += 30 * std::sqrt(covariance(j, j)) * (j % 2 ? -1 : 1);
  const LeastSquaresProblem p = prob.make();
  const LeastSquaresResult r = optimize_least_squares(start, p, 50);
  EXPECT_TRUE(r.converged) << r.stopped;
  EXPECT_LE(r.iterations, 6);
  for (long j = 0; j < d; ++j) {
    EXPECT_NEAR(r.best(j), exact(j), 0.01 * std::sqrt(covariance(j, j))) << j;
    for (long k = 0; k < d; ++k)
      EXPECT_NEAR(r.covariance(j, k), covariance(j, k), 1e-6 * std::sqrt(covariance(j, j) * covariance(k, k)));
  }
  const double top = -0.5 * ((y - A * exact) / sigma).squaredNorm();
  EXPECT_LE(r.log_posterior, top);
  EXPECT_GE(r.log_posterior, top - 0.5 * d * 1e-4);
}

// Rosenbrock's curved valley as residuals (10 (x2 - x1^2), 1 - x1) from (-1.2, 1) (More, Garbow &
// Hillstrom 1981, ACM TOMS 7, 17, problem 1): the minimum (1, 1), to the stopping rule's 1% of a
// standard deviation (the Laplace standard deviations there are 1 and 2).
TEST(LeastSquares, RosenbrockValleyEndsAtItsMinimum) {
  Problem prob;
  prob.r = [](const Eigen::VectorXd& x) { return Eigen::Vector2d(10 * (x(1) - x(0) * x(0)), 1 - x(0)); };
  prob.nu = {0.0, 0.0};
  prob.lower = Eigen::Vector2d(-5, -5);
  prob.upper = Eigen::Vector2d(5, 5);
  const LeastSquaresResult r = optimize_least_squares(Eigen::Vector2d(-1.2, 1.0), prob.make(), 200);
  EXPECT_TRUE(r.converged) << r.stopped;
  EXPECT_NEAR(r.best(0), 1.0, 0.01);
  EXPECT_NEAR(r.best(1), 1.0, 0.02);
  EXPECT_NEAR(std::sqrt(r.covariance(0, 0)), 1.0, 0.05);
  EXPECT_GT(r.log_posterior, -1e-3);
  // Each step is two batched calls (the Jacobian, then all the damping trials), not one per trial.
  EXPECT_LE(prob.calls, 2 * r.iterations + 2);
}

// A location from data with outliers under a Student-t (nu = 4) likelihood: iterative reweighting
// ends where the score sum w_i r_i vanishes, found here independently by bisection of the score
// around the median (the Student-t score is monotone near the bulk), not at the mean the outliers
// pull away. A second parameter held (active = 0) stays where it started.
TEST(LeastSquares, StudentTRowsReachTheScoresRootAndHeldParametersStay) {
  std::vector<double> data = {0.1, -0.3, 0.25, 0.05, -0.12, 0.31, -0.2, 0.0, 0.15, -0.05, 6.0, 9.5, -7.0, 8.0};
  const double nu = 4.0;
  Problem prob;
  prob.r = [&](const Eigen::VectorXd& x) {
    Eigen::VectorXd r(static_cast<long>(data.size()));
    for (std::size_t i = 0; i < data.size(); ++i) r(static_cast<long>(i)) = (data[i] - x(0)) / 0.2;
    return r;
  };
  prob.nu.assign(data.size(), nu);
  prob.lower = Eigen::Vector2d(-10, -10);
  prob.upper = Eigen::Vector2d(10, 10);
  LeastSquaresProblem p = prob.make();
  p.active[1] = 0;
  const LeastSquaresResult r = optimize_least_squares(Eigen::Vector2d(2.0, 3.25), p, 100);
  EXPECT_TRUE(r.converged) << r.stopped;
  auto score = [&](double mu) {
    double s = 0;
    for (double v : data) {
      const double z = (v - mu) / 0.2;
      s += (nu + 1) * z / (nu + z * z);
    }
    return s;
  };
  double lo = -0.2, hi = 0.3;
  ASSERT_GT(score(lo), 0);
  ASSERT_LT(score(hi), 0);
  for (int k = 0; k < 200; ++k) (score(0.5 * (lo + hi)) > 0 ? lo : hi) = 0.5 * (lo + hi);
  const double sd = std::sqrt(0.04 * (nu + 3) / ((nu + 1) * data.size()));
  EXPECT_NEAR(r.best(0), 0.5 * (lo + hi), 0.01 * sd);
  EXPECT_EQ(r.best(1), 3.25);
  EXPECT_EQ(r.covariance(1, 1), 0.0);
  double mean = 0;
  for (double v : data) mean += v / data.size();
  EXPECT_GT(std::fabs(mean - r.best(0)), 0.5);  // the outliers' pull, which the Student-t resists
  // Fisher information of a Student-t location: n (nu + 1) / ((nu + 3) s^2) (Lange et al. 1989).
  EXPECT_NEAR(r.covariance(0, 0), 0.04 * (nu + 3) / ((nu + 1) * data.size()), 1e-9);
}

// The unconstrained optimum of (x - 2)^2 + (y - x)^2 lies outside x <= 1: the result is the bound
// constrained optimum x = 1, y = 1, with y still free to move along the bound (a linear problem:
// its Gauss-Newton steps are exact).
TEST(LeastSquares, OptimumBeyondABoundEndsOnTheBound) {
  Problem prob;
  prob.r = [](const Eigen::VectorXd& x) { return Eigen::Vector2d((x(0) - 2) / 0.1, (x(1) - x(0)) / 0.1); };
  prob.nu = {0.0, 0.0};
  prob.lower = Eigen::Vector2d(-3, -3);
  prob.upper = Eigen::Vector2d(1, 3);
  const LeastSquaresResult r = optimize_least_squares(Eigen::Vector2d(-2.0, 2.5), prob.make(), 100);
  EXPECT_TRUE(r.converged) << r.stopped;
  EXPECT_NEAR(r.best(0), 1.0, 1e-6);
  EXPECT_NEAR(r.best(1), 1.0, 1e-3);
}

TEST(LeastSquares, StartWithoutAFinitePosteriorIsRefusedAndNothingToFitReturnsTheStart) {
  Problem prob;
  prob.r = [](const Eigen::VectorXd& x) { return Eigen::VectorXd(x); };
  prob.nu = {0.0};
  prob.lower = Eigen::VectorXd::Constant(1, -1);
  prob.upper = Eigen::VectorXd::Constant(1, 1);
  EXPECT_THROW(optimize_least_squares(Eigen::VectorXd::Constant(1, 2.0), prob.make(), 10), std::invalid_argument);
  // Every parameter held: the start back, converged, no covariance.
  LeastSquaresProblem held = prob.make();
  held.active[0] = 0;
  const LeastSquaresResult r = optimize_least_squares(Eigen::VectorXd::Constant(1, 0.5), held, 10);
  EXPECT_EQ(r.best(0), 0.5);
  EXPECT_EQ(r.covariance(0, 0), 0.0);
  EXPECT_NEAR(r.log_posterior, -0.125, 1e-15);
}

// Walkers drawn from a Laplace approximation: 4,000 draws' mean and covariance match (within
// 5 standard errors), a parameter without variance is scattered as initial_walkers scatters, every
// draw stays inside the support (reflected) and the same seed gives the same walkers.
TEST(LaplaceWalkers, DrawsHaveTheCovariance) {
  const ParameterSpace space(
      {"a", "b", "c"},
      {parse_prior("uniform(-100, 100)"), parse_prior("uniform(-100, 100)"), parse_prior("uniform(0, 1)")},
      {0.0, 0.0, 0.5});
  const Eigen::Vector3d centre(1.0, -2.0, 0.5);
  Eigen::Matrix3d cov = Eigen::Matrix3d::Zero();
  cov(0, 0) = 4.0;
  cov(1, 1) = 1.0;
  cov(0, 1) = cov(1, 0) = 1.6;  // correlation 0.8
  const BatchedLogDensity flat = [&](const Eigen::MatrixXd& x, Eigen::VectorXd& lp, Eigen::VectorXd& ll,
                                     std::vector<int>& status) {
    lp.resize(x.cols());
    ll.setZero(x.cols());
    status.assign(x.cols(), 0);
    for (long k = 0; k < x.cols(); ++k) lp(k) = space.log_prior(x.col(k).data());
  };
  const long n = 4000;
  const Eigen::MatrixXd x = laplace_walkers(space, centre, cov, n, 0.01, 9, 3, flat);
  const Eigen::Vector3d mean = x.rowwise().mean();
  const Eigen::MatrixXd centred = x.colwise() - mean;
  const Eigen::Matrix3d sample = centred * centred.transpose() / (n - 1);
  EXPECT_NEAR(mean(0), 1.0, 5 * 2.0 / std::sqrt(n));
  EXPECT_NEAR(mean(1), -2.0, 5 * 1.0 / std::sqrt(n));
  EXPECT_NEAR(sample(0, 0), 4.0, 5 * 4.0 * std::sqrt(2.0 / n));
  EXPECT_NEAR(sample(1, 1), 1.0, 5 * 1.0 * std::sqrt(2.0 / n));
  EXPECT_NEAR(sample(0, 1) / std::sqrt(sample(0, 0) * sample(1, 1)), 0.8, 5 * (1 - 0.64) / std::sqrt(n));
  // c: 0.01 prior standard deviations (0.01 / sqrt(12)) around 0.5.
  EXPECT_NEAR(std::sqrt(sample(2, 2)), 0.01 / std::sqrt(12.0), 5 * 0.01 / std::sqrt(12.0) / std::sqrt(2.0 * n));
  EXPECT_GE(x.row(2).minCoeff(), 0.0);
  EXPECT_LE(x.row(2).maxCoeff(), 1.0);
  EXPECT_EQ((x - laplace_walkers(space, centre, cov, n, 0.01, 9, 3, flat)).cwiseAbs().maxCoeff(), 0.0);
}

// The least-squares start's walkers: drawn from the Laplace approximation at the optimum, their
// covariance sigma^2 (A^T A)^-1 for the linear model; with laplace_scale = 1.6, 1.6^2 times it
// (an over-dispersed start), about the same mean.
TEST(StartingWalkers, LaplaceScaleWidensTheLeastSquaresStart) {
  const long d = LinearModel::d, n = 4000;
  LinearModel lm(11);
  const LeastSquaresProblem p = lm.prob.make();
  const ParameterSpace space(
      {"a", "b", "c"},
      {parse_prior("uniform(-50, 50)"), parse_prior("uniform(-50, 50)"), parse_prior("uniform(-50, 50)")},
      {0.0, 0.0, 0.0});
  const BatchedLogDensity f = [&](const Eigen::MatrixXd& x, Eigen::VectorXd& lp, Eigen::VectorXd& ll,
                                  std::vector<int>& status) {
    Eigen::MatrixXd res;
    p.residuals(x, res, lp, ll, status);
  };
  const Eigen::MatrixXd& covariance = lm.covariance;
  const Eigen::VectorXd& exact = lm.exact;
  for (double scale : {1.0, 1.6}) {
    SCOPED_TRACE(scale);
    StartSettings s;
    s.walkers = n;
    s.least_squares = 30;
    s.laplace_scale = scale;
    s.seed = 4;
    const Eigen::MatrixXd x =
        starting_walkers(space, Eigen::Vector3d(3.0, 1.0, -2.0), s, f, {}, 0.5, nullptr, {}, nullptr, &p);
    ASSERT_EQ(x.cols(), n);
    const Eigen::VectorXd mean = x.rowwise().mean();
    const Eigen::MatrixXd centred = x.colwise() - mean;
    const Eigen::MatrixXd sample = centred * centred.transpose() / (n - 1.0);
    for (long j = 0; j < d; ++j) {
      const double var = scale * scale * covariance(j, j);
      EXPECT_NEAR(mean(j), exact(j), 5 * std::sqrt(var / n)) << j;
      EXPECT_NEAR(sample(j, j), var, 5 * var * std::sqrt(2.0 / n)) << j;
    }
  }
}
