#include "swarmfit/inference/moves/half_update.hpp"

namespace swarmfit {

Eigen::MatrixXd sample_covariance(const Eigen::Ref<const Eigen::MatrixXd>& members, Eigen::VectorXd* mean_out) {
  const long d = members.rows(), n = members.cols();
  const Eigen::VectorXd mean = members.rowwise().mean();
  const Eigen::MatrixXd centred = members.colwise() - mean;
  Eigen::MatrixXd covariance = Eigen::MatrixXd::Zero(d, d);  // d x d x n: a loop, not a GEMM
  for (long i = 0; i < d; ++i)
    for (long j = 0; j <= i; ++j) covariance(i, j) = covariance(j, i) = centred.row(i).dot(centred.row(j)) / (n - 1.0);
  if (mean_out) *mean_out = mean;
  return covariance;
}

bool covariance_cholesky(const Eigen::MatrixXd& covariance, Eigen::MatrixXd& lower) {
  const Eigen::VectorXd scale = covariance.diagonal().cwiseSqrt();
  if (!(scale.minCoeff() > 0) || !scale.allFinite()) return false;
  const Eigen::MatrixXd correlation = scale.asDiagonal().inverse() * covariance * scale.asDiagonal().inverse();
  const Eigen::LLT<Eigen::MatrixXd> llt(correlation);
  if (llt.info() != Eigen::Success) return false;
  const Eigen::MatrixXd factor = llt.matrixL();
  if (!(factor.diagonal().minCoeff() > 1e-12)) return false;
  lower = scale.asDiagonal() * factor;
  return true;
}

bool is_covariance_matrix(const Eigen::MatrixXd& c, long d) {
  Eigen::MatrixXd factor;
  return c.rows() == d && c.cols() == d && c.allFinite() && c.isApprox(c.transpose(), 0.0) &&
         covariance_cholesky(c, factor);
}

bool covariance_factor(const Eigen::Ref<const Eigen::MatrixXd>& members, Eigen::MatrixXd& lower,
                       Eigen::VectorXd* mean_out) {
  Eigen::VectorXd mean;
  if (!covariance_cholesky(sample_covariance(members, &mean), lower)) return false;
  if (mean_out) *mean_out = mean;
  return true;
}

}  // namespace swarmfit
