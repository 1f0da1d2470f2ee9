// The posterior of a planetary model given data, as the batched log-density the sampler sees
// (inference/demcmc.hpp's BatchedLogDensity): ln prior of the free parameters (ParameterSpace) and,
// where the prior is finite, ln L of every such column in ONE batched likelihood call
// (LikelihoodProblem: one ensemble integration). Columns outside the prior get status
// kStatusOutsidePrior and are not integrated.
#pragma once

#include <Eigen/Dense>
#include <functional>
#include <memory>
#include <vector>

#include "swarmfit/inference/least_squares.hpp"
#include "swarmfit/inference/prior.hpp"
#include "swarmfit/models/likelihood.hpp"
#include "swarmfit/models/stability.hpp"

namespace swarmfit {

// A batch's likelihoods shared over processes (MPI ranks: apps/src/mpi_work.hpp): process r
// evaluates the columns [n r / size, n (r + 1) / size) of the n with a finite prior, and gather()
// fills in the others' slices (every process ends with all n). A system's ln L does not depend on
// the batch it is integrated in, so every process holds the chain one process would, bitwise. The
// stability constraint is not shared: its step follows the whole batch (plan_stability).
struct BatchSharing {
  int rank = 0, size = 1;
  std::function<void(std::vector<double>& log_likelihood, std::vector<int>& status)> gather;
  // The same for n blocks of `block` values each (rank r's blocks [n r / size, n (r + 1) / size)):
  // the residuals' model curves (Posterior::residuals); without it every process computes them all.
  std::function<void(std::vector<double>& values, long block)> gather_blocks;
  bool active() const { return size > 1 && gather; }
};

class Posterior {
 public:
  // Keeps references: space and problem must outlive it (and its copies).
  // `stability` (optional, kept by reference too): the fit's stability constraint on the proposals.
  // `sharing` (optional, kept by reference): the batches' likelihoods shared over processes.
  Posterior(const ParameterSpace& space, const LikelihoodProblem& problem,
            const StabilityConstraint* stability = nullptr, const BatchSharing* sharing = nullptr)
      : space_(space), problem_(problem), stability_(stability), sharing_(sharing) {}
  void operator()(const Eigen::MatrixXd& x, Eigen::VectorXd& log_prior, Eigen::VectorXd& log_likelihood,
                  std::vector<int>& status) const;

  // For the sampler's delayed acceptance (inference/demcmc.hpp, BatchedScreen): this density
  // without the stability constraint, and the constraint alone on the candidate columns (an empty
  // function where there is no active constraint). Both share this one's timing.
  Posterior without_stability() const {
    Posterior p = *this;
    p.stability_ = nullptr;
    return p;
  }
  bool has_stability() const { return stability_ && stability_->active(); }
  void screen(const Eigen::MatrixXd& x, const std::vector<char>& candidates, Eigen::VectorXd& log_likelihood,
              std::vector<int>& status) const;

  // For the least-squares optimiser (inference/least_squares.hpp): per column of free parameters
  // the whitened residuals, data minus model, in the order of the problem's tables: the RV points,
  // (v - model - gamma_j) / sqrt(sigma^2 + s_j^2) (gamma_j the instrument's weighted mean residual
  // where offsets are marginalised: the profile over gamma_j), then the transit rows,
  // (t - model) / sigma; then one row per free parameter with a normal prior, (mean - x) / sigma.
  // ln prior and ln L as operator() without the stability constraint, from the model curves
  // (LikelihoodProblem::evaluate, on the CPU); not shared over processes (each computes all).
  void residuals(const Eigen::MatrixXd& x, Eigen::MatrixXd& residuals, Eigen::VectorXd& log_prior,
                 Eigen::VectorXd& log_likelihood, std::vector<int>& status) const;
  // The problem handed to the optimiser: residuals() (through this object: it must outlive the
  // problem), each row's Student-t nu, the jitters held (their ln L is no sum of squares), and
  // each free parameter's support and prior standard deviation.
  LeastSquaresProblem least_squares() const;

  // Where a run's time goes: the batched likelihood calls (and of them, on the CUDA backend, the
  // kernels and the device's allocations and copies).
  struct Time {
    double seconds = 0, kernel_ms = 0, device_ms = 0;
    long calls = 0;
  };
  const Time& time() const { return *time_; }  // shared by the copies the sampler keeps

 private:
  // ln prior of every column, ln L = -inf and status kStatusOutsidePrior for all; the columns with
  // a finite prior back, their full parameter vectors in `full`.
  std::vector<long> within_prior(const Eigen::MatrixXd& x, Eigen::VectorXd& log_prior, Eigen::VectorXd& log_likelihood,
                                 std::vector<int>& status, std::vector<double>& full) const;

  const ParameterSpace& space_;
  const LikelihoodProblem& problem_;
  const StabilityConstraint* stability_;
  const BatchSharing* sharing_;
  std::shared_ptr<Time> time_ = std::make_shared<Time>();
};

}  // namespace swarmfit
