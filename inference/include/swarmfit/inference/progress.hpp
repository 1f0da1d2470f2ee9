// What a running fit reports while it optimises and samples (run_loop.hpp, optimizer.hpp).
#pragma once

#include <functional>
#include <limits>

namespace swarmfit {

struct RunProgress {
  enum class Phase { kOptimize, kSample };
  Phase phase = Phase::kSample;
  long generation = 0, generations = 0;                                  // done, and the most the phase runs
  bool finished = false;                                                 // the phase's last report
  double best_log_posterior = -std::numeric_limits<double>::infinity();  // optimise: the best so far
  double acceptance = 0;                                                 // sample: at T = 1, since the start
  double worst_rhat = std::numeric_limits<double>::infinity();           // sample: at the latest check
  double min_ess = 0;                                                    // sample: bulk ESS, latest check
  double eta_seconds = 0;                                                // sample: at the loop's rate so far
};

// Called at most every `progress_seconds` of the phase (RunProgress::finished: once more at its end).
using ProgressCallback = std::function<void(const RunProgress&)>;

}  // namespace swarmfit
