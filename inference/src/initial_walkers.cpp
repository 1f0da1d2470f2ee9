#include "swarmfit/inference/initial_walkers.hpp"

#include <string>

#include "swarmfit/inference/optimizer.hpp"

namespace swarmfit {

namespace {

// A scattered draw outside a bounded prior, reflected back in at the bound it crossed. A guess on a
// bound (an optimum where the data push a parameter against its prior's edge: a jitter at its lower
// bound, CoRoT-3) would otherwise put about half of each walker's draws outside per such parameter,
// and with a few of them no draw of 100 was inside.
double into_support(const Prior& prior, double x) {
  if (x < prior.lower) x = prior.lower + (prior.lower - x);
  if (x > prior.upper) x = prior.upper - (x - prior.upper);
  if (x < prior.lower || x > prior.upper) x = 0.5 * (prior.lower + prior.upper);  // scatter wider than the support
  return x;
}

}  // namespace

Eigen::MatrixXd initial_walkers(const ParameterSpace& space, const Eigen::VectorXd& guess, long columns,
                                bool from_prior, double scatter, std::uint64_t seed, std::uint64_t stream,
                                const BatchedLogDensity& log_density, const BatchedLogDensity* fallback) {
  const CounterRandom random(seed);
  const long d = space.num_free();
  Eigen::MatrixXd x(d, columns);
  std::vector<long> pending(columns);
  for (long k = 0; k < columns; ++k) pending[k] = k;
  std::vector<int> last_status(columns, 0);
  const int rounds = fallback ? 200 : 100;
  for (int round = 0; round < rounds && !pending.empty(); ++round) {
    const BatchedLogDensity& f = round < 100 ? log_density : *fallback;
    Eigen::MatrixXd batch(d, static_cast<long>(pending.size()));
    for (std::size_t j = 0; j < pending.size(); ++j) {
      const std::uint64_t walker = static_cast<std::uint64_t>(pending[j]);
      const std::uint64_t g = stream * 1000 + round;
      for (long p = 0; p < d; ++p) {
        const Prior& prior = space.priors()[space.free_indices()[p]];
        if (from_prior)
          batch(p, j) = prior.sample(random.uniform(RandomPurpose::kInitial, walker, g, 2 * p),
                                     random.uniform(RandomPurpose::kInitial, walker, g, 2 * p + 1));
        else
          batch(p, j) = into_support(prior, guess(p) + scatter * prior.standard_deviation() *
                                                           random.normal(RandomPurpose::kInitial, walker, g, p));
      }
    }
    Eigen::VectorXd lp, ll;
    std::vector<int> status;
    f(batch, lp, ll, status);
    std::vector<long> still;
    for (std::size_t j = 0; j < pending.size(); ++j) {
      if (log_posterior_of(lp(j), ll(j)) > -std::numeric_limits<double>::infinity()) {
        x.col(pending[j]) = batch.col(j);
      } else {
        still.push_back(pending[j]);
        last_status[pending[j]] = status[j];
      }
    }
    pending = still;
  }
  if (!pending.empty()) {
    std::vector<int> failed;
    for (long k : pending) failed.push_back(last_status[k]);
    throw NoFiniteStart(
        std::to_string(pending.size()) + " walkers found no starting point with a finite posterior in 100 tries",
        failed);
  }
  return x;
}

Eigen::MatrixXd starting_walkers(const ParameterSpace& space, const Eigen::VectorXd& guess, const StartSettings& s,
                                 const BatchedLogDensity& f, const ProgressCallback& progress, double progress_seconds,
                                 const BatchedLogDensity* without_screen, const BatchedScreen& screen,
                                 const BatchedLogDensity* population_density) {
  if (s.optimize <= 0)
    return initial_walkers(space, guess, s.walkers * s.temperatures, s.from_prior, s.scatter, s.seed, 0, f);
  const bool screened = without_screen && screen;
  const Eigen::MatrixXd population =
      initial_walkers(space, guess, s.walkers, s.from_prior, s.scatter, s.seed, 1,
                      population_density ? *population_density : f, screened ? without_screen : nullptr);
  const Eigen::VectorXd best =
      optimize_differential_evolution(population, screened ? *without_screen : f, s.optimize, s.seed, progress,
                                      progress_seconds, screened ? screen : BatchedScreen());
  return initial_walkers(space, best, s.walkers * s.temperatures, false, s.scatter, s.seed, 2, f);
}

}  // namespace swarmfit
