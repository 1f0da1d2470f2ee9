#include "swarmfit/inference/chain.hpp"

#include <algorithm>
#include <stdexcept>

namespace swarmfit {

void Chain::append(const Demcmc& sampler) {
  const Eigen::MatrixXd x = sampler.walkers();
  if (num_draws() == 0) {
    num_parameters = static_cast<int>(x.rows());
    num_walkers = static_cast<int>(x.cols());
  } else if (x.rows() != num_parameters || x.cols() != num_walkers) {
    throw std::invalid_argument("Chain::append: the sampler's shape changed");
  }
  const DemcmcState& s = sampler.state();
  for (int w = 0; w < num_walkers; ++w) {
    for (int p = 0; p < num_parameters; ++p) parameters.push_back(x(p, w));
    log_prior.push_back(s.log_prior(w));
    log_likelihood.push_back(s.log_likelihood(w));
    status.push_back(s.status[w]);
    accepted.push_back(s.accepted[w]);
  }
  generation.push_back(s.generation);
}

std::vector<std::vector<double>> Chain::series(int p, long first) const {
  std::vector<std::vector<double>> out(num_walkers);
  for (int w = 0; w < num_walkers; ++w)
    for (long t = first; t < num_draws(); ++t) out[w].push_back(parameter(t, w, p));
  return out;
}

std::vector<ConvergenceDiagnostics> Chain::diagnostics(long first) const {
  // One parameter per thread: each is a few sorts of every kept draw (large with many walkers).
  std::vector<ConvergenceDiagnostics> out(num_parameters);
#pragma omp parallel for schedule(dynamic)
  for (int p = 0; p < num_parameters; ++p) out[p] = convergence_diagnostics(series(p, first));
  return out;
}

std::vector<double> Chain::acceptance(long first) const {
  std::vector<double> out(num_walkers, 0.0);
  const long last = num_draws() - 1;
  if (last <= first) return out;
  const double generations = static_cast<double>(generation[last] - generation[first]);
  for (int w = 0; w < num_walkers; ++w)
    out[w] = (accepted[last * num_walkers + w] - accepted[first * num_walkers + w]) / generations;
  return out;
}

std::vector<int> Chain::outliers(long window) const {
  std::vector<int> out;
  const long first = std::max(0L, num_draws() - window);
  if (num_draws() - first < 2 || num_walkers < 4) return out;
  std::vector<double> mean(num_walkers, 0.0);
  for (int w = 0; w < num_walkers; ++w) {
    for (long t = first; t < num_draws(); ++t) {
      const std::size_t k = static_cast<std::size_t>(t) * num_walkers + w;
      mean[w] += log_prior[k] + log_likelihood[k];
    }
    mean[w] /= static_cast<double>(num_draws() - first);
  }
  std::vector<double> sorted = mean;
  std::sort(sorted.begin(), sorted.end());
  auto quartile = [&](double q) {
    const double h = q * (sorted.size() - 1);
    const std::size_t k = static_cast<std::size_t>(h);
    return k + 1 < sorted.size() ? sorted[k] + (h - k) * (sorted[k + 1] - sorted[k]) : sorted.back();
  };
  const double q1 = quartile(0.25), q3 = quartile(0.75);
  for (int w = 0; w < num_walkers; ++w)
    if (!(mean[w] >= q1 - 2.0 * (q3 - q1))) out.push_back(w);
  return out;
}

long first_kept_draw(const Chain& c, long burn_in) {
  if (c.num_draws() == 0) return 0;
  if (burn_in < 0) return c.num_draws() / 2;
  long first = 0;
  while (first < c.num_draws() && c.generation[first] <= burn_in) ++first;
  return first;
}

}  // namespace swarmfit
