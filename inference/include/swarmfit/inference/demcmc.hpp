// Differential-evolution Markov chain Monte Carlo (ter Braak 2006, Stat. Comput. 16, 239): walker
// i proposes x_i + gamma (x_a - x_b) + e with a != b drawn from the other walkers, gamma =
// 2.38 / sqrt(2 d) (and 1 every `gamma_one_every` generations, to jump between modes), e a small
// Gaussian. The walkers are updated in two halves, each proposing only from the other, fixed
// half (as emcee's red-blue moves, Foreman-Mackey et al. 2013): a whole half is one batched
// log-density call and detailed balance holds for each half update.
// Options: the DE-snooker move (ter Braak & Vrugt 2008, Stat. Comput. 18, 435, eq. 3 and the
// (|x* - z| / |x - z|)^(d-1) factor of its acceptance ratio), with the snooker points drawn from
// the other half; parallel tempering (Swendsen & Wang 1986; Earl & Deem 2005) with a ladder of
// temperatures T_k whose walkers target prior x L^(1/T_k): every temperature's half goes into the
// same batched call, and after each generation adjacent temperatures swap walkers with
// probability min(1, exp((1/T_k - 1/T_{k+1}) (lnL_{k+1} - lnL_k))) (Vousden et al. 2016's
// pairing: a random permutation of the hotter level against the colder).
// Option: an independence move from a kernel density estimate of the other half (kde > 0): the
// proposal y ~ q = (1/K) sum_j N(z_j, h^2 C), the z_j K members of the other half (all, or a
// random subset chosen from the generation's stream only), C their covariance and h Silverman's
// bandwidth (Silverman 1986, eq. 4.14: h = (4 / ((d + 2) K))^(1/(d + 4))), accepted with
// min(1, pi(y) q(x) / (pi(x) q(y))) (Metropolis-Hastings with a proposal that does not depend on
// x; Tierney 1994, Ann. Stat. 22, 1701). With the other half fixed, q is fixed, so each half
// update keeps the target; once the walkers cover the posterior, accepted KDE proposals are
// near-independent draws from it, which cuts the autocorrelation time of curved posteriors that
// DE explores slowly — most with large populations (GPU ensembles), whose KDE is good.
// Knows nothing about planets: a batched log-density in, a chain out (design/ARCHITECTURE.md).
#pragma once

#include <Eigen/Dense>
#include <cstdint>
#include <functional>
#include <vector>

#include "swarmfit/inference/random.hpp"

namespace swarmfit {

// Columns of `params` (d x n) in; per column the log prior and the log-likelihood out (-inf where
// impossible; the likelihood need not be evaluated where the prior is -inf) and a status code
// (0 = ok) passed through to the chain.
using BatchedLogDensity = std::function<void(const Eigen::MatrixXd& params, Eigen::VectorXd& log_prior,
                                             Eigen::VectorXd& log_likelihood, std::vector<int>& status)>;

struct DemcmcSettings {
  std::uint64_t seed = 1;
  double gamma_scale = 2.38;  // gamma = gamma_scale / sqrt(2 d)
  int gamma_one_every = 10;   // every this many generations gamma = 1 (0: never)
  double jitter = 1e-6;       // e ~ N(0, (jitter * scale_k)^2) per parameter, scale from the other half's spread
  double snooker = 0.0;       // probability that a walker's move is a snooker move
  std::vector<double> temperatures = {1.0};  // ladder, increasing from 1
  double kde = 0.0;                          // probability that a walker's move is a KDE independence proposal
  int kde_components = 256;                  // kernel centres: at most this many members of the other half
  double kde_bandwidth = 1.0;                // factor on Silverman's bandwidth
};

// The complete state of a sampler: with the settings and the seed, everything needed to go on.
struct DemcmcState {
  Eigen::MatrixXd walkers;  // d x (K W): temperature k's walkers are columns k W .. k W + W - 1
  Eigen::VectorXd log_prior, log_likelihood;
  std::vector<int> status;
  std::vector<long> accepted;        // accepted proposals per column since the start
  std::vector<long> swaps_accepted;  // per adjacent pair of temperatures (K - 1)
  long generation = 0;
};

class Demcmc {
 public:
  // initial: d x (K W) starting walkers (K temperatures), W even and >= 2 d + 2 (each half needs
  // two partners; three with snooker moves).
  Demcmc(const Eigen::MatrixXd& initial, BatchedLogDensity log_density, DemcmcSettings settings);
  // Continues from a saved state (no evaluation of the log-density).
  Demcmc(DemcmcState state, BatchedLogDensity log_density, DemcmcSettings settings);

  // One generation: the first half proposes from the second, then the second from the first, at
  // every temperature; then the temperature swaps.
  void step();

  const DemcmcState& state() const { return s_; }
  long generation() const { return s_.generation; }
  int num_walkers() const { return walkers_per_temperature_; }  // W
  int num_temperatures() const { return static_cast<int>(settings_.temperatures.size()); }
  // The T = 1 walkers (d x W), their log posterior (prior + likelihood) and what the latest
  // generation accepted.
  Eigen::MatrixXd walkers() const { return s_.walkers.leftCols(walkers_per_temperature_); }
  Eigen::VectorXd log_posterior() const;
  const std::vector<unsigned char>& accepted_last() const { return accepted_last_; }
  double acceptance_fraction() const;  // at T = 1, since the start
  double swap_fraction(int pair) const;
  // Moves T = 1 walker `to` onto walker `from`'s state (outlier reset during burn-in; not a
  // Markov move, so only before the draws that are kept).
  void replace_walker(int from, int to);

 private:
  void check();
  void update_half(int half);
  // The KDE of the other half of `level`: false (no KDE moves this time) where its covariance is
  // not positive definite.
  bool build_kde(long level, long other, std::uint64_t g);
  // ln q(v) - ln q(u) up to the shared constant, for the current KDE.
  double kde_log_ratio(const Eigen::VectorXd& v, const Eigen::VectorXd& u) const;
  double tempered(long column) const;

  BatchedLogDensity f_;
  DemcmcSettings settings_;
  CounterRandom random_;
  DemcmcState s_;
  int walkers_per_temperature_ = 0;
  std::vector<unsigned char> accepted_last_;
  // The current KDE: kernel centres (d x K, original; K x d whitened, so that one parameter of
  // every kernel is contiguous for SIMD), the Cholesky factor of C and h.
  Eigen::MatrixXd kde_centres_, kde_white_;
  Eigen::MatrixXd kde_cholesky_;
  double kde_h_ = 0;
};

}  // namespace swarmfit
