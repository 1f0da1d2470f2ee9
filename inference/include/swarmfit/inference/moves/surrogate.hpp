// The quadratic surrogate of a log target whose likelihood is a function of residuals, for the
// gradient move's leapfrog (gradient.force = surrogate). Each whitened residual (data - model) /
// error is expanded to second order about a centre c in the coordinates u = L^-1 (x - c) of the
// move's metric L L^T,
//   r_k(u) = r0_k + J_k u + u^T H_k u / 2,
// by central differences of spacing kSpacing over the 2 d^2 + 1 points of the standard second-order
// stencil (Abramowitz & Stegun 1964, 25.3.23 and 25.3.26), and the surrogate target is
//   S(u) = beta sum_{rows of the likelihood} h_k(r_k(u)) + sum_{rows of the priors} h_k(r_k(u)) + s . u,
// h_k = -r^2 / 2 (Gaussian rows) or -(nu + 1) / 2 ln(1 + r^2 / nu) (Student-t rows), s the difference
// between the true target's central-difference slope and the expansion's (what the residuals leave
// out: jitters' normalisations, non-normal priors), to first order.
// Why: the leapfrog needs only a force, and a leapfrog with any position-dependent force is
// volume-preserving and reversible (Neal 2011, section 5.5.1's argument; moves/gradient.hpp), so a
// fixed surrogate's gradient costs acceptance, never exactness, while the true target is evaluated
// only at each trajectory's end: one batched call a trajectory instead of steps + 1 (Rasmussen
// 2003, Bayesian Statistics 7, 651: HMC on a surrogate, accepted on the true density). Expanding the
// residuals rather than ln pi keeps the Student-t's tails exact and, in a resonant chain, follows the
// transit times' curvature, which a Gaussian (a quadratic ln pi) does not.
// The surrogate must not depend on the walker it moves: it is built from the level's mean and metric
// during the burn-in and frozen with the metric after it.
#pragma once

#include <Eigen/Dense>
#include <vector>

#include "swarmfit/inference/least_squares.hpp"

namespace swarmfit {

struct QuadraticSurrogate {
  Eigen::VectorXd centre;     // c (d)
  Eigen::MatrixXd factor;     // L (d x d, lower triangular)
  Eigen::VectorXd residuals;  // r0 (m)
  Eigen::MatrixXd jacobian;   // J (m x d)
  Eigen::MatrixXd hessian;    // (d m) x d: row i m + k, column j = d^2 r_k / du_i du_j
  Eigen::VectorXd slope;      // s (d)
  bool empty() const { return centre.size() == 0; }
};

// What the surrogate is built from: the residuals and their rows' likelihoods (least_squares.hpp).
struct ResidualModel {
  BatchedResiduals residuals;
  std::vector<double> row_nu;  // per row: Student-t nu, 0 Gaussian
  long likelihood_rows = 0;    // the first rows are the likelihood's (tempered), the rest the priors'
};

class SurrogateBuilder {
 public:
  // The stencil's spacing in whitened units (posterior standard deviations): a secant over the
  // posterior's width rather than a tangent at its centre, since the expansion serves all of it.
  static constexpr double kSpacing = 1.0;

  // The 2 d^2 + 1 stencil points (d x (2 d^2 + 1)) about `centre` in the metric `factor` at spacing
  // h: the centre, c +- h L e_i, then for i < j the four c + h L (+-e_i +-e_j).
  static Eigen::MatrixXd points(const Eigen::VectorXd& centre, const Eigen::MatrixXd& factor, double h);

  // The surrogate from the residuals (m x n), log priors and log-likelihoods at those points, for
  // the inverse temperature beta; false where any point is not finite (status != 0, a residual or
  // the target not finite).
  static bool build(const Eigen::VectorXd& centre, const Eigen::MatrixXd& factor, double h,
                    const Eigen::MatrixXd& residuals, const Eigen::VectorXd& log_prior,
                    const Eigen::VectorXd& log_likelihood, const std::vector<int>& status, const ResidualModel& model,
                    double beta, QuadraticSurrogate& out);
};

// dS/dx at the columns of x (d x n) into gradient (d x n); a column of NaN where S's residuals are
// not finite there.
void surrogate_gradient(const QuadraticSurrogate& s, const ResidualModel& model, double beta, const Eigen::MatrixXd& x,
                        Eigen::MatrixXd& gradient);
// S(u) at the columns of x (for tests).
Eigen::VectorXd surrogate_value(const QuadraticSurrogate& s, const ResidualModel& model, double beta,
                                const Eigen::MatrixXd& x);

}  // namespace swarmfit
