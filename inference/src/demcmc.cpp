#include "swarmfit/inference/demcmc.hpp"

#include <cmath>
#include <stdexcept>

namespace swarmfit {

Demcmc::Demcmc(const Eigen::MatrixXd& initial, BatchedLogDensity log_density, DemcmcSettings settings)
    : f_(std::move(log_density)), settings_(settings), random_(settings.seed), walkers_(initial) {
  const long d = walkers_.rows(), w = walkers_.cols();
  if (d < 1) throw std::invalid_argument("DEMCMC needs at least one parameter");
  if (w % 2 != 0 || w < 2 * d + 2)
    throw std::invalid_argument("DEMCMC needs an even number of walkers, at least 2 d + 2 = " +
                                std::to_string(2 * d + 2));
  status_.assign(w, 0);
  accepted_.assign(w, 0);
  f_(walkers_, log_density_, status_);
  if (log_density_.size() != w) throw std::logic_error("log-density returned the wrong number of values");
}

void Demcmc::update_half(int half) {
  const long d = walkers_.rows(), w = walkers_.cols(), n = w / 2;
  const long first = half * n, other = (1 - half) * n;
  const bool unit_gamma = settings_.gamma_one_every > 0 && (generation_ + 1) % settings_.gamma_one_every == 0;
  const double gamma = unit_gamma ? 1.0 : settings_.gamma_scale / std::sqrt(2.0 * d);
  // Per-parameter scale of the other half, for the jitter e.
  const Eigen::MatrixXd others = walkers_.middleCols(other, n);
  const Eigen::VectorXd mean = others.rowwise().mean();
  const Eigen::VectorXd spread = ((others.colwise() - mean).array().square().rowwise().sum() / (n - 1)).sqrt();
  Eigen::MatrixXd proposals(d, n);
  // The generation counter of the random streams: 2 per generation (one per half).
  const std::uint64_t g = 2 * static_cast<std::uint64_t>(generation_) + half;
  for (long k = 0; k < n; ++k) {
    const std::uint64_t walker = first + k;
    const long a = static_cast<long>(random_.below(n, RandomPurpose::kPartnerA, walker, g, 0));
    long b = static_cast<long>(random_.below(n - 1, RandomPurpose::kPartnerB, walker, g, 0));
    if (b >= a) ++b;  // a != b, both uniform over the other half
    for (long p = 0; p < d; ++p) {
      const double e = settings_.jitter * spread(p) * random_.normal(RandomPurpose::kJitter, walker, g, p);
      proposals(p, k) = walkers_(p, first + k) + gamma * (walkers_(p, other + a) - walkers_(p, other + b)) + e;
    }
  }
  Eigen::VectorXd proposed;
  std::vector<int> proposed_status(n, 0);
  f_(proposals, proposed, proposed_status);
  for (long k = 0; k < n; ++k) {
    const long i = first + k;
    const double u = random_.uniform(RandomPurpose::kAccept, i, g, 0);
    const double delta = proposed(k) - log_density_(i);
    // -inf proposals are never accepted; NaN is treated as -inf (it never should come back).
    if (std::isfinite(proposed(k)) && (delta >= 0 || std::log(u) < delta)) {
      walkers_.col(i) = proposals.col(k);
      log_density_(i) = proposed(k);
      status_[i] = proposed_status[k];
      ++accepted_[i];
    }
  }
}

void Demcmc::step() {
  update_half(0);
  update_half(1);
  ++generation_;
}

double Demcmc::acceptance_fraction() const {
  if (generation_ == 0) return 0.0;
  long total = 0;
  for (long a : accepted_) total += a;
  return static_cast<double>(total) / (static_cast<double>(generation_) * accepted_.size());
}

void Demcmc::restore(const Eigen::MatrixXd& walkers, const Eigen::VectorXd& log_density, const std::vector<int>& status,
                     const std::vector<long>& accepted, long generation) {
  if (walkers.rows() != walkers_.rows() || walkers.cols() != walkers_.cols())
    throw std::invalid_argument("restore: walker matrix of the wrong shape");
  walkers_ = walkers;
  log_density_ = log_density;
  status_ = status;
  accepted_ = accepted;
  generation_ = generation;
}

}  // namespace swarmfit
