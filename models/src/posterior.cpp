#include "swarmfit/models/posterior.hpp"

#include <array>
#include <chrono>
#include <cmath>
#include <limits>

namespace swarmfit {

std::vector<long> Posterior::within_prior(const Eigen::MatrixXd& x, Eigen::VectorXd& log_prior,
                                          Eigen::VectorXd& log_likelihood, std::vector<int>& status,
                                          std::vector<double>& full) const {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  const long n = x.cols(), np = space_.num_parameters();
  log_prior.resize(n);
  log_likelihood.setConstant(n, -kInf);
  status.assign(n, kStatusOutsidePrior);
  std::vector<long> inside;
  full.clear();
  for (long k = 0; k < n; ++k) {
    log_prior(k) = space_.log_prior(x.col(k).data());
    if (!(log_prior(k) > -kInf)) continue;
    inside.push_back(k);
    full.resize(inside.size() * np);
    space_.expand(x.col(k).data(), full.data() + (inside.size() - 1) * np);
  }
  return inside;
}

void Posterior::operator()(const Eigen::MatrixXd& x, Eigen::VectorXd& log_prior, Eigen::VectorXd& log_likelihood,
                           std::vector<int>& status) const {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  std::vector<double> full;
  const std::vector<long> inside = within_prior(x, log_prior, log_likelihood, status, full);
  if (inside.empty()) return;
  std::vector<double> lnl(inside.size());
  std::vector<int> codes(inside.size());
  const auto started = std::chrono::steady_clock::now();
  DeviceTiming device;
  if (sharing_ && sharing_->active()) {
    const long m = static_cast<long>(inside.size()), r = sharing_->rank, size = sharing_->size;
    const long lo = m * r / size, hi = m * (r + 1) / size;
    if (hi > lo)
      problem_.evaluate(full.data() + lo * space_.num_parameters(), hi - lo, lnl.data() + lo, codes.data() + lo,
                        nullptr, &device);
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

namespace {

// The free parameters' normal priors (their residual rows): free index, mean, sigma.
std::vector<std::array<double, 3>> normal_priors(const ParameterSpace& space) {
  std::vector<std::array<double, 3>> out;
  for (int j = 0; j < space.num_free(); ++j) {
    const Prior& prior = space.priors()[space.free_indices()[j]];
    if (prior.kind == PriorKind::kNormal || prior.kind == PriorKind::kTruncatedNormal)
      out.push_back({static_cast<double>(j), prior.a, prior.b});
  }
  return out;
}

}  // namespace

void Posterior::residuals(const Eigen::MatrixXd& x, Eigen::MatrixXd& residuals, Eigen::VectorXd& log_prior,
                          Eigen::VectorXd& log_likelihood, std::vector<int>& status) const {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  const ObservationTables& tab = problem_.tables();
  const auto normals = normal_priors(space_);
  const long n = x.cols(), nrv = tab.num_rv, nt = tab.num_transits;
  const long m = nrv + nt + static_cast<long>(normals.size());
  residuals.setConstant(m, n, std::nan(""));
  std::vector<double> full;
  const std::vector<long> inside = within_prior(x, log_prior, log_likelihood, status, full);
  if (inside.empty()) return;
  const long count = static_cast<long>(inside.size());
  std::vector<double> lnl(count);
  std::vector<int> codes(count);
  ModelCurves curves;
  curves.relative_times = true;
  const auto started = std::chrono::steady_clock::now();
  DeviceTiming device;
  if (sharing_ && sharing_->active() && sharing_->gather_blocks) {
    // Each process integrates its slice; the curves, ln L and status codes are gathered (a block a
    // point), so every process holds what one process would compute, whatever its backend.
    const long r = sharing_->rank, size = sharing_->size, lo = count * r / size, hi = count * (r + 1) / size;
    const long block = 2 + nrv + nt;
    std::vector<double> blocks(static_cast<std::size_t>(count * block), 0.0);
    if (hi > lo) {
      ModelCurves mine;
      mine.relative_times = true;
      problem_.evaluate(full.data() + lo * space_.num_parameters(), hi - lo, lnl.data() + lo, codes.data() + lo, &mine,
                        &device);
      for (long q = lo; q < hi; ++q) {
        double* b = blocks.data() + q * block;
        b[0] = lnl[q];
        b[1] = codes[q];
        std::copy(mine.rv.begin() + (q - lo) * nrv, mine.rv.begin() + (q - lo + 1) * nrv, b + 2);
        std::copy(mine.transits.begin() + (q - lo) * nt, mine.transits.begin() + (q - lo + 1) * nt, b + 2 + nrv);
      }
    }
    sharing_->gather_blocks(blocks, block);
    curves.rv.resize(static_cast<std::size_t>(count * nrv));
    curves.transits.resize(static_cast<std::size_t>(count * nt));
    for (long q = 0; q < count; ++q) {
      const double* b = blocks.data() + q * block;
      lnl[q] = b[0];
      codes[q] = static_cast<int>(b[1]);
      std::copy(b + 2, b + 2 + nrv, curves.rv.begin() + q * nrv);
      std::copy(b + 2 + nrv, b + block, curves.transits.begin() + q * nt);
    }
  } else {
    problem_.evaluate(full.data(), count, lnl.data(), codes.data(), &curves, &device);
  }
  // Counted with the likelihood calls (the gradient move's surrogate builds are residual calls).
  time_->seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  time_->kernel_ms += device.kernel_ms;
  time_->device_ms += device.total_ms;
  ++time_->calls;
  std::vector<double> offsets, jitters;
  problem_.offsets_and_jitters(full.data(), count, offsets, jitters);
  const int ni = tab.num_instruments;
  for (long q = 0; q < count; ++q) {
    const long k = inside[q];
    log_likelihood(k) = std::isnan(lnl[q]) ? -kInf : lnl[q];
    status[k] = codes[q];
    if (codes[q] != kStatusOk) continue;
    auto col = residuals.col(k);
    // RV: r = v - model about gamma_j, scaled by 1 / sqrt(sigma^2 + s_j^2).
    std::vector<double> sw(ni, 0.0), swr(ni, 0.0);
    for (long i = 0; i < nrv; ++i) {
      const int j = tab.rv_instrument[i];
      const double s = jitters[q * ni + j], w = 1.0 / (tab.rv_error[i] * tab.rv_error[i] + s * s);
      const double r = tab.rv_value[i] - curves.rv[q * nrv + i];
      col(i) = r;
      sw[j] += w;
      swr[j] += w * r;
    }
    for (long i = 0; i < nrv; ++i) {
      const int j = tab.rv_instrument[i];
      const double gamma = tab.marginalize_offsets ? swr[j] / sw[j] : offsets[q * ni + j];
      const double s = jitters[q * ni + j];
      col(i) = (col(i) - gamma) / std::sqrt(tab.rv_error[i] * tab.rv_error[i] + s * s);
    }
    for (long i = 0; i < nt; ++i)
      col(nrv + i) = (tab.transit_time[i] - curves.transits[q * nt + i]) / tab.transit_error[i];
    for (std::size_t e = 0; e < normals.size(); ++e)
      col(nrv + nt + static_cast<long>(e)) = (normals[e][1] - x(static_cast<long>(normals[e][0]), k)) / normals[e][2];
  }
}

LeastSquaresProblem Posterior::least_squares() const {
  LeastSquaresProblem p;
  const Posterior self = without_stability();
  p.residuals = [self](const Eigen::MatrixXd& x, Eigen::MatrixXd& r, Eigen::VectorXd& lp, Eigen::VectorXd& ll,
                       std::vector<int>& status) { self.residuals(x, r, lp, ll, status); };
  const ObservationTables& tab = problem_.tables();
  p.row_nu.assign(tab.num_rv, 0.0);
  p.row_nu.resize(tab.num_rv + tab.num_transits, tab.student_nu);
  p.likelihood_rows = tab.num_rv + tab.num_transits;
  p.row_nu.resize(p.row_nu.size() + normal_priors(space_).size(), 0.0);
  const int d = space_.num_free();
  p.active.assign(d, 1);
  p.lower.resize(d);
  p.upper.resize(d);
  p.scale.resize(d);
  const PlanetaryModel& model = problem_.model();
  for (int j = 0; j < d; ++j) {
    const int full = space_.free_indices()[j];
    const Prior& prior = space_.priors()[full];
    p.lower(j) = prior.lower;
    p.upper(j) = prior.upper;
    p.scale(j) = prior.standard_deviation();
    for (int i = 0; i < static_cast<int>(model.instruments().size()); ++i)
      if (full == model.jitter_parameter(i)) p.active[j] = 0;
  }
  return p;
}

}  // namespace swarmfit
