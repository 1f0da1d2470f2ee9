// Levenberg-Marquardt maximisation of a posterior whose likelihood is a function of whitened
// residuals (Levenberg 1944, Q. Appl. Math. 2, 164; Marquardt 1963, J. SIAM 11, 431: the damped
// Gauss-Newton step with Marquardt's diagonal scaling), batched as the rest of a fit: the
// Jacobian of the active parameters by forward differences, every column in ONE batched call,
// then the steps of several damping values in one more call, the best whose true log posterior
// rises taken. Student-t rows by iteratively reweighted least squares (Holland & Welsch 1977,
// Commun. Stat. 6, 813: the weight (nu + 1) / (nu + r^2) makes the weighted Gauss-Newton step the
// Student-t's score). Its Laplace approximation starts a sampler's walkers at the mode, where a
// population optimiser in 30+ dimensions (optimizer.hpp) stops far from it (TRAPPIST-1).
#pragma once

#include <Eigen/Dense>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "swarmfit/inference/progress.hpp"

namespace swarmfit {

// Per column of params (d x n): the whitened residuals (m x n: (data - model) / error, a column
// of NaN where the model cannot be integrated), ln prior and ln L (the true ones: the steps are
// judged by them, not by the sum of squares) and a status code.
using BatchedResiduals =
    std::function<void(const Eigen::MatrixXd& params, Eigen::MatrixXd& residuals, Eigen::VectorXd& log_prior,
                       Eigen::VectorXd& log_likelihood, std::vector<int>& status)>;

struct LeastSquaresProblem {
  BatchedResiduals residuals;
  std::vector<double> row_nu;    // per residual row: Student-t degrees of freedom, 0 = Gaussian
  long likelihood_rows = 0;      // the first rows are the likelihood's, the rest the normal priors'
  std::vector<char> active;      // per parameter: fitted (else held at its start: a jitter, whose
                                 // ln L is not a sum of squares)
  Eigen::VectorXd lower, upper;  // per parameter: the support (steps stay inside it)
  Eigen::VectorXd scale;         // per parameter: a typical width (the prior's standard deviation)
};

struct LeastSquaresResult {
  Eigen::VectorXd best;
  double log_posterior = 0;
  // Laplace approximation at best: the inverse Fisher information J^T W J over the active
  // parameters (W: the Student-t rows' expected weights (nu + 1) / (nu + 3), Lange, Little &
  // Taylor 1989, JASA 84, 881), zero rows and columns for the others.
  Eigen::MatrixXd covariance;
  long iterations = 0, evaluations = 0;
  bool converged = false;  // the last steps changed ln posterior by < 1e-3 and every parameter by
                           // < 1e-3 of its standard deviation
  std::string stopped;     // why it stopped, one phrase
};

// At most `iterations` steps from `start` (a point with a finite posterior, else
// std::invalid_argument). Deterministic: no random numbers.
LeastSquaresResult optimize_least_squares(const Eigen::VectorXd& start, const LeastSquaresProblem& problem,
                                          long iterations, const ProgressCallback& progress = {},
                                          double progress_seconds = 0.5);

}  // namespace swarmfit
