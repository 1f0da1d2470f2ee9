// The walkers a fit starts from: a guess plus scatter, or draws from the priors, redrawn until
// each has a finite posterior; optionally after a differential-evolution optimisation
// (optimizer.hpp) from such a population, with the walkers then scattered around its best point.
#pragma once

#include <Eigen/Dense>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "swarmfit/inference/demcmc.hpp"
#include "swarmfit/inference/least_squares.hpp"
#include "swarmfit/inference/prior.hpp"
#include "swarmfit/inference/progress.hpp"

namespace swarmfit {

// Some walkers found no point with a finite posterior: the status code of each one's last try.
struct NoFiniteStart : std::runtime_error {
  NoFiniteStart(const std::string& what, std::vector<int> last_status)
      : std::runtime_error(what), last_status(std::move(last_status)) {}
  std::vector<int> last_status;
};

// `columns` walkers in the free parameters of `space`: guess + scatter * (prior standard deviation)
// * N(0, 1) per parameter (reflected at a bound of the prior's support it crosses), or
// (from_prior) prior draws; those with a posterior of -inf are redrawn,
// at most 100 rounds. Random numbers from the RandomPurpose::kInitial streams of `seed`, generation
// stream * 1000 + round. With `fallback`, the walkers still at -inf after those rounds are drawn
// again (rounds 100-199) on fallback instead (for a population that may hold members the
// optimiser rejects itself). Throws NoFiniteStart.
Eigen::MatrixXd initial_walkers(const ParameterSpace& space, const Eigen::VectorXd& guess, long columns,
                                bool from_prior, double scatter, std::uint64_t seed, std::uint64_t stream,
                                const BatchedLogDensity& log_density, const BatchedLogDensity* fallback = nullptr);

struct StartSettings {
  long walkers = 0;         // per temperature
  long temperatures = 1;    // columns: walkers x temperatures
  bool from_prior = false;  // draws from the priors, else the guess plus scatter
  double scatter = 0.01;    // in prior standard deviations
  long optimize = 0;        // generations of differential-evolution optimisation first (0: none)
  long least_squares = 0;   // then at most this many Levenberg-Marquardt steps (0: none)
  // The Laplace draws' width in the approximation's standard deviations (covariance x its square):
  // above 1 an over-dispersed start (Gelman & Rubin 1992), for a posterior wider than the curvature
  // at its mode says, whose population would otherwise widen slowly from a narrow start.
  double laplace_scale = 1.0;
  std::uint64_t seed = 1;
};

// Without optimisation: initial_walkers (stream 0). With: a population of `walkers` as above
// (stream 1), optimised, then every column scattered around its best point (stream 2). With
// least_squares steps and a `least_squares` problem: Levenberg-Marquardt (least_squares.hpp) from
// the guess, or from the optimised point, or (from_prior without optimize) from the population's
// best, and the walkers drawn from its Laplace approximation (laplace_walkers, stream 3); its
// outcome in *least_squares_result.
// With `screen` and `without_screen` (log_density less the screened constraint): the optimisation
// runs on without_screen and screens only its improving trials (optimizer.hpp); the walkers are
// drawn on log_density. A population member with no draw that passes the screen in 100 tries is
// drawn on without_screen (the optimiser screens it: it starts at -inf and gives way to the
// first trial that passes), so that a long screen few prior draws survive does not stop the start.
// `population_density` (optional): the population is drawn on it instead of log_density, as when
// the optimiser's screen is a cheaper form of the walkers' constraint (`screen` is then that form).
Eigen::MatrixXd starting_walkers(const ParameterSpace& space, const Eigen::VectorXd& guess,
                                 const StartSettings& settings, const BatchedLogDensity& log_density,
                                 const ProgressCallback& progress = {}, double progress_seconds = 0.5,
                                 const BatchedLogDensity* without_screen = nullptr, const BatchedScreen& screen = {},
                                 const BatchedLogDensity* population_density = nullptr,
                                 const LeastSquaresProblem* least_squares = nullptr,
                                 LeastSquaresResult* least_squares_result = nullptr);

// `columns` walkers drawn from N(centre, covariance) (a Laplace approximation), a parameter
// whose variance is zero scattered as initial_walkers does (scatter prior standard deviations);
// reflected into each prior's support and redrawn where the posterior is -inf (at most 100
// rounds; throws NoFiniteStart). Random numbers from the kInitial streams of `seed`, generation
// stream * 1000 + round.
Eigen::MatrixXd laplace_walkers(const ParameterSpace& space, const Eigen::VectorXd& centre,
                                const Eigen::MatrixXd& covariance, long columns, double scatter, std::uint64_t seed,
                                std::uint64_t stream, const BatchedLogDensity& log_density);

}  // namespace swarmfit
