// The fit pipeline, for every face of swarmfit (the CLI's `swarmfit fit`, the Python package): a
// model configuration and fit settings in; the resume compatibility checked, the posterior built
// (posterior.hpp), the walkers optimised and initialised or resumed, inference's run loop run
// (inference/run_loop.hpp), and the HDF5 run file written (inference/run_file.hpp, plus /data and
// /predictive) at the checkpoints and at the end; the result and the posterior summary out. All
// bad input is refused with an InputError before any work or any file.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "swarmfit/inference/demcmc.hpp"
#include "swarmfit/inference/progress.hpp"
#include "swarmfit/inference/run_file.hpp"
#include "swarmfit/inference/summary.hpp"
#include "swarmfit/models/model_config.hpp"
#include "swarmfit/models/posterior.hpp"

namespace swarmfit {

struct FitSettings {
  int walkers = 0;  // per temperature
  long generations = 0, thin = 1, burn_in = -1, checkpoint_every = 0, optimize = 0, check_every = 100;
  long least_squares = 0;       // Levenberg-Marquardt steps after the optimisation (initial_walkers.hpp)
  double laplace_scale = 1;     // the Laplace draws' width in its standard deviations (StartSettings)
  bool mean_ephemeris = false;  // ephemeris = mean: periods and tc in mean-ephemeris coordinates (ephemeris.hpp)
  double checkpoint_seconds = 60, init_scatter = 0.01, rhat_target = 1.01, ess_target = 0;
  std::string output, init = "guess";
  bool overwrite = false;
  double max_run_file_gb = 4.0;   // refuse settings whose run file would be larger (estimated first)
  bool resume = false;            // continue the run in `output` (start it where there is none)
  std::string progress = "auto";  // auto, on or off: for the caller's display
  int predictive_draws = 50;
  DemcmcSettings sampler;
  // Several processes on one fit (mpirun): each evaluates a share of every batch (posterior.hpp);
  // all run the same sampler, and rank 0 alone writes the run file and the summary.
  BatchSharing sharing;
};

// The fit keys of a configuration (fit_keys()), checked; the walkers' default and minimum follow
// the number of free parameters of its [priors] (read_priors). Throws InputError naming the key.
FitSettings read_fit_settings(const ModelConfig& config);

// What a fit is about to do, once everything is checked.
struct FitStart {
  int free_parameters = 0, walkers = 0, temperatures = 0;
  long rv_points = 0, transit_times = 0;
  std::string integrator, backend;
  double time_step = 0;  // days
  StepCheck step_check;  // at the configuration's values (model_config.hpp)
  bool resumed = false;  // continues a run file, at:
  long generation = 0, draws = 0;
};

struct FitCallbacks {
  std::function<void(const FitStart&)> started;  // after the checks, before any work
  ProgressCallback progress;                     // the optimisation's and the sampling's
  std::function<bool()> should_stop;             // polled every generation: true saves the state and returns
};

// Where the sampling loop's time went (seconds).
struct FitTiming {
  double total = 0;                        // the whole fit, optimisation and output included
  double sampling = 0;                     // the sampling loop
  double likelihood = 0;                   // of it, the batched likelihood calls
  double gpu_kernels = 0, gpu_device = 0;  // of those, CUDA kernels and device time (0 on the CPU)
  double checks = 0, checkpoints = 0;
  double start = 0;  // the start phase: optimisers and initial walkers
};

struct FitResult {
  RunRecord run;  // as in the run file: chain, state, settings, attributes
  bool interrupted = false, converged = false;
  bool state_saved = true;  // false: interrupted in the start phase, before any state to save (none written)
  long generation = 0;
  double acceptance = 0;               // at T = 1, since the start
  std::vector<double> swap_fractions;  // per adjacent pair of temperatures
  long walkers_reset = 0;              // outlier walkers moved in the burn-in
  FitTiming timing;
  long first_draw = 0;              // the summary's first draw (after the burn-in)
  std::vector<SummaryRow> summary;  // empty with fewer than 4 draws after the burn-in, or interrupted
  std::string summary_csv;          // where the summary was written ("" where it was not)
  std::string stopping_rule;        // "met: ...", "NOT met: ..." or "none ...: worst R-hat ..." (run file too)
  bool converged_enough = false;    // the rule met; without one (ess_target = 0), R-hat below its target
  StepCheck best_step_check;        // the integration-error check at the best draw (done = false: none)
  bool least_squares_ran = false;   // the start's Levenberg-Marquardt optimisation, when it ran:
  LeastSquaresResult least_squares;
};

FitResult run_fit(const ModelConfig& config, const FitSettings& settings, const FitCallbacks& callbacks = {});

// OUTPUT_summary.csv for OUTPUT.h5.
std::string summary_path(const std::string& output);

}  // namespace swarmfit
