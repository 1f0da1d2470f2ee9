#include "swarmfit/inference/least_squares.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "swarmfit/inference/optimizer.hpp"

namespace swarmfit {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

struct Point {
  Eigen::VectorXd x, r;
  double log_posterior = -kInf;
};

// The damping factors of one step's trials, relative to the current lambda: from nearly
// Gauss-Newton to nearly gradient ascent, so that one batched call finds the step a sequential
// Levenberg-Marquardt would reach after several rejections (Nielsen 1999, IMM-REP-1999-05, for the
// usual sequential update of lambda this replaces).
constexpr double kDampings[] = {1e-4, 1e-2, 1e-1, 1.0, 10.0, 1e2, 1e4};

// Inverse of a symmetric positive semi-definite matrix, scaled to unit diagonal first and its
// eigenvalues floored (a direction the data do not constrain gets the floor's variance, then each
// standard deviation is capped at `cap`).
Eigen::MatrixXd covariance_of(const Eigen::MatrixXd& information, const Eigen::VectorXd& cap) {
  const long k = information.rows();
  Eigen::VectorXd s(k);
  for (long j = 0; j < k; ++j) s(j) = information(j, j) > 0 ? 1.0 / std::sqrt(information(j, j)) : 0.0;
  Eigen::MatrixXd scaled = s.asDiagonal() * information * s.asDiagonal();
  for (long j = 0; j < k; ++j)
    if (s(j) == 0) scaled(j, j) = 1.0;  // an unconstrained parameter: no correlation, capped below
  Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> eig(scaled);
  Eigen::VectorXd lambda = eig.eigenvalues();
  const double floor = 1e-12 * std::max(1.0, lambda.maxCoeff());
  for (long j = 0; j < k; ++j) lambda(j) = 1.0 / std::max(lambda(j), floor);
  Eigen::MatrixXd c =
      s.asDiagonal() * (eig.eigenvectors() * lambda.asDiagonal() * eig.eigenvectors().transpose()) * s.asDiagonal();
  for (long j = 0; j < k; ++j)
    if (s(j) == 0) c(j, j) = cap(j) * cap(j);
  // Cap each standard deviation at the prior's, keeping the correlations.
  Eigen::VectorXd f(k);
  for (long j = 0; j < k; ++j) f(j) = c(j, j) > cap(j) * cap(j) ? cap(j) / std::sqrt(c(j, j)) : 1.0;
  return f.asDiagonal() * c * f.asDiagonal();
}

}  // namespace

