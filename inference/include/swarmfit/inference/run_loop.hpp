// The sampling loop of a fit over a batched log-density: a Demcmc sampler stepped generation by
// generation, every `thin`-th kept in the chain; outlier walkers moved onto good ones during the
// burn-in; convergence checks (rank-normalised split R-hat and bulk ESS, Vehtari et al. 2021) at a
// cadence that thins out as the chain grows, with a stopping rule; checkpoints, progress reports
// and interruption through callbacks. Every decision is a function of the generation and the
// chain, so a run stopped and resumed from a checkpoint continues as an uninterrupted one would.
#pragma once

#include <functional>

#include "swarmfit/inference/chain.hpp"
#include "swarmfit/inference/demcmc.hpp"
#include "swarmfit/inference/progress.hpp"

namespace swarmfit {

struct RunLoopSettings {
  long generations = 1000;         // generations in all (a resumed run's included): the most, with a stopping rule
  long thin = 1;                   // keep every thin-th generation
  long burn_in = -1;               // generations the checks discard (-1: the first half of the kept draws)
  long check_every = 100;          // generations between outlier resets and (at first) convergence checks
  double rhat_target = 1.01;       // stop when every R-hat is below this ...
  double ess_target = 0;           // ... and every bulk ESS at least this (0: no stopping rule)
  long checkpoint_every = 0;       // generations between checkpoints (0: only by time)
  double checkpoint_seconds = 60;  // a checkpoint at least this often
  double progress_seconds = 0.5;   // progress reports at most this often
};

struct RunLoopCallbacks {
  // Called at the checkpoint cadence with the sampler and the kept chain (both complete).
  std::function<void(const Demcmc& sampler, const Chain& chain)> checkpoint;
  ProgressCallback progress;
  // Polled after every generation: true stops the loop (without a checkpoint: the caller saves).
  std::function<bool()> should_stop;
};

struct RunLoopResult {
  bool converged = false, interrupted = false;
  long walkers_reset = 0;              // outlier walkers moved in the burn-in
  double worst_rhat = 0, min_ess = 0;  // at the latest convergence check (inf and 0 without one)
  double seconds = 0, check_seconds = 0, checkpoint_seconds = 0;
};

// Steps `sampler` until settings.generations, the stopping rule or should_stop; appends the kept
// draws to `chain`.
RunLoopResult run_loop(Demcmc& sampler, Chain& chain, const RunLoopSettings& settings,
                       const RunLoopCallbacks& callbacks);

// The convergence checks (R-hat and ESS of every kept draw) cost time in proportion to the chain,
// so they thin out as it grows: every check_every generations up to 32 check_every, then every
// 2 check_every up to 64 check_every, and so on (between 1/32 and 1/16 of the run between two
// checks, so a bounded share of the time). A function of the generation only, so a resumed run
// stops where an uninterrupted run would.
bool convergence_check_due(long generation, long check_every);

}  // namespace swarmfit
