#include "swarmfit/inference/diagnostics.hpp"

#include <cmath>
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

}  // namespace swarmfit