LeastSquaresResult optimize_least_squares(const Eigen::VectorXd& start, const LeastSquaresProblem& p, long iterations,
                                          const ProgressCallback& progress, double progress_seconds) {
  const long d = start.size();
  std::vector<long> act;
  for (long j = 0; j < d; ++j)
    if (p.active[j]) act.push_back(j);
  const long k = static_cast<long>(act.size());
  const long m = static_cast<long>(p.row_nu.size());
  LeastSquaresResult out;
  auto evaluate = [&](const Eigen::MatrixXd& x, Eigen::MatrixXd& r, Eigen::VectorXd& f) {
    Eigen::VectorXd lp, ll;
    std::vector<int> status;
    p.residuals(x, r, lp, ll, status);
    if (r.rows() != m || r.cols() != x.cols()) throw std::logic_error("least squares: residuals of the wrong shape");
    f.resize(x.cols());
    for (long c = 0; c < x.cols(); ++c) {
      f(c) = log_posterior_of(lp(c), ll(c));
      if (!r.col(c).allFinite()) f(c) = -kInf;
    }
    out.evaluations += x.cols();
  };
  auto inside = [&](long j, double v) { return v >= p.lower(j) && v <= p.upper(j); };

  Point here;
  here.x = start;
  {
    Eigen::MatrixXd r;
    Eigen::VectorXd f;
    evaluate(start, r, f);
    if (!(f(0) > -kInf)) throw std::invalid_argument("least squares: the start has no finite posterior");
    here.r = r.col(0);
    here.log_posterior = f(0);
  }
  // Forward-difference steps: a small fraction of the prior's width first, then of the current
  // Laplace standard deviations (small against the curvature's scale, large against round-off).
  if (k == 0) {  // nothing to fit: the start, with no covariance
    out.best = start;
    out.log_posterior = here.log_posterior;
    out.covariance = Eigen::MatrixXd::Zero(d, d);
    out.converged = true;
    out.stopped = "no parameter to fit";
    return out;
  }
  Eigen::VectorXd h(k), sd(k);
  for (long a = 0; a < k; ++a) {
    sd(a) = p.scale(act[a]);
    h(a) = 1e-5 * p.scale(act[a]);
  }
  double lambda = 1e-3;
  int rejected = 0;
  Eigen::MatrixXd information(k, k), cov(k, k);  // at `here`, kept for the result
  Eigen::VectorXd cap(k);                        // standard deviations at most the prior's
  for (long a = 0; a < k; ++a) cap(a) = p.scale(act[a]);
  const auto began = std::chrono::steady_clock::now();
  auto last_report = began;
  auto report = [&](long it, bool finished) {
    if (!progress) return;
    const auto now = std::chrono::steady_clock::now();
    if (!finished && std::chrono::duration<double>(now - last_report).count() < progress_seconds) return;
    last_report = now;
    RunProgress r;
    r.phase = RunProgress::Phase::kOptimize;
    r.generation = it;
    r.generations = iterations;
    r.finished = finished;
    r.best_log_posterior = here.log_posterior;
    progress(r);
  };

  for (long it = 0;; ++it) {
    // The Jacobian at `here`: one batched call (columns whose step leaves the support go the other way).
    Eigen::MatrixXd J = Eigen::MatrixXd::Zero(m, k);
    {
      Eigen::MatrixXd x(d, k);
      Eigen::VectorXd step(k);
      for (long a = 0; a < k; ++a) {
        const long j = act[a];
        step(a) = inside(j, here.x(j) + h(a)) ? h(a) : -h(a);
        x.col(a) = here.x;
        x(j, a) += step(a);
      }
      Eigen::MatrixXd r;
      Eigen::VectorXd f;
      evaluate(x, r, f);
      std::vector<long> again;
      for (long a = 0; a < k; ++a) {
        if (f(a) > -kInf)
          J.col(a) = (r.col(a) - here.r) / step(a);
        else
          again.push_back(a);
      }
      if (!again.empty()) {  // a failed integration one way: the other way, else the column stays zero
        Eigen::MatrixXd x2(d, static_cast<long>(again.size()));
        for (std::size_t q = 0; q < again.size(); ++q) {
          const long a = again[q], j = act[a];
          step(a) = -step(a);
          x2.col(q) = here.x;
          x2(j, q) = inside(j, here.x(j) + step(a)) ? here.x(j) + step(a) : here.x(j);
        }
        evaluate(x2, r, f);
        for (std::size_t q = 0; q < again.size(); ++q)
          if (f(q) > -kInf && x2(act[again[q]], q) != here.x(act[again[q]]))
            J.col(again[q]) = (r.col(q) - here.r) / step(again[q]);
      }
    }
    // Iteratively reweighted normal equations: maximising sum_i -rho(r_i) with
    // rho = r^2 / 2 (Gaussian) or (nu + 1)/2 ln(1 + r^2 / nu) (Student-t) has the score J^T W r,
    // W = rho'(r) / r; the Fisher information uses the expected weights instead.
    Eigen::VectorXd w(m), wf(m);
    for (long i = 0; i < m; ++i) {
      const double nu = p.row_nu[i], r = here.r(i);
      w(i) = nu > 0 ? (nu + 1) / (nu + r * r) : 1.0;
      wf(i) = nu > 0 ? (nu + 1) / (nu + 3) : 1.0;
    }
    const Eigen::MatrixXd A = J.transpose() * w.asDiagonal() * J;
    // The (reweighted) Gauss-Newton step solves A delta = g, g = -J^T W r: minus the gradient of sum rho.
    const Eigen::VectorXd g = -(J.transpose() * (w.asDiagonal() * here.r));
    information = J.transpose() * wf.asDiagonal() * J;
    cov = covariance_of(information, cap);
    for (long a = 0; a < k; ++a) {
      sd(a) = std::sqrt(cov(a, a));
      h(a) = std::max(1e-2 * sd(a), 1e-10 * p.scale(act[a]));
    }
    Eigen::VectorXd D(k);
    for (long a = 0; a < k; ++a) D(a) = std::max(A(a, a), 1.0 / (p.scale(act[a]) * p.scale(act[a])));
    report(it, false);
    // A parameter on a bound of its support whose gradient points out of it is held this step
    // (the active-set rule of projected Newton methods, Bertsekas 1982, SIAM J. Control Optim.
    // 20, 221): the others' step is then the constrained problem's.
    std::vector<char> pinned(k, 0);
    for (long a = 0; a < k; ++a) {
      const long j = act[a];
      const double width = p.upper(j) - p.lower(j);
      const double margin = std::isfinite(width) ? 2e-9 * width : 0.0;
      pinned[a] = (here.x(j) <= p.lower(j) + margin && g(a) < 0) || (here.x(j) >= p.upper(j) - margin && g(a) > 0);
    }
    auto step_for = [&](double damping) {
      Eigen::MatrixXd M = A;
      M.diagonal() += damping * D;
      Eigen::VectorXd rhs = g;
      for (long a = 0; a < k; ++a)
        if (pinned[a]) {
          M.row(a).setZero();
          M.col(a).setZero();
          M(a, a) = 1.0;
          rhs(a) = 0.0;
        }
      return Eigen::VectorXd(M.ldlt().solve(rhs));
    };
    // Converged when the Gauss-Newton step would raise ln posterior by less than 1e-3 (its model's
    // gain g^T A^-1 g / 2, the Newton decrement of Boyd & Vandenberghe 2004, sec. 9.5.1) and move
    // no parameter by 1% of its standard deviation.
    const Eigen::VectorXd newton = step_for(1e-9);
    const double decrement = 0.5 * g.dot(newton);
    if (decrement < 1e-3 && newton.cwiseQuotient(sd).cwiseAbs().maxCoeff() < 1e-2) {
      out.converged = true;
      out.stopped = "converged";
      out.iterations = it;
      break;
    }
    if (it >= iterations) {
      out.iterations = it;
      out.stopped = "iteration limit";
      break;
    }
    // The trials: one batched call over the damping factors.
    constexpr long kTrials = sizeof kDampings / sizeof kDampings[0];
    Eigen::MatrixXd x(d, kTrials);
    for (long t = 0; t < kTrials; ++t) {
      const Eigen::VectorXd delta = step_for(lambda * kDampings[t]);
      x.col(t) = here.x;
      for (long a = 0; a < k; ++a) {
        const long j = act[a];
        const double width = p.upper(j) - p.lower(j);
        const double margin = std::isfinite(width) ? 1e-9 * width : 0.0;
        x(j, t) = std::clamp(here.x(j) + delta(a), p.lower(j) + margin, p.upper(j) - margin);
      }
    }
    Eigen::MatrixXd r;
    Eigen::VectorXd f;
    evaluate(x, r, f);
    long best = 0;
    for (long t = 1; t < kTrials; ++t)
      if (f(t) > f(best)) best = t;
    if (f(best) > here.log_posterior) {
      here.x = x.col(best);
      here.r = r.col(best);
      here.log_posterior = f(best);
      lambda = std::max(lambda * kDampings[best], 1e-12);
      rejected = 0;
    } else {
      lambda *= 1e6;  // beyond every trial's damping
      if (++rejected >= 3) {
        out.iterations = it + 1;
        out.stopped = "no step raised ln posterior";
        break;
      }
    }
  }
  out.best = here.x;
  out.log_posterior = here.log_posterior;
  out.covariance = Eigen::MatrixXd::Zero(d, d);
  for (long a = 0; a < k; ++a)
    for (long b = 0; b < k; ++b) out.covariance(act[a], act[b]) = cov(a, b);
  report(out.iterations, true);
  return out;
}

}  // namespace swarmfit
