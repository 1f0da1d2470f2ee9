#include "swarmfit/inference/moves/surrogate.hpp"

#include <cmath>
#include <limits>
#include <stdexcept>

namespace swarmfit {

namespace {

// Per row: h_k(r) and dh_k/dr, times the row's weight (beta for the likelihood's rows).
struct RowTerms {
  const ResidualModel& model;
  double beta;
  double weight(long k) const { return k < model.likelihood_rows ? beta : 1.0; }
  double value(long k, double r) const {
    const double nu = model.row_nu[k];
    return weight(k) * (nu > 0 ? -0.5 * (nu + 1) * std::log1p(r * r / nu) : -0.5 * r * r);
  }
  double derivative(long k, double r) const {
    const double nu = model.row_nu[k];
    return weight(k) * (nu > 0 ? -(nu + 1) * r / (nu + r * r) : -r);
  }
  double sum(const Eigen::Ref<const Eigen::VectorXd>& r) const {
    double out = 0;
    for (long k = 0; k < r.size(); ++k) out += value(k, r(k));
    return out;
  }
};

long pair_index(long i, long j, long d) { return i * d - i * (i + 1) / 2 + (j - i - 1); }  // i < j

// r(u), and with g non-null dS/du = (J + G)^T h'(r) + s, G(k, i) = sum_j H_k(i, j) u_j.
double expand(const QuadraticSurrogate& s, const RowTerms& terms, const Eigen::VectorXd& u, Eigen::VectorXd* g) {
  const long m = s.residuals.size(), d = u.size();
  const Eigen::VectorXd hu = s.hessian * u;  // (d m): entry i m + k = sum_j H_k(i, j) u_j
  const Eigen::Map<const Eigen::MatrixXd> G(hu.data(), m, d);
  const Eigen::VectorXd r = s.residuals + s.jacobian * u + 0.5 * (G * u);
  if (!r.allFinite()) return std::numeric_limits<double>::quiet_NaN();
  if (g) {
    Eigen::VectorXd dh(m);
    for (long k = 0; k < m; ++k) dh(k) = terms.derivative(k, r(k));
    *g = s.jacobian.transpose() * dh + G.transpose() * dh + s.slope;
  }
  return terms.sum(r) + s.slope.dot(u);
}

}  // namespace

Eigen::MatrixXd SurrogateBuilder::points(const Eigen::VectorXd& centre, const Eigen::MatrixXd& factor, double h) {
  const long d = centre.size();
  Eigen::MatrixXd out(d, 2 * d * d + 1);
  out.col(0) = centre;
  for (long i = 0; i < d; ++i) {
    out.col(1 + 2 * i) = centre + h * factor.col(i);
    out.col(2 + 2 * i) = centre - h * factor.col(i);
  }
  for (long i = 0; i < d; ++i)
    for (long j = i + 1; j < d; ++j) {
      const long base = 1 + 2 * d + 4 * pair_index(i, j, d);
      const Eigen::VectorXd a = h * factor.col(i), b = h * factor.col(j);
      out.col(base) = centre + a + b;
      out.col(base + 1) = centre + a - b;
      out.col(base + 2) = centre - a + b;
      out.col(base + 3) = centre - a - b;
    }
  return out;
}

bool SurrogateBuilder::build(const Eigen::VectorXd& centre, const Eigen::MatrixXd& factor, double h,
                             const Eigen::MatrixXd& residuals, const Eigen::VectorXd& log_prior,
                             const Eigen::VectorXd& log_likelihood, const std::vector<int>& status,
                             const ResidualModel& model, double beta, QuadraticSurrogate& out) {
  const long d = centre.size(), n = 2 * d * d + 1, m = static_cast<long>(model.row_nu.size());
  if (residuals.rows() != m || residuals.cols() != n || log_prior.size() != n || log_likelihood.size() != n ||
      static_cast<long>(status.size()) != n)
    return false;
  for (long q = 0; q < n; ++q)
    if (status[q] != 0 || !residuals.col(q).allFinite() || !std::isfinite(log_prior(q)) ||
        !std::isfinite(log_likelihood(q)))
      return false;
  QuadraticSurrogate s;
  s.centre = centre;
  s.factor = factor;
  s.residuals = residuals.col(0);
  s.jacobian.resize(m, d);
  s.hessian.resize(d * m, d);
  s.slope.resize(d);
  const RowTerms terms{model, beta};
  for (long i = 0; i < d; ++i) {
    const auto plus = residuals.col(1 + 2 * i), minus = residuals.col(2 + 2 * i);
    s.jacobian.col(i) = (plus - minus) / (2 * h);                                       // A&S 25.3.21
    s.hessian.block(i * m, i, m, 1) = (plus - 2 * residuals.col(0) + minus) / (h * h);  // A&S 25.3.23
    // The expansion meets the residuals at +-h e_i, so the slope left to it is the targets' less
    // the rows' terms there.
    const double target = (log_prior(1 + 2 * i) + beta * log_likelihood(1 + 2 * i)) -
                          (log_prior(2 + 2 * i) + beta * log_likelihood(2 + 2 * i));
    s.slope(i) = (target - (terms.sum(plus) - terms.sum(minus))) / (2 * h);
  }
  for (long i = 0; i < d; ++i)
    for (long j = i + 1; j < d; ++j) {
      const long base = 1 + 2 * d + 4 * pair_index(i, j, d);
      const Eigen::VectorXd mixed =  // A&S 25.3.26
          (residuals.col(base) - residuals.col(base + 1) - residuals.col(base + 2) + residuals.col(base + 3)) /
          (4 * h * h);
      s.hessian.block(i * m, j, m, 1) = mixed;
      s.hessian.block(j * m, i, m, 1) = mixed;
    }
  if (!s.jacobian.allFinite() || !s.hessian.allFinite() || !s.slope.allFinite()) return false;
  out = std::move(s);
  return true;
}

void surrogate_gradient(const QuadraticSurrogate& s, const ResidualModel& model, double beta, const Eigen::MatrixXd& x,
                        Eigen::MatrixXd& gradient) {
  const long d = x.rows(), n = x.cols();
  if (s.residuals.size() != static_cast<long>(model.row_nu.size()) || s.centre.size() != d)
    throw std::logic_error("surrogate_gradient: the surrogate does not match the residual model or the points");
  gradient.resize(d, n);
  const RowTerms terms{model, beta};
  const auto L = s.factor.triangularView<Eigen::Lower>();
  // One column a thread: each column's arithmetic is the same whatever the thread count.
#pragma omp parallel for schedule(static)
  for (long c = 0; c < n; ++c) {
    const Eigen::VectorXd u = L.solve(x.col(c) - s.centre);
    Eigen::VectorXd g;
    if (std::isnan(expand(s, terms, u, &g)))
      gradient.col(c).setConstant(std::numeric_limits<double>::quiet_NaN());
    else
      gradient.col(c) = L.transpose().solve(g);  // dS/dx = L^-T dS/du
  }
}

Eigen::VectorXd surrogate_value(const QuadraticSurrogate& s, const ResidualModel& model, double beta,
                                const Eigen::MatrixXd& x) {
  Eigen::VectorXd out(x.cols());
  const RowTerms terms{model, beta};
  const auto L = s.factor.triangularView<Eigen::Lower>();
  for (long c = 0; c < x.cols(); ++c) out(c) = expand(s, terms, L.solve(x.col(c) - s.centre), nullptr);
  return out;
}

}  // namespace swarmfit
