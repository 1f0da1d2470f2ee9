// Differential-evolution Markov chain Monte Carlo (ter Braak 2006, Stat. Comput. 16, 239): walker
// i proposes x_i + gamma (x_a - x_b) + e with a != b drawn from the other walkers, gamma =
// 2.38 / sqrt(2 d) (and 1 every `gamma_one_every` generations, to jump between modes), e a small
// Gaussian. The walkers are updated in two halves, each proposing only from the other, fixed
// half (as emcee's red-blue moves, Foreman-Mackey et al. 2013): a whole half is one batched
// log-density call and detailed balance holds for each half update.
// Knows nothing about planets: a batched log-density in, a chain out (design/ARCHITECTURE.md).
#pragma once

#include <Eigen/Dense>
#include <cstdint>
#include <functional>
#include <vector>

#include "swarmfit/inference/random.hpp"

namespace swarmfit {

// Columns of `params` (d x n) in, one log-density per column out (-inf where impossible). The
// status vector carries a reason code per column (0 = ok), passed through to the chain.
using BatchedLogDensity =
    std::function<void(const Eigen::MatrixXd& params, Eigen::VectorXd& log_density, std::vector<int>& status)>;

struct DemcmcSettings {
  std::uint64_t seed = 1;
  double gamma_scale = 2.38;  // gamma = gamma_scale / sqrt(2 d)
  int gamma_one_every = 10;   // every this many generations gamma = 1 (0: never)
  double jitter = 1e-6;       // e ~ N(0, (jitter * scale_k)^2) per parameter, scale from the other half's spread
};

class Demcmc {
 public:
  // initial: d x W starting walkers, W even and >= 2 d + 2 (each half needs two partners).
  Demcmc(const Eigen::MatrixXd& initial, BatchedLogDensity log_density, DemcmcSettings settings);

  // One generation: the first half proposes from the second, then the second from the first.
  void step();

  long generation() const { return generation_; }
  const Eigen::MatrixXd& walkers() const { return walkers_; }
  const Eigen::VectorXd& log_density() const { return log_density_; }
  const std::vector<int>& status() const { return status_; }
  // Accepted proposals per walker since the start.
  const std::vector<long>& accepted() const { return accepted_; }
  double acceptance_fraction() const;

  // Restores a state saved from walkers(), log_density(), status(), accepted() and generation().
  void restore(const Eigen::MatrixXd& walkers, const Eigen::VectorXd& log_density, const std::vector<int>& status,
               const std::vector<long>& accepted, long generation);

 private:
  void update_half(int half);

  BatchedLogDensity f_;
  DemcmcSettings settings_;
  CounterRandom random_;
  Eigen::MatrixXd walkers_;
  Eigen::VectorXd log_density_;
  std::vector<int> status_;
  std::vector<long> accepted_;
  long generation_ = 0;
};

}  // namespace swarmfit
