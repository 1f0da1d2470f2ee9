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

// Fills the columns of x with draws (draw(walker, generation stream, column of batch)) until
// each has a finite posterior: at most 100 rounds on log_density, then 100 on fallback.
template <class Draw>
Eigen::MatrixXd draw_until_finite(long d, long columns, std::uint64_t stream, const BatchedLogDensity& log_density,
                                  const BatchedLogDensity* fallback, const Draw& draw) {
  Eigen::MatrixXd x(d, columns);
  std::vector<long> pending(columns);
  for (long k = 0; k < columns; ++k) pending[k] = k;
  std::vector<int> last_status(columns, 0);
  const int rounds = fallback ? 200 : 100;
  for (int round = 0; round < rounds && !pending.empty(); ++round) {
    const BatchedLogDensity& f = round < 100 ? log_density : *fallback;
    Eigen::MatrixXd batch(d, static_cast<long>(pending.size()));
    for (std::size_t j = 0; j < pending.size(); ++j)
      draw(static_cast<std::uint64_t>(pending[j]), stream * 1000 + round, batch.col(static_cast<long>(j)));
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

}  // namespace

Eigen::MatrixXd initial_walkers(const ParameterSpace& space, const Eigen::VectorXd& guess, long columns,
                                bool from_prior, double scatter, std::uint64_t seed, std::uint64_t stream,
                                const BatchedLogDensity& log_density, const BatchedLogDensity* fallback) {
  const CounterRandom random(seed);
  const long d = space.num_free();
  return draw_until_finite(
      d, columns, stream, log_density, fallback, [&](std::uint64_t walker, std::uint64_t g, auto column) {
        for (long p = 0; p < d; ++p) {
          const Prior& prior = space.priors()[space.free_indices()[p]];
          if (from_prior)
            column(p) = prior.sample(random.uniform(RandomPurpose::kInitial, walker, g, 2 * p),
                                     random.uniform(RandomPurpose::kInitial, walker, g, 2 * p + 1));
          else
            column(p) = into_support(prior, guess(p) + scatter * prior.standard_deviation() *
                                                           random.normal(RandomPurpose::kInitial, walker, g, p));
        }
      });
}

Eigen::MatrixXd laplace_walkers(const ParameterSpace& space, const Eigen::VectorXd& centre,
                                const Eigen::MatrixXd& covariance, long columns, double scatter, std::uint64_t seed,
                                std::uint64_t stream, const BatchedLogDensity& log_density) {
  const CounterRandom random(seed);
  const long d = space.num_free();
  // covariance = S S^T with S = V sqrt(Lambda): a square root that needs no positive definiteness.
  Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> eig(covariance);
  const Eigen::MatrixXd root = eig.eigenvectors() * eig.eigenvalues().cwiseMax(0.0).cwiseSqrt().asDiagonal();
  return draw_until_finite(
      d, columns, stream, log_density, nullptr, [&](std::uint64_t walker, std::uint64_t g, auto column) {
        Eigen::VectorXd z(d);
        for (long p = 0; p < d; ++p) z(p) = random.normal(RandomPurpose::kInitial, walker, g, p);
        const Eigen::VectorXd x = centre + root * z;
        for (long p = 0; p < d; ++p) {
          const Prior& prior = space.priors()[space.free_indices()[p]];
          const double v = covariance(p, p) > 0 ? x(p) : centre(p) + scatter * prior.standard_deviation() * z(p);
          column(p) = into_support(prior, v);
        }
      });
}

Eigen::MatrixXd starting_walkers(const ParameterSpace& space, const Eigen::VectorXd& guess, const StartSettings& s,
                                 const BatchedLogDensity& f, const ProgressCallback& progress, double progress_seconds,
                                 const BatchedLogDensity* without_screen, const BatchedScreen& screen,
                                 const BatchedLogDensity* population_density, const LeastSquaresProblem* least_squares,
                                 LeastSquaresResult* least_squares_result) {
  const bool lm = s.least_squares > 0 && least_squares;
  if (s.optimize <= 0 && !lm)
    return initial_walkers(space, guess, s.walkers * s.temperatures, s.from_prior, s.scatter, s.seed, 0, f);
  const bool screened = without_screen && screen;
  Eigen::VectorXd best = guess;
  if (s.optimize > 0 || s.from_prior) {
    const Eigen::MatrixXd population =
        initial_walkers(space, guess, s.walkers, s.from_prior, s.scatter, s.seed, 1,
                        population_density ? *population_density : f, screened ? without_screen : nullptr);
    if (s.optimize > 0) {
      best = optimize_differential_evolution(population, screened ? *without_screen : f, s.optimize, s.seed, progress,
                                             progress_seconds, screened ? screen : BatchedScreen());
    } else {  // prior draws, no differential evolution: least squares from the best of them
      Eigen::VectorXd lp, ll;
      std::vector<int> status;
      (screened ? *without_screen : f)(population, lp, ll, status);
      long top = 0;
      for (long k = 1; k < population.cols(); ++k)
        if (log_posterior_of(lp(k), ll(k)) > log_posterior_of(lp(top), ll(top))) top = k;
      best = population.col(top);
    }
  }
  if (!lm) return initial_walkers(space, best, s.walkers * s.temperatures, false, s.scatter, s.seed, 2, f);
  const LeastSquaresResult result =
      optimize_least_squares(best, *least_squares, s.least_squares, progress, progress_seconds);
  if (least_squares_result) *least_squares_result = result;
  return laplace_walkers(space, result.best, s.laplace_scale * s.laplace_scale * result.covariance,
                         s.walkers * s.temperatures, s.scatter, s.seed, 3, f);
}

}  // namespace swarmfit
