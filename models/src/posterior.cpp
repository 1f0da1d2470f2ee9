#include "swarmfit/models/posterior.hpp"

#include <chrono>
#include <cmath>
#include <limits>

namespace swarmfit {

void Posterior::operator()(const Eigen::MatrixXd& x, Eigen::VectorXd& log_prior, Eigen::VectorXd& log_likelihood,
                           std::vector<int>& status) const {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  const long n = x.cols(), np = space_.num_parameters();
  log_prior.resize(n);
  log_likelihood.setConstant(n, -kInf);
  status.assign(n, kStatusOutsidePrior);
  std::vector<long> inside;
  std::vector<double> full;
  for (long k = 0; k < n; ++k) {
    log_prior(k) = space_.log_prior(x.col(k).data());
    if (!(log_prior(k) > -kInf)) continue;
    inside.push_back(k);
    full.resize(inside.size() * np);
    space_.expand(x.col(k).data(), full.data() + (inside.size() - 1) * np);
  }
  if (inside.empty()) return;
  std::vector<double> lnl(inside.size());
  std::vector<int> codes(inside.size());
  const auto started = std::chrono::steady_clock::now();
  DeviceTiming device;
  if (sharing_ && sharing_->active()) {
    const long m = static_cast<long>(inside.size()), r = sharing_->rank, size = sharing_->size;
    const long lo = m * r / size, hi = m * (r + 1) / size;
    if (hi > lo)
      problem_.evaluate(full.data() + lo * np, hi - lo, lnl.data() + lo, codes.data() + lo, nullptr, &device);
    sharing_->gather(lnl, codes);
  } else {
    problem_.evaluate(full.data(), static_cast<long>(inside.size()), lnl.data(), codes.data(), nullptr, &device);
  }
  if (stability_ && stability_->active())
    apply_stability(problem_.model(), *stability_, full.data(), static_cast<long>(inside.size()), lnl.data(),
                    codes.data());
  time_->seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  time_->kernel_ms += device.kernel_ms;
  time_->device_ms += device.total_ms;
  ++time_->calls;
  for (std::size_t j = 0; j < inside.size(); ++j) {
    log_likelihood(inside[j]) = std::isnan(lnl[j]) ? -kInf : lnl[j];
    status[inside[j]] = codes[j];
  }
}

void Posterior::screen(const Eigen::MatrixXd& x, const std::vector<char>& candidates, Eigen::VectorXd& log_likelihood,
                       std::vector<int>& status) const {
  if (!has_stability()) return;
  const long np = space_.num_parameters();
  std::vector<long> picked;
  std::vector<double> full, lnl;
  std::vector<int> codes;
  for (long k = 0; k < x.cols(); ++k) {
    if (!candidates[k]) continue;
    picked.push_back(k);
    full.resize(picked.size() * np);
    space_.expand(x.col(k).data(), full.data() + (picked.size() - 1) * np);
    lnl.push_back(log_likelihood(k));
    codes.push_back(status[k]);
  }
  if (picked.empty()) return;
  const auto started = std::chrono::steady_clock::now();
  apply_stability(problem_.model(), *stability_, full.data(), static_cast<long>(picked.size()), lnl.data(),
                  codes.data());
  time_->seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  for (std::size_t j = 0; j < picked.size(); ++j) {
    log_likelihood(picked[j]) = lnl[j];
    status[picked[j]] = codes[j];
  }
}

}  // namespace swarmfit
