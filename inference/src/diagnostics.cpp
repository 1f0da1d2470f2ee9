#include "swarmfit/inference/diagnostics.hpp"

#include <algorithm>
#include <boost/math/special_functions/erf.hpp>
#include <cmath>
#include <numeric>
#include <stdexcept>

namespace swarmfit {

double integrated_autocorrelation_time(const std::vector<double>& x, double window_factor) {
  const std::size_t n = x.size();
  if (n < 2) throw std::invalid_argument("autocorrelation time needs at least two values");
  double mean = 0;
  for (double v : x) mean += v;
  mean /= n;
  double c0 = 0;
  for (double v : x) c0 += (v - mean) * (v - mean);
  c0 /= n;
  if (!(c0 > 0)) return 1.0;
  double tau = 1.0;
  // Direct sums: O(n M) for the window M reached, which stays small for mixing chains.
  for (std::size_t lag = 1; lag < n; ++lag) {
    double c = 0;
    for (std::size_t t = 0; t + lag < n; ++t) c += (x[t] - mean) * (x[t + lag] - mean);
    c /= n;
    tau += 2.0 * c / c0;
    if (static_cast<double>(lag) >= window_factor * tau) break;
  }
  return tau > 1.0 ? tau : 1.0;
}

namespace {

using Chains = std::vector<std::vector<double>>;

Chains split(const Chains& chains) {
  Chains out;
  for (const auto& c : chains) {
    const std::size_t half = c.size() / 2;
    out.emplace_back(c.begin(), c.begin() + half);
    out.emplace_back(c.end() - half, c.end());  // an odd middle draw is dropped
  }
  return out;
}

// Ranks of all draws pooled (ties averaged) -> normal quantiles with Blom's offset (eq. 14).
Chains rank_normalise(const Chains& chains) {
  std::vector<std::pair<double, std::size_t>> all;
  for (std::size_t c = 0; c < chains.size(); ++c)
    for (std::size_t t = 0; t < chains[c].size(); ++t) all.push_back({chains[c][t], c * chains[0].size() + t});
  std::sort(all.begin(), all.end());
  const double s = static_cast<double>(all.size());
  std::vector<double> z(all.size());
  for (std::size_t i = 0; i < all.size();) {
    std::size_t j = i;
    while (j < all.size() && all[j].first == all[i].first) ++j;
    const double rank = 0.5 * (i + 1 + j);  // average of ranks i+1 .. j
    const double p = (rank - 0.375) / (s + 0.25);
    const double q = std::sqrt(2.0) * boost::math::erf_inv(2.0 * p - 1.0);
    for (std::size_t k = i; k < j; ++k) z[all[k].second] = q;
    i = j;
  }
  Chains out(chains.size(), std::vector<double>(chains[0].size()));
  for (std::size_t c = 0; c < chains.size(); ++c)
    for (std::size_t t = 0; t < chains[c].size(); ++t) out[c][t] = z[c * chains[0].size() + t];
  return out;
}

double mean_of(const std::vector<double>& x) { return std::accumulate(x.begin(), x.end(), 0.0) / x.size(); }

// Within-chain and between-chain variances of (split) chains (Vehtari et al. 2021, eq. 3-4).
struct Variances {
  std::vector<double> means;
  double within = 0;    // W: mean of the chain variances
  double var_plus = 0;  // (n - 1) / n W + B / n
};
Variances variances(const Chains& chains) {
  const std::size_t m = chains.size();
  const double n = static_cast<double>(chains[0].size());
  Variances v;
  v.means.resize(m);
  std::vector<double> vars(m);
  for (std::size_t c = 0; c < m; ++c) {
    v.means[c] = mean_of(chains[c]);
    double sum = 0;
    for (double x : chains[c]) sum += (x - v.means[c]) * (x - v.means[c]);
    vars[c] = sum / (n - 1);
  }
  v.within = mean_of(vars);
  const double grand = mean_of(v.means);
  double b = 0;
  for (double mu : v.means) b += (mu - grand) * (mu - grand);
  b *= n / (m - 1);
  v.var_plus = (n - 1) / n * v.within + b / n;
  return v;
}

// Basic R-hat of (split) chains.
double rhat_of(const Chains& chains) {
  const Variances v = variances(chains);
  if (!(v.within > 0)) return v.var_plus > 0 ? HUGE_VAL : 1.0;
  return std::sqrt(v.var_plus / v.within);
}

// ESS of (split) chains from the multi-chain autocorrelation with Geyer's initial monotone
// positive sequence (eq. 10-13), autocovariances by direct sums.
double ess_of(const Chains& chains) {
  const std::size_t m = chains.size(), n = chains[0].size();
  const Variances v = variances(chains);
  const std::vector<double>& means = v.means;
  const double w = v.within, var_plus = v.var_plus;
  if (!(var_plus > 0)) return static_cast<double>(m * n);
  auto rho = [&](std::size_t lag) {
    double acov = 0;  // mean over chains of the biased autocovariance at this lag
    for (std::size_t c = 0; c < m; ++c) {
      double s = 0;
      for (std::size_t t = 0; t + lag < n; ++t) s += (chains[c][t] - means[c]) * (chains[c][t + lag] - means[c]);
      acov += s / n;
    }
    acov /= m;
    return 1.0 - (w - acov) / var_plus;
  };
  // Geyer's initial positive sequence: pairs rho_t+1 + rho_t+2 kept while positive (rho_0 = 1),
  // made monotone, plus the last positive even term, as Stan's and ArviZ's estimators do.
  std::vector<double> r(n, 0.0);
  r[0] = 1.0;
  double even = 1.0, odd = n > 1 ? rho(1) : 0.0;
  if (n > 1) r[1] = odd;
  std::size_t t = 1;
  while (t + 3 < n && even + odd > 0) {
    even = rho(t + 1);
    odd = rho(t + 2);
    if (even + odd >= 0) {
      r[t + 1] = even;
      r[t + 2] = odd;
    }
    t += 2;
  }
  const long max_t = static_cast<long>(t) - 2;  // the last index summed twice (-1: none)
  if (even > 0) r[max_t + 1] = even;
  for (long k = 1; k <= max_t - 2; k += 2)  // Geyer's initial monotone sequence
    if (r[k + 1] + r[k + 2] > r[k - 1] + r[k]) r[k + 1] = r[k + 2] = 0.5 * (r[k - 1] + r[k]);
  double tau = -1.0 + r[max_t + 1];
  for (long k = 0; k <= max_t; ++k) tau += 2.0 * r[k];
  tau = std::max(tau, 1.0 / std::log10(static_cast<double>(m * n)));  // as Stan: tau >= 1/log10(S)
  return static_cast<double>(m * n) / tau;
}

}  // namespace

ConvergenceDiagnostics convergence_diagnostics(const Chains& chains) {
  if (chains.size() < 2) throw std::invalid_argument("diagnostics need at least two chains");
  for (const auto& c : chains)
    if (c.size() != chains[0].size() || c.size() < 4)
      throw std::invalid_argument("diagnostics need chains of equal length, at least 4 draws");
  const Chains halves = split(chains);
  ConvergenceDiagnostics d;
  const Chains z = rank_normalise(halves);
  // Folded draws |x - median| for the scale R-hat.
  std::vector<double> pooled;
  for (const auto& c : halves) pooled.insert(pooled.end(), c.begin(), c.end());
  std::vector<double> sorted = pooled;
  std::sort(sorted.begin(), sorted.end());
  const double median = 0.5 * (sorted[(sorted.size() - 1) / 2] + sorted[sorted.size() / 2]);
  Chains folded = halves;
  for (auto& c : folded)
    for (double& x : c) x = std::fabs(x - median);
  d.rhat = std::max(rhat_of(z), rhat_of(rank_normalise(folded)));
  d.ess_bulk = ess_of(z);
  // Tail ESS: indicators of the 5% and 95% quantiles.
  auto quantile = [&](double q) { return sorted[static_cast<std::size_t>(q * (sorted.size() - 1))]; };
  double tail = HUGE_VAL;
  for (double q : {quantile(0.05), quantile(0.95)}) {
    Chains indicator = halves;
    for (auto& c : indicator)
      for (double& x : c) x = x <= q ? 1.0 : 0.0;
    tail = std::min(tail, ess_of(indicator));
  }
  d.ess_tail = tail;
  return d;
}

}  // namespace swarmfit
