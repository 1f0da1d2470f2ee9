#include "swarmfit/inference/optimizer.hpp"

#include <algorithm>
#include <chrono>
#include <vector>

namespace swarmfit {

Eigen::VectorXd optimize_differential_evolution(const Eigen::MatrixXd& start, const BatchedLogDensity& f,
                                                long generations, std::uint64_t seed, const ProgressCallback& progress,
                                                double progress_seconds, const BatchedScreen& screen) {
  const CounterRandom random(seed);
  const auto started = std::chrono::steady_clock::now();
  double last_report = -progress_seconds;
  Eigen::MatrixXd x = start;
  const long d = x.rows(), n = x.cols();
  Eigen::VectorXd lp, ll, value(n);
  std::vector<int> status;
  f(x, lp, ll, status);
  std::vector<char> candidates(n, 1);
  if (screen) screen(x, candidates, ll, status);
  for (long k = 0; k < n; ++k) value(k) = log_posterior_of(lp(k), ll(k));
  Eigen::MatrixXd trial(d, n);
  RunProgress report;
  report.phase = RunProgress::Phase::kOptimize;
  report.generations = generations;
  for (long g = 0; g < generations; ++g) {
    for (long i = 0; i < n; ++i) {
      // a, b, c: three distinct members other than i.
      long a = static_cast<long>(random.below(n - 1, RandomPurpose::kOptimize, i, g, 0));
      if (a >= i) ++a;
      long b = static_cast<long>(random.below(n - 2, RandomPurpose::kOptimize, i, g, 1));
      for (long skip : {std::min(a, i), std::max(a, i)})
        if (b >= skip) ++b;
      long c = static_cast<long>(random.below(n - 3, RandomPurpose::kOptimize, i, g, 2));
      long sorted[3] = {i, a, b};
      std::sort(sorted, sorted + 3);
      for (long skip : sorted)
        if (c >= skip) ++c;
      const long forced = static_cast<long>(random.below(d, RandomPurpose::kOptimize, i, g, 3));
      for (long p = 0; p < d; ++p) {
        const bool cross = p == forced || random.uniform(RandomPurpose::kOptimize, i, g, 4 + p) < 0.9;
        trial(p, i) = cross ? x(p, a) + 0.7 * (x(p, b) - x(p, c)) : x(p, i);
      }
    }
    f(trial, lp, ll, status);
    if (screen) {
      for (long i = 0; i < n; ++i) candidates[i] = log_posterior_of(lp(i), ll(i)) >= value(i);
      screen(trial, candidates, ll, status);
    }
    for (long i = 0; i < n; ++i) {
      const double v = log_posterior_of(lp(i), ll(i));
      if (v >= value(i)) {
        x.col(i) = trial.col(i);
        value(i) = v;
      }
    }
    const double now = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    report.generation = g + 1;
    report.best_log_posterior = value.maxCoeff();
    report.finished = g + 1 == generations;
    if (progress && (now - last_report >= progress_seconds || report.finished)) {
      last_report = now;
      progress(report);
    }
  }
  long best = 0;
  value.maxCoeff(&best);
  return x.col(best);
}

}  // namespace swarmfit
