#include "swarmfit/inference/diagnostics.hpp"

#include <fftw3.h>

#include <algorithm>
#include <boost/math/special_functions/erf.hpp>
#include <cmath>
#include <mutex>
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

// Normal scores of pooled draws given in ascending order: draw order[k] has the k-th smallest
// value values[k]; ranks of ties averaged, then normal quantiles with Blom's offset (Vehtari et al.
// 2021, eq. 14). Written into `chains`' shape.
Chains normal_scores(const std::vector<double>& values, const std::vector<std::size_t>& order, std::size_t m,
                     std::size_t n) {
  const double s = static_cast<double>(values.size());
  Chains out(m, std::vector<double>(n));
  for (std::size_t i = 0; i < values.size();) {
    std::size_t j = i;
    while (j < values.size() && values[j] == values[i]) ++j;
    const double rank = 0.5 * (i + 1 + j);  // average of ranks i+1 .. j
    const double p = (rank - 0.375) / (s + 0.25);
    const double q = std::sqrt(2.0) * boost::math::erf_inv(2.0 * p - 1.0);
    for (std::size_t k = i; k < j; ++k) out[order[k] / n][order[k] % n] = q;
    i = j;
  }
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

// Mean over chains of the biased autocovariances, acov[lag] = 1/n sum_t (x_t - mean)(x_t+lag - mean),
// for every lag < n, by FFT (Wiener-Khinchin; the series zero-padded to >= 2n so that the circular
// correlation is the linear one), as Stan and ArviZ compute them: O(m n log n) however long the
// autocorrelation is. The direct sums cost O(m n) per lag, and a poorly mixed DE-MCMC ensemble
// needs hundreds of lags: at every convergence check they took most of a cheap RV fit's time.
std::mutex fftw_planner;  // FFTW's planner (plan creation and destruction) is not thread-safe

std::vector<double> mean_autocovariance(const Chains& chains, const std::vector<double>& means) {
  const std::size_t m = chains.size(), n = chains[0].size();
  std::size_t nfft = 1;
  while (nfft < 2 * n) nfft *= 2;
  const std::size_t nc = nfft / 2 + 1;
  double* x = fftw_alloc_real(nfft);
  fftw_complex* f = fftw_alloc_complex(nc);
  fftw_plan forward, backward;
  {
    // Chain::diagnostics runs parameters on threads: planning is serialised, executing a plan is
    // thread-safe. FFTW_ESTIMATE plans without timing runs and leaves the arrays alone.
    const std::lock_guard<std::mutex> lock(fftw_planner);
    forward = fftw_plan_dft_r2c_1d(static_cast<int>(nfft), x, f, FFTW_ESTIMATE);
    backward = fftw_plan_dft_c2r_1d(static_cast<int>(nfft), f, x, FFTW_ESTIMATE);
  }
  std::vector<double> acov(n, 0.0);
  for (std::size_t c = 0; c < m; ++c) {
    for (std::size_t t = 0; t < n; ++t) x[t] = chains[c][t] - means[c];
    std::fill(x + n, x + nfft, 0.0);
    fftw_execute(forward);
    for (std::size_t k = 0; k < nc; ++k) {
      f[k][0] = f[k][0] * f[k][0] + f[k][1] * f[k][1];  // |X_k|^2
      f[k][1] = 0.0;
    }
    fftw_execute(backward);  // unnormalised: nfft times the circular autocorrelation
    for (std::size_t lag = 0; lag < n; ++lag) acov[lag] += x[lag] / (static_cast<double>(nfft) * n);
  }
  for (double& a : acov) a /= static_cast<double>(m);
  {
    const std::lock_guard<std::mutex> lock(fftw_planner);
    fftw_destroy_plan(forward);
    fftw_destroy_plan(backward);
  }
  fftw_free(x);
  fftw_free(f);
  return acov;
}

// ESS of (split) chains from the multi-chain autocorrelation with Geyer's initial monotone
// positive sequence (eq. 10-13).
double ess_of(const Chains& chains) {
  const std::size_t m = chains.size(), n = chains[0].size();
  const Variances v = variances(chains);
  const double w = v.within, var_plus = v.var_plus;
  if (!(var_plus > 0)) return static_cast<double>(m * n);
  const std::vector<double> acov = mean_autocovariance(chains, v.means);
  auto rho = [&](std::size_t lag) { return 1.0 - (w - acov[lag]) / var_plus; };
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
  const std::size_t m = halves.size(), n = halves[0].size(), total = m * n;
  ConvergenceDiagnostics d;
  // One sort of the pooled draws serves everything: their ranks, the median, the tail quantiles,
  // and the ranks of the folded draws |x - median|, which are a merge of the two sorted runs on
  // either side of the median (below it in reverse order, the rest in order).
  std::vector<std::pair<double, std::size_t>> pooled(total);
  for (std::size_t c = 0; c < m; ++c)
    for (std::size_t t = 0; t < n; ++t) pooled[c * n + t] = {halves[c][t], c * n + t};
  std::sort(pooled.begin(), pooled.end());
  std::vector<double> sorted(total);
  std::vector<std::size_t> order(total);
  for (std::size_t k = 0; k < total; ++k) {
    sorted[k] = pooled[k].first;
    order[k] = pooled[k].second;
  }
  const Chains z = normal_scores(sorted, order, m, n);
  const double median = 0.5 * (sorted[(total - 1) / 2] + sorted[total / 2]);
  const std::size_t above =
      static_cast<std::size_t>(std::lower_bound(sorted.begin(), sorted.end(), median) - sorted.begin());
  std::vector<double> folded(total);
  std::vector<std::size_t> folded_order(total);
  {
    std::size_t lo = above, hi = above, k = 0;  // lo: one past the next draw below; hi: the next at or above
    while (lo > 0 || hi < total) {
      const bool take_low = hi == total || (lo > 0 && median - sorted[lo - 1] < sorted[hi] - median);
      const std::size_t at = take_low ? --lo : hi++;
      folded[k] = std::fabs(sorted[at] - median);
      folded_order[k++] = order[at];
    }
  }
  d.rhat = std::max(rhat_of(z), rhat_of(normal_scores(folded, folded_order, m, n)));
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
