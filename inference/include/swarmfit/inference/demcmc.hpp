// Differential-evolution Markov chain Monte Carlo (ter Braak 2006, Stat. Comput. 16, 239) over a
// batched log-density. The walkers are updated in two halves, each proposing only from the other,
// fixed half (moves/half_update.hpp): a whole half is one batched log-density call and detailed
// balance holds for each half update. Each walker's move is the differential-evolution move
// (moves/differential_evolution.hpp), or with probability snooker.probability the DE-snooker move
// (moves/snooker.hpp), or with probability kde.probability the KDE independence move (moves/kde.hpp).
// With probability gradient.probability a half update is instead a gradient move of all its walkers
// (Hamiltonian Monte Carlo preconditioned by the other half, moves/gradient.hpp): steps + 1 batched
// calls of d + 1 points per walker (d for the first). With gradient.whole, a generation is instead,
// with that probability, one gradient move of every walker at once (whitened by the whole level,
// the metric frozen after gradient.adapt_until), else the two half updates without gradient moves.
// Parallel tempering (Swendsen & Wang 1986; Earl & Deem 2005): a ladder of temperatures T_k whose
// walkers target prior x L^(1/T_k); every temperature's half goes into the same batched call, and
// after each generation adjacent temperatures swap walkers with probability
// min(1, exp((1/T_k - 1/T_{k+1}) (lnL_{k+1} - lnL_k))) (Vousden et al. 2016's pairing: a random
// permutation of the hotter level against the colder).
// Knows nothing about planets: a batched log-density in, a chain out (design/ARCHITECTURE.md).
#pragma once

#include <Eigen/Dense>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "swarmfit/inference/moves/differential_evolution.hpp"
#include "swarmfit/inference/moves/gradient.hpp"
#include "swarmfit/inference/moves/kde.hpp"
#include "swarmfit/inference/moves/snooker.hpp"
#include "swarmfit/inference/moves/surrogate.hpp"
#include "swarmfit/inference/random.hpp"

namespace swarmfit {

// Thrown by a log-density or screen to stop the work in progress (a signal seen during a long
// evaluation). Demcmc::step leaves the sampler as it was before the step (run_loop.hpp returns
// interrupted), the start phase (initial_walkers.hpp) lets it through.
struct Interrupted : std::runtime_error {
  explicit Interrupted(const std::string& what) : std::runtime_error(what) {}
};

// Columns of `params` (d x n) in; per column the log prior and the log-likelihood out (-inf where
// impossible; the likelihood need not be evaluated where the prior is -inf) and a status code
// (0 = ok) passed through to the chain.
using BatchedLogDensity = std::function<void(const Eigen::MatrixXd& params, Eigen::VectorXd& log_prior,
                                             Eigen::VectorXd& log_likelihood, std::vector<int>& status)>;

// A constraint the log-density leaves out because it is costly (a stability integration): given the
// columns of `params` marked in `candidates`, it may only lower their log-likelihoods (to -inf, or
// by a penalty) and set their status codes. The sampler calls it on the proposals Metropolis would
// accept without it, and on the starting walkers: delayed acceptance (Christen & Fox 2005, J.
// Comput. Graph. Stat. 14, 795), exact here because the constraint only lowers the target, so a
// proposal rejected before it would be rejected after it too; the chain is the one the constraint
// inside the log-density gives, at the cost of the accepted proposals only.
using BatchedScreen = std::function<void(const Eigen::MatrixXd& params, const std::vector<char>& candidates,
                                         Eigen::VectorXd& log_likelihood, std::vector<int>& status)>;

struct DemcmcSettings {
  std::uint64_t seed = 1;
  DifferentialEvolutionSettings differential_evolution;
  SnookerSettings snooker;  // snooker.probability + kde.probability <= 1
  KdeSettings kde;
  GradientSettings gradient;
  std::vector<double> temperatures = {1.0};  // ladder, increasing from 1
  // Per parameter (empty: none): 1 where the DE, snooker and KDE moves propose in ln x rather than
  // x, for positive scale parameters with a log-uniform prior. Their posterior often spreads
  // evenly over decades down to the prior's lower bound (an RV jitter below the errors): in x, a
  // walker down there has a spread thousands of times narrower than the population's, so nearly
  // every move that changes x leaves the support and the walker (all its parameters, as every move
  // changes them together) sits for hundreds of generations. In ln x that region is as wide as any
  // other. The Hastings ratio carries the Jacobian, ln(x'/x) per such parameter, so the target is
  // unchanged; the walkers, the chain and the gradient moves stay in x.
  std::vector<char> log_coordinates;
};

// The complete state of a sampler: with the settings and the seed, everything needed to go on.
struct DemcmcState {
  Eigen::MatrixXd walkers;  // d x (K W): temperature k's walkers are columns k W .. k W + W - 1
  Eigen::VectorXd log_prior, log_likelihood;
  std::vector<int> status;
  std::vector<long> accepted;        // accepted proposals per column since the start
  std::vector<long> swaps_accepted;  // per adjacent pair of temperatures (K - 1)
  long generation = 0;
  double gradient_scale = 1.0;  // the gradient move's step factor, adapted during gradient.adapt_until
  double gradient_length = 0;   // gradient.steps = 0: the adapted trajectory length (0: not yet adapted)
  // gradient.whole: per temperature, the metric's covariance (the level's, averaged over the gradient
  // generations before adapt_until, frozen after); empty before the first.
  std::vector<Eigen::MatrixXd> gradient_metric;
  // gradient.surrogate: per temperature, the leapfrog's surrogate (built with the metric, frozen with
  // it); empty before the first.
  std::vector<QuadraticSurrogate> gradient_surrogate;
};

class Demcmc {
 public:
  // initial: d x (K W) starting walkers (K temperatures), W even and >= 2 d + 2 (each half needs
  // two partners; three with snooker moves).
  // `screen` (optional): a constraint applied to the proposals that would be accepted (BatchedScreen).
  Demcmc(const Eigen::MatrixXd& initial, BatchedLogDensity log_density, DemcmcSettings settings,
         BatchedScreen screen = {});
  // Continues from a saved state (no evaluation of the log-density).
  Demcmc(DemcmcState state, BatchedLogDensity log_density, DemcmcSettings settings, BatchedScreen screen = {});

