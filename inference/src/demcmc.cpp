#include "swarmfit/inference/demcmc.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

namespace swarmfit {

namespace {
constexpr double kInf = std::numeric_limits<double>::infinity();
// gradient.whole: the weight of a burn-in generation's covariance in the metric (about the last 10).
constexpr double kMetricWeight = 0.1;
// gradient.surrogate: stencil spacings tried (1, 1/2, 1/4 of SurrogateBuilder::kSpacing).
constexpr int kSurrogateTries = 3;
// ln prior + beta ln L, -inf where either is -inf or NaN (such a point is never accepted).
double tempered_target(double lp, double ll, double beta) {
  return (lp > -kInf && ll > -kInf && !std::isnan(lp + ll)) ? lp + beta * ll : -kInf;
}
}  // namespace

Demcmc::Demcmc(const Eigen::MatrixXd& initial, BatchedLogDensity log_density, DemcmcSettings settings,
               BatchedScreen screen)
    : f_(std::move(log_density)),
      screen_(std::move(screen)),
      settings_(std::move(settings)),
      random_(settings_.seed),
      differential_evolution_(settings_.differential_evolution),
      snooker_(settings_.snooker),
      kde_(settings_.kde),
      gradient_(settings_.gradient) {
  s_.walkers = initial;
  check();
  const long columns = s_.walkers.cols();
  s_.status.assign(columns, 0);
  s_.accepted.assign(columns, 0);
  s_.swaps_accepted.assign(num_temperatures() - 1, 0);
  f_(s_.walkers, s_.log_prior, s_.log_likelihood, s_.status);
  if (s_.log_prior.size() != columns || s_.log_likelihood.size() != columns)
    throw std::logic_error("log-density returned the wrong number of values");
  if (screen_) {
    std::vector<char> all(columns, 0);
    for (long k = 0; k < columns; ++k) all[k] = s_.log_prior(k) > -kInf && s_.log_likelihood(k) > -kInf;
    screen_(s_.walkers, all, s_.log_likelihood, s_.status);
  }
}

Demcmc::Demcmc(DemcmcState state, BatchedLogDensity log_density, DemcmcSettings settings, BatchedScreen screen)
    : f_(std::move(log_density)),
      screen_(std::move(screen)),
      settings_(std::move(settings)),
      random_(settings_.seed),
      differential_evolution_(settings_.differential_evolution),
      snooker_(settings_.snooker),
      kde_(settings_.kde),
      gradient_(settings_.gradient),
      s_(std::move(state)) {
  check();
  const std::size_t columns = s_.walkers.cols();
  if (static_cast<std::size_t>(s_.log_prior.size()) != columns ||
      static_cast<std::size_t>(s_.log_likelihood.size()) != columns || s_.status.size() != columns ||
      s_.accepted.size() != columns || s_.swaps_accepted.size() != settings_.temperatures.size() - 1)
    throw std::invalid_argument("DEMCMC state: arrays of the wrong size");
  if (!s_.gradient_metric.empty()) {
    if (static_cast<int>(s_.gradient_metric.size()) != num_temperatures())
      throw std::invalid_argument("DEMCMC state: a gradient metric per temperature expected");
    const long d = s_.walkers.rows();
    for (const Eigen::MatrixXd& c : s_.gradient_metric)
      if (c.size() != 0 && !is_covariance_matrix(c, d))
        throw std::invalid_argument("DEMCMC state: a gradient metric is not a d x d covariance matrix");
  }
  if (!s_.gradient_surrogate.empty()) {
    if (static_cast<int>(s_.gradient_surrogate.size()) != num_temperatures())
      throw std::invalid_argument("DEMCMC state: a gradient surrogate per temperature expected");
    const long d = s_.walkers.rows();
    long rows = -1;  // every level's surrogate expands the same residuals
    for (const QuadraticSurrogate& q : s_.gradient_surrogate) {
      if (q.empty()) continue;
      const long m = q.residuals.size();
      if (rows >= 0 && m != rows)
        throw std::invalid_argument("DEMCMC state: the gradient surrogates expand different numbers of residuals");
      rows = m;
      const bool shapes = q.centre.size() == d && q.factor.rows() == d && q.factor.cols() == d && m > 0 &&
                          q.jacobian.rows() == m && q.jacobian.cols() == d && q.hessian.rows() == d * m &&
                          q.hessian.cols() == d && q.slope.size() == d;
      if (!shapes || !q.centre.allFinite() || !q.factor.allFinite() || !q.residuals.allFinite() ||
          !q.jacobian.allFinite() || !q.hessian.allFinite() || !q.slope.allFinite() ||
          !q.factor.isLowerTriangular(0.0) || !(q.factor.diagonal().minCoeff() > 0))
        throw std::invalid_argument("DEMCMC state: a gradient surrogate is not a d-parameter quadratic expansion");
    }
  }
}

void Demcmc::use_residuals(ResidualModel model) {
  if (static_cast<long>(model.row_nu.size()) < 1 || model.likelihood_rows < 0 ||
      model.likelihood_rows > static_cast<long>(model.row_nu.size()) || !model.residuals)
    throw std::invalid_argument("DEMCMC: a residual model needs its residuals and at least one row");
  for (const QuadraticSurrogate& q : s_.gradient_surrogate)
    if (!q.empty() && q.residuals.size() != static_cast<long>(model.row_nu.size()))
      throw std::invalid_argument("the saved gradient surrogate has " + std::to_string(q.residuals.size()) +
                                  " residual rows, the model " + std::to_string(model.row_nu.size()));
  residual_model_ = std::move(model);
}

void Demcmc::build_surrogates(const std::vector<Eigen::MatrixXd>& factor) {
  if (!residual_model_.residuals) throw std::logic_error("DEMCMC: the surrogate force needs use_residuals()");
  const long d = s_.walkers.rows(), w = walkers_per_temperature_, levels = num_temperatures(), n = 2 * d * d + 1;
  if (static_cast<long>(s_.gradient_surrogate.size()) != levels) s_.gradient_surrogate.assign(levels, {});
  std::vector<long> build;  // (the burn-in's gradient generations only: Demcmc::update_gradient)
  for (long level = 0; level < levels; ++level)
    if (factor[level].size() != 0) build.push_back(level);
  // A stencil with a point the target cannot take (outside a prior's support, a model that fails)
  // is tried again at half the spacing, up to kSurrogateTries spacings; a level that never succeeds
  // keeps the surrogate it had.
  double spacing = SurrogateBuilder::kSpacing;
  for (int attempt = 0; attempt < kSurrogateTries && !build.empty(); ++attempt, spacing *= 0.5) {
    const long count = static_cast<long>(build.size());
    Eigen::MatrixXd points(d, count * n);
    std::vector<Eigen::VectorXd> centre(count);
    for (long b = 0; b < count; ++b) {
      centre[b] = s_.walkers.middleCols(build[b] * w, w).rowwise().mean();
      points.middleCols(b * n, n) = SurrogateBuilder::points(centre[b], factor[build[b]], spacing);
    }
    Eigen::MatrixXd residuals;
    Eigen::VectorXd lp, ll;
    std::vector<int> status(points.cols(), 0);
    residual_model_.residuals(points, residuals, lp, ll, status);
    if (residuals.cols() != points.cols() || lp.size() != points.cols() || ll.size() != points.cols() ||
        static_cast<long>(status.size()) != points.cols() ||
        residuals.rows() != static_cast<long>(residual_model_.row_nu.size()))
      throw std::logic_error("residuals returned the wrong number of rows or columns");
    std::vector<long> failed;
    for (long b = 0; b < count; ++b)
      if (!SurrogateBuilder::build(
              centre[b], factor[build[b]], spacing, residuals.middleCols(b * n, n), lp.segment(b * n, n),
              ll.segment(b * n, n), std::vector<int>(status.begin() + b * n, status.begin() + (b + 1) * n),
              residual_model_, 1.0 / settings_.temperatures[build[b]], s_.gradient_surrogate[build[b]]))
        failed.push_back(build[b]);
    build = failed;
  }
}

bool Demcmc::whole_gradient_generation(long generation) const {
  return settings_.gradient.whole && settings_.gradient.probability > 0 &&
         random_.uniform(RandomPurpose::kGradient, 0, 2 * static_cast<std::uint64_t>(generation), 0) <
             settings_.gradient.probability;
}

void Demcmc::check_settings(const DemcmcSettings& settings, long d, long w) {
  const auto& t = settings.temperatures;
  if (t.empty() || t[0] != 1.0) throw std::invalid_argument("DEMCMC: the temperature ladder must start at 1");
  for (std::size_t k = 1; k < t.size(); ++k)
    if (!(t[k] > t[k - 1])) throw std::invalid_argument("DEMCMC: temperatures must increase");
  if (d < 1) throw std::invalid_argument("DEMCMC needs at least one parameter");
  if (!settings.log_coordinates.empty() && static_cast<long>(settings.log_coordinates.size()) != d)
    throw std::invalid_argument("DEMCMC: log_coordinates needs one flag per parameter (" + std::to_string(d) + ")");
  const long needed = settings.snooker.probability > 0 ? std::max(2 * d + 2, 6L) : 2 * d + 2;
  if (w % 2 != 0 || w < needed)
    throw std::invalid_argument("DEMCMC needs an even number of walkers per temperature, at least " +
                                std::to_string(needed) + " for " + std::to_string(d) + " parameters");
  (void)SnookerMove(settings.snooker);  // each move checks its own settings
  (void)KdeMove(settings.kde);
  (void)GradientMove(settings.gradient);
  if (settings.gradient.surrogate && (!settings.gradient.whole || settings.gradient.steps < 1))
    throw std::invalid_argument(
        "DEMCMC: the surrogate force needs whole-population gradient moves with a fixed number of steps");
  if (!(settings.snooker.probability + settings.kde.probability <= 1))
    throw std::invalid_argument("DEMCMC: the KDE probability must be >= 0, and snooker + KDE <= 1");
}

void Demcmc::check() {
  const long levels = std::max<long>(1, static_cast<long>(settings_.temperatures.size()));
  if (s_.walkers.cols() % levels != 0)
    throw std::invalid_argument("DEMCMC: walkers are not a multiple of the temperatures");
  walkers_per_temperature_ = static_cast<int>(s_.walkers.cols() / levels);
  check_settings(settings_, s_.walkers.rows(), walkers_per_temperature_);
  if (settings_.gradient.surrogate && settings_.gradient.adapt_until < 1)
    throw std::invalid_argument(
        "DEMCMC: the surrogate force needs a burn-in (adapt_until >= 1) to build its surrogate in");
  accepted_last_.assign(walkers_per_temperature_, 0);
}

double Demcmc::tempered(long column) const {
  const double lp = s_.log_prior(column), ll = s_.log_likelihood(column);
  if (!(lp > -kInf) || !(ll > -kInf) || std::isnan(lp + ll)) return -kInf;
  return lp + ll / settings_.temperatures[column / walkers_per_temperature_];
}

void Demcmc::update_half(int half) {
  const long d = s_.walkers.rows(), w = walkers_per_temperature_, n = w / 2, levels = num_temperatures();
  const double p_snooker = settings_.snooker.probability, p_kde = settings_.kde.probability;
  // The generation counter of the random streams: 2 per generation (one per half).
  const std::uint64_t g = 2 * static_cast<std::uint64_t>(s_.generation) + half;
  if (settings_.gradient.probability > 0 && !settings_.gradient.whole &&
      random_.uniform(RandomPurpose::kGradient, 0, g, 0) < settings_.gradient.probability) {
    update_gradient(half);
    return;
  }
  Eigen::MatrixXd proposals(d, levels * n);
  Eigen::VectorXd log_correction = Eigen::VectorXd::Zero(levels * n);
  // The coordinates the moves work in: x, or ln x for the log_coordinates parameters (a value
  // outside (0, inf), whose density is 0 anyway, as the most negative finite logarithm).
  std::vector<long> logged;
  for (long p = 0; p < static_cast<long>(settings_.log_coordinates.size()); ++p)
    if (settings_.log_coordinates[p]) logged.push_back(p);
  Eigen::MatrixXd moved_storage;
  if (!logged.empty()) {
    moved_storage = s_.walkers;
    for (long p : logged)
      for (long k = 0; k < moved_storage.cols(); ++k) {
        const double x = moved_storage(p, k);
        moved_storage(p, k) = x > 0 ? std::log(x) : std::log(std::numeric_limits<double>::min());
      }
  }
  const Eigen::MatrixXd& moved = logged.empty() ? s_.walkers : moved_storage;
  for (long level = 0; level < levels; ++level) {
    const long first = level * w + half * n, other = level * w + (1 - half) * n;
    const HalfUpdate update{moved, other, n, level, s_.generation, g, random_};
    differential_evolution_.prepare(update);
    const bool kde = p_kde > 0 && kde_.prepare(update);
    // Every walker's proposal depends only on its own counter-keyed random numbers and the other
    // half, so the walkers are proposed in parallel with results independent of the thread count.
    std::vector<char> is_kde(n, 0);
#pragma omp parallel for schedule(static) if (n >= 256)
    for (long k = 0; k < n; ++k) {
      const std::uint64_t walker = first + k;
      const long column = level * n + k;
      const auto x = moved.col(first + k);
      const double move = (p_snooker > 0 || kde) ? random_.uniform(RandomPurpose::kMove, walker, g, 0) : 1.0;
      if (kde && move >= p_snooker && move < p_snooker + p_kde) {
        kde_.propose(update, walker, proposals.col(column));
        is_kde[k] = 1;
      } else if (move < p_snooker) {
        log_correction(column) = snooker_.propose(update, walker, x, proposals.col(column));
      } else {
        differential_evolution_.propose(update, walker, x, proposals.col(column));
      }
    }
    std::vector<long> kde_columns;
    for (long k = 0; k < n; ++k)
      if (is_kde[k]) kde_columns.push_back(k);
    // The KDE moves' Hastings ratio ln q(x) - ln q(y): K kernels per point, the costly part with
    // large populations, so over threads (each column independent; no random numbers here).
    const long kde_moves = static_cast<long>(kde_columns.size());
#pragma omp parallel for schedule(static) if (kde_moves > 64)
    for (long m = 0; m < kde_moves; ++m) {
      const long k = kde_columns[m], column = level * n + k;
      log_correction(column) = kde_.log_ratio(moved.col(first + k), proposals.col(column));
    }
    // Back to x: the target in ln x is pi(x) x, so each logged parameter adds ln x' - ln x.
    for (long p : logged)
      for (long k = 0; k < n; ++k) {
        const long column = level * n + k;
        log_correction(column) += proposals(p, column) - moved(p, first + k);
        proposals(p, column) = std::exp(proposals(p, column));
      }
  }
  Eigen::VectorXd proposed_prior, proposed_likelihood;
  std::vector<int> proposed_status(levels * n, 0);
  f_(proposals, proposed_prior, proposed_likelihood, proposed_status);
  if (proposed_prior.size() != levels * n || proposed_likelihood.size() != levels * n)
    throw std::logic_error("log-density returned the wrong number of values");
  // Metropolis-Hastings with the counter-keyed uniforms: the same decision whenever it is taken.
  auto accepts = [&](long level, long k) {
    const long i = level * w + half * n + k, column = level * n + k;
    const double lp = proposed_prior(column), ll = proposed_likelihood(column);
    const double beta = 1.0 / settings_.temperatures[level];
    const double target = tempered_target(lp, ll, beta);
    if (!(target > -kInf)) return false;  // -inf (and NaN) proposals are never accepted
    const double current = tempered(i);
    const double u = random_.uniform(RandomPurpose::kAccept, i, g, 0);
    const double delta = target - current + log_correction(column);
    return !(current > -kInf) || delta >= 0 || std::log(u) < delta;  // a walker at -inf takes any finite one
  };
  if (screen_) {
    std::vector<char> candidates(levels * n, 0);
    for (long level = 0; level < levels; ++level)
      for (long k = 0; k < n; ++k) candidates[level * n + k] = accepts(level, k);
    screen_(proposals, candidates, proposed_likelihood, proposed_status);
  }
  for (long level = 0; level < levels; ++level) {
    for (long k = 0; k < n; ++k) {
      const long i = level * w + half * n + k, column = level * n + k;
      const bool accept = accepts(level, k);
      if (level == 0) accepted_last_[half * n + k] = accept;
      if (accept)
        take(i, proposals.col(column), proposed_prior(column), proposed_likelihood(column), proposed_status[column]);
    }
  }
}
void Demcmc::take(long column, const Eigen::Ref<const Eigen::VectorXd>& x, double log_prior, double log_likelihood,
                  int status) {
  s_.walkers.col(column) = x;
  s_.log_prior(column) = log_prior;
  s_.log_likelihood(column) = log_likelihood;
  s_.status[column] = status;
  ++s_.accepted[column];
}

void Demcmc::update_gradient(int half) {
  const long d = s_.walkers.rows(), w = walkers_per_temperature_, n = w / 2, levels = num_temperatures();
  // The movers: per level `count` walkers from `offset` (a half, or the whole level).
  const long count = half < 0 ? w : n, offset = half < 0 ? 0 : half * n, m = levels * count;
  const std::uint64_t g = 2 * static_cast<std::uint64_t>(s_.generation) + std::max(half, 0);
  auto index = [&](long column) { return (column / count) * w + offset + column % count; };  // state column
  // Per temperature: the metric's factor and the step (no move where the factor fails).
  std::vector<Eigen::MatrixXd> factor(levels);
  std::vector<double> step(levels, 0.0);
  std::vector<char> active(m, 0);
  if (half < 0 && static_cast<long>(s_.gradient_metric.size()) != levels) s_.gradient_metric.assign(levels, {});
  for (long level = 0; level < levels; ++level) {
    if (half >= 0) {
      const HalfUpdate update{s_.walkers, level * w + (1 - half) * n, n, level, s_.generation, g, random_};
      if (!gradient_.prepare(update, s_.gradient_scale)) continue;
      factor[level] = gradient_.factor();
      step[level] = gradient_.step();
    } else {
      // The metric: the level's covariance averaged over the burn-in's gradient generations with
      // weights 1 - kMetricWeight per generation back (one generation's W walkers estimate a
      // covariance too noisily to be frozen: an HMC population is nearly new every generation).
      // From the burn-in's midpoint the average starts again: the k-th gradient generation since
      // gets weight max(kMetricWeight, 1 / k) (a running mean of the first ten, then the same
      // exponential average), so the first half's populations, still the start's shape, leave the
      // frozen metric (Stan's windowed adaptation, Stan Reference Manual, "HMC algorithm
      // parameters"): a metric still wide from the start slows the stiffest directions most.
      // k is counted from the generations' own draws, so a restored sampler gives the same weights.
      Eigen::MatrixXd& metric = s_.gradient_metric[level];
      const long until = settings_.gradient.adapt_until, mid = until / 2;
      if (s_.generation < until || metric.size() == 0) {
        const Eigen::MatrixXd now = sample_covariance(s_.walkers.middleCols(level * w, w), nullptr);
        double weight = kMetricWeight;
        if (s_.generation >= mid && s_.generation < until) {
          long k = 0;
          for (long q = mid; q <= s_.generation; ++q) k += whole_gradient_generation(q) ? 1 : 0;
          weight = std::max(kMetricWeight, 1.0 / static_cast<double>(std::max(k, 1L)));
        }
        if (metric.size() == 0)
          metric = now;
        else
          metric = (1 - weight) * metric + weight * now;
      }
      // Only a positive-definite metric is kept (and, after the burn-in, frozen): a failed one is
      // dropped and computed again next time, so the level is never stuck without moves and the
      // state saved is always one the constructor accepts.
      if (!covariance_cholesky(metric, factor[level])) {
        metric.resize(0, 0);
        continue;
      }
      // The jitter's own key: stream K W + level is no walker's (their momenta are theirs).
      step[level] = gradient_.jittered_step(
          d, s_.gradient_scale,
          random_.uniform(RandomPurpose::kGradient, static_cast<std::uint64_t>(s_.walkers.cols() + level), g, 0));
    }
    for (long k = 0; k < count; ++k) active[level * count + k] = tempered(index(level * count + k)) > -kInf;
  }
  // The leapfrog steps: the fixed count, or (steps = 0) the adapted length's at level 0's step,
  // jittered per move (one count for every walker: the batches stay one call each).
  const double length = s_.gradient_length > 0 ? s_.gradient_length : GradientMove::kInitialLength;
  int steps = settings_.gradient.steps;
  double jitter = 1.0;
  if (steps == 0) {
    jitter = 1.0 - random_.uniform(RandomPurpose::kGradient, static_cast<std::uint64_t>(s_.walkers.cols() + levels), g,
                                   0);  // (0, 1), on a stream no walker or level uses
    steps = step[0] > 0 ? trajectory_steps(length, step[0], jitter) : 1;
  }
  // u (whitened position relative to the start), p (momentum ~ N(0, I)), the gradient in u.
  Eigen::MatrixXd u = Eigen::MatrixXd::Zero(d, m), p(d, m), grad(d, m), proposals(d, m);
  for (long c = 0; c < m; ++c) {
    proposals.col(c) = s_.walkers.col(index(c));
    for (long q = 0; q < d; ++q) p(q, c) = random_.normal(RandomPurpose::kGradient, index(c), g, 1 + q);
  }
  const Eigen::VectorXd kinetic0 = 0.5 * p.colwise().squaredNorm().transpose();
  Eigen::VectorXd value(m), proposed_prior = Eigen::VectorXd::Constant(m, -kInf),
                            proposed_likelihood = Eigen::VectorXd::Constant(m, -kInf);
  std::vector<int> proposed_status(m, 0);
  for (long c = 0; c < m; ++c) value(c) = tempered(index(c));
  // The gradients at the active columns' points: one batched call of d (with_centre: d + 1) points
  // each; with the centre, its prior, likelihood and status are kept as the proposal's.
  std::vector<char> by_surrogate(m, 0);  // gradient.surrogate: the columns whose level has one
  auto differentiate = [&](bool with_centre) {
    std::vector<long> columns;
    for (long c = 0; c < m; ++c)
      if (active[c] && !by_surrogate[c]) columns.push_back(c);
    if (columns.empty()) return;
    const long per = d + 1, skip = with_centre ? 0 : 1, differentiated = static_cast<long>(columns.size());
    Eigen::MatrixXd points(d, differentiated * (per - skip));
    Eigen::MatrixXd block(d, per);
    for (long a = 0; a < differentiated; ++a) {
      const long c = columns[a], level = c / count;
      GradientMove::difference_points(factor[level], proposals.col(c), block);
      points.middleCols(a * (per - skip), per - skip) = block.rightCols(per - skip);
    }
    Eigen::VectorXd lp, ll;
    std::vector<int> status(points.cols(), 0);
    f_(points, lp, ll, status);
    if (lp.size() != points.cols() || ll.size() != points.cols())
      throw std::logic_error("log-density returned the wrong number of values");
    std::vector<double> values(per);
    for (long a = 0; a < differentiated; ++a) {
      const long c = columns[a], first = a * (per - skip);
      const double beta = 1.0 / settings_.temperatures[c / count];
      auto target = [&](long j) { return tempered_target(lp(j), ll(j), beta); };
      if (with_centre) {
        proposed_prior(c) = lp(first);
        proposed_likelihood(c) = ll(first);
        proposed_status[c] = status[first];
        value(c) = target(first);
      }
      values[0] = value(c);
      for (long j = 1; j < per; ++j) values[j] = target(first + j - skip);
      if (!GradientMove::gradient(values.data(), d, grad.col(c))) active[c] = 0;
    }
  };
  // gradient.surrogate: the force is the level surrogate's gradient at the columns' points, in the
  // move's whitened coordinates (dS/du = L^T dS/dx), and the target is evaluated at the ends only.
  // A level without one (no stencil the target could take in the whole burn-in) follows the
  // differences, as a level does after the burn-in for good: the kernel is fixed from then on.
  const bool surrogate = settings_.gradient.surrogate;
  if (surrogate) {
    if (!residual_model_.residuals) throw std::logic_error("DEMCMC: the surrogate force needs use_residuals()");
    if (s_.generation < settings_.gradient.adapt_until) build_surrogates(factor);
    if (static_cast<long>(s_.gradient_surrogate.size()) != levels) s_.gradient_surrogate.assign(levels, {});
    for (long c = 0; c < m; ++c) by_surrogate[c] = !s_.gradient_surrogate[c / count].empty();
  }
  auto surrogate_force = [&] {
    for (long level = 0; level < levels && surrogate; ++level) {
      if (s_.gradient_surrogate[level].empty()) continue;
      Eigen::MatrixXd gx;
      surrogate_gradient(s_.gradient_surrogate[level], residual_model_, 1.0 / settings_.temperatures[level],
                         proposals.middleCols(level * count, count), gx);
      for (long k = 0; k < count; ++k) {
        const long c = level * count + k;
        if (!active[c]) continue;
        grad.col(c) = factor[level].transpose() * gx.col(k);
        if (!grad.col(c).allFinite()) active[c] = 0;
      }
    }
  };
  auto evaluate_ends = [&] {
    std::vector<long> columns;
    for (long c = 0; c < m; ++c)
      if (active[c] && by_surrogate[c]) columns.push_back(c);
    if (columns.empty()) return;
    Eigen::MatrixXd points(d, static_cast<long>(columns.size()));
    for (std::size_t a = 0; a < columns.size(); ++a) points.col(static_cast<long>(a)) = proposals.col(columns[a]);
    Eigen::VectorXd lp, ll;
    std::vector<int> status(points.cols(), 0);
    f_(points, lp, ll, status);
    if (lp.size() != points.cols() || ll.size() != points.cols())
      throw std::logic_error("log-density returned the wrong number of values");
    for (std::size_t a = 0; a < columns.size(); ++a) {
      proposed_prior(columns[a]) = lp(static_cast<long>(a));
      proposed_likelihood(columns[a]) = ll(static_cast<long>(a));
      proposed_status[columns[a]] = status[a];
    }
  };
  surrogate_force();
  differentiate(false);
  // Leapfrog (Neal 2011, eqs. 5.18-5.20) with the force the differences (or the surrogate) give.
  for (int s = 0; s < steps; ++s) {
    for (long c = 0; c < m; ++c) {
      if (!active[c]) continue;
      const double e = step[c / count];
      p.col(c) += 0.5 * e * grad.col(c);
      u.col(c) += e * p.col(c);
      proposals.col(c) = s_.walkers.col(index(c)) + factor[c / count] * u.col(c);
    }
    surrogate_force();
    differentiate(true);
    for (long c = 0; c < m; ++c)
      if (active[c]) p.col(c) += 0.5 * step[c / count] * grad.col(c);
  }
  evaluate_ends();
  // Metropolis on the Hamiltonian, -ln pi + |p|^2 / 2 (Neal 2011, eq. 5.8).
  auto accepts = [&](long c) {
    if (!active[c]) return false;
    const double lp = proposed_prior(c), ll = proposed_likelihood(c);
    const double beta = 1.0 / settings_.temperatures[c / count];
    const double target = tempered_target(lp, ll, beta);
    if (!(target > -kInf)) return false;
    const double delta = target - tempered(index(c)) - 0.5 * p.col(c).squaredNorm() + kinetic0(c);
    const double uniform = random_.uniform(RandomPurpose::kAccept, index(c), g, 0);
    return delta >= 0 || std::log(uniform) < delta;
  };
  if (screen_) {
    std::vector<char> candidates(m, 0);
    for (long c = 0; c < m; ++c) candidates[c] = accepts(c);
    screen_(proposals, candidates, proposed_likelihood, proposed_status);
  }
  if (s_.generation < settings_.gradient.adapt_until) {  // warm-up: the step toward its target acceptance
    Eigen::VectorXd probability = Eigen::VectorXd::Zero(count);
    for (long c = 0; c < count; ++c) {
      if (!active[c]) continue;  // a rejected trajectory (outside the support, no gradient) counts as 0
      const double delta =
          proposed_prior(c) + proposed_likelihood(c) - tempered(index(c)) - 0.5 * p.col(c).squaredNorm() + kinetic0(c);
      probability(c) = std::isfinite(delta) ? std::min(1.0, std::exp(delta)) : 0.0;
    }
    s_.gradient_scale =
        adapted_gradient_scale(s_.gradient_scale, probability.sum() / count,
                               settings_.gradient.steps == 0 ? 2 : settings_.gradient.steps, s_.generation);
    if (settings_.gradient.steps == 0 && step[0] > 0 && probability.sum() > 0)
      s_.gradient_length = adapted_trajectory_length(
          length, chees_estimate(factor[0], offset, count, u, p, probability, active, steps * step[0]), step[0],
          s_.generation);
  }
  for (long c = 0; c < m; ++c) {
    const long i = index(c);
    const bool accept = accepts(c);
    if (c < count) accepted_last_[offset + c] = accept;
    if (accept) take(i, proposals.col(c), proposed_prior(c), proposed_likelihood(c), proposed_status[c]);
  }
}

CheesEstimate Demcmc::chees_estimate(const Eigen::MatrixXd& factor, long offset, long count, const Eigen::MatrixXd& u,
                                     const Eigen::MatrixXd& p, const Eigen::VectorXd& probability,
                                     const std::vector<char>& active, double time) const {
  // Level 0's movers (state columns offset .. offset + count - 1; columns 0 .. count - 1 of u, p),
  // whitened about their mean: z before, z + u after (Hoffman, Radul & Sountsov 2021, eq. 6, with
  // the proposals centred on their acceptance-weighted mean as theirs).
  CheesEstimate estimate;
  const long d = s_.walkers.rows();
  Eigen::VectorXd mean = Eigen::VectorXd::Zero(d);
  long n = 0;
  for (long c = 0; c < count; ++c)
    if (active[c]) mean += s_.walkers.col(offset + c), ++n;
  const double weight = probability.sum();
  if (n < 2 || !(weight > 0)) return estimate;
  mean /= static_cast<double>(n);
  const Eigen::MatrixXd z =
      factor.triangularView<Eigen::Lower>().solve(s_.walkers.middleCols(offset, count).colwise() - mean);
  const Eigen::MatrixXd after = z + u.leftCols(count);
  const Eigen::VectorXd centre = after * probability / weight;
  double square = 0, square2 = 0;
  for (long c = 0; c < count; ++c) {
    if (!active[c]) continue;
    const double r2 = z.col(c).squaredNorm();
    square += r2, square2 += r2 * r2;
    if (!(probability(c) > 0)) continue;
    const Eigen::VectorXd moved = after.col(c) - centre;
    const double change = moved.squaredNorm() - r2;
    estimate.chees += probability(c) * 0.25 * change * change / weight;
    // t d/dt of change^2 / 4: t change (moved . dz'/dt), dz'/dt = the end momentum (unit mass in
    // whitened units); at the time integrated, up to a step beyond v T with a few steps.
    estimate.time_derivative += probability(c) * time * change * moved.dot(p.col(c)) / weight;
  }
  square /= static_cast<double>(n);
  estimate.independent = 0.5 * (square2 / static_cast<double>(n) - square * square);  // Var |z|^2 / 2
  return estimate;
}

void Demcmc::step() {
  DemcmcState before = s_;  // a copy of the walkers per generation: nothing next to one evaluation
  std::vector<unsigned char> accepted_before = accepted_last_;
  try {
    step_unguarded();
  } catch (...) {
    s_ = std::move(before);
    accepted_last_ = std::move(accepted_before);
    throw;
  }
}

void Demcmc::step_unguarded() {
  if (whole_gradient_generation(s_.generation)) {
    update_gradient(-1);
  } else {
    update_half(0);
    update_half(1);
  }
  // Temperature swaps, from the hottest pair down, so a state can travel to T = 1 in one sweep.
  const long w = walkers_per_temperature_;
  const std::uint64_t g = static_cast<std::uint64_t>(s_.generation);
  std::vector<long> order(w);
  for (int level = num_temperatures() - 1; level >= 1; --level) {
    std::iota(order.begin(), order.end(), 0L);
    for (long k = w - 1; k > 0; --k) {  // Fisher-Yates
      const long j = static_cast<long>(random_.below(k + 1, RandomPurpose::kSwapOrder, level, g, k));
      std::swap(order[k], order[j]);
    }
    const double dbeta = 1.0 / settings_.temperatures[level - 1] - 1.0 / settings_.temperatures[level];
    for (long k = 0; k < w; ++k) {
      const long hot = level * w + k, cold = (level - 1) * w + order[k];
      const double lh = s_.log_likelihood(hot), lc = s_.log_likelihood(cold);
      if (!(lh > -kInf) || !(lc > -kInf)) continue;
      const double u = random_.uniform(RandomPurpose::kSwap, hot, g, 0);
      if (std::log(u) < dbeta * (lh - lc)) {
        s_.walkers.col(hot).swap(s_.walkers.col(cold));
        std::swap(s_.log_prior(hot), s_.log_prior(cold));
        std::swap(s_.log_likelihood(hot), s_.log_likelihood(cold));
        std::swap(s_.status[hot], s_.status[cold]);
        ++s_.swaps_accepted[level - 1];
      }
    }
  }
  ++s_.generation;
}

Eigen::VectorXd Demcmc::log_posterior() const {
  Eigen::VectorXd out(walkers_per_temperature_);
  for (long k = 0; k < walkers_per_temperature_; ++k) out(k) = tempered(k);
  return out;
}

double Demcmc::acceptance_fraction() const {
  if (s_.generation == 0) return 0.0;
  long total = 0;
  for (long k = 0; k < walkers_per_temperature_; ++k) total += s_.accepted[k];
  return static_cast<double>(total) / (static_cast<double>(s_.generation) * walkers_per_temperature_);
}

void Demcmc::replace_walker(int from, int to) {
  s_.walkers.col(to) = s_.walkers.col(from);
  s_.log_prior(to) = s_.log_prior(from);
  s_.log_likelihood(to) = s_.log_likelihood(from);
  s_.status[to] = s_.status[from];
}

double Demcmc::swap_fraction(int pair) const {
  if (s_.generation == 0) return 0.0;
  return static_cast<double>(s_.swaps_accepted[pair]) / (static_cast<double>(s_.generation) * walkers_per_temperature_);
}

}  // namespace swarmfit