  // gradient.surrogate: the residuals its surrogate is built from (before the first step; a restored
  // state's surrogates must have as many rows, else std::invalid_argument).
  void use_residuals(ResidualModel model);

  // Throws std::invalid_argument unless `settings` suit d parameters and W walkers per temperature
  // (the constructors' check, for callers that validate before any work).
  static void check_settings(const DemcmcSettings& settings, long d, long walkers_per_temperature);

  // One generation: the first half proposes from the second, then the second from the first, at
  // every temperature; then the temperature swaps. If the log-density or the screen throws, the
  // sampler is left as before the call (strong guarantee), so an Interrupted step can be saved.
  void step();

  const DemcmcSettings& settings() const { return settings_; }
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
  // gradient.whole: whether generation g is one gradient trajectory of the whole population (its
  // own counter-based draw, so any generation's answer is known at any time).
  bool whole_gradient_generation(long generation) const;
  void check();
  void step_unguarded();
  void update_half(int half);
  // A gradient move of half 0 or 1, or with half < 0 of every walker (gradient.whole).
  void update_gradient(int half);
  // steps = 0: the move's ChEES estimate at the time t it integrated (steps x step; for the adapted
  // length, moves/gradient.hpp) from level 0's movers' whitened displacements u, end momenta p and
  // acceptance probabilities (independent = 0 where there is none).
  CheesEstimate chees_estimate(const Eigen::MatrixXd& factor, long offset, long count, const Eigen::MatrixXd& u,
                               const Eigen::MatrixXd& p, const Eigen::VectorXd& probability,
                               const std::vector<char>& active, double time) const;
  // Column `column` takes an accepted proposal.
  void take(long column, const Eigen::Ref<const Eigen::VectorXd>& x, double log_prior, double log_likelihood,
            int status);
  double tempered(long column) const;

  // gradient.surrogate: (re)builds the level surrogates a gradient generation needs (the burn-in's,
  // or missing) about each level's mean with its metric `factor`, in one batched call.
  void build_surrogates(const std::vector<Eigen::MatrixXd>& factor);

  BatchedLogDensity f_;
  BatchedScreen screen_;
  ResidualModel residual_model_;
  DemcmcSettings settings_;
  CounterRandom random_;
  DifferentialEvolutionMove differential_evolution_;
  SnookerMove snooker_;
  KdeMove kde_;
  GradientMove gradient_;
  DemcmcState s_;
  int walkers_per_temperature_ = 0;
  std::vector<unsigned char> accepted_last_;
};

}  // namespace swarmfit
