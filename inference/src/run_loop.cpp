#include "swarmfit/inference/run_loop.hpp"

#include <algorithm>
#include <chrono>
#include <limits>
#include <vector>

namespace swarmfit {

namespace {
constexpr double kInf = std::numeric_limits<double>::infinity();
}

bool convergence_check_due(long generation, long check_every) {
  long interval = check_every;
  while (generation >= 32 * interval) interval *= 2;
  return generation % interval == 0;
}

RunLoopResult run_loop(Demcmc& sampler, Chain& chain, const RunLoopSettings& s, const RunLoopCallbacks& callbacks) {
  const auto start = std::chrono::steady_clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
  RunLoopResult result;
  result.worst_rhat = kInf;
  double last_checkpoint = elapsed(), last_progress = -kInf;
  const long first_generation = sampler.generation();
  const long reset_until = s.burn_in >= 0 ? s.burn_in : s.generations / 4;
  const CounterRandom random(sampler.settings().seed);
  RunProgress report;
  report.generations = s.generations;
  auto report_progress = [&](bool finished) {
    const long g = sampler.generation();
    const double rate = (g - first_generation) / std::max(elapsed(), 1e-9);
    report.generation = g;
    report.finished = finished;
    report.acceptance = sampler.acceptance_fraction();
    report.worst_rhat = result.worst_rhat;
    report.min_ess = result.min_ess;
    report.eta_seconds = (s.generations - g) / std::max(rate, 1e-9);
    callbacks.progress(report);
  };
  while (sampler.generation() < s.generations) {
    try {
      sampler.step();
    } catch (const Interrupted&) {  // the sampler is as it was after the last whole generation
      result.interrupted = true;
      break;
    }
    const long g = sampler.generation();
    if (g % s.thin == 0) chain.append(sampler);
    // Outlier walkers stuck in poor regions are moved onto good ones during the burn-in (DREAM's
    // rule, chain.hpp), at the checks, deterministically (resume-safe).
    if (g % s.check_every == 0 && g <= reset_until) {
      const std::vector<int> outliers = chain.outliers(s.check_every / s.thin + 1);
      std::vector<int> good;
      for (int w = 0; w < sampler.num_walkers(); ++w)
        if (std::find(outliers.begin(), outliers.end(), w) == outliers.end()) good.push_back(w);
      for (std::size_t j = 0; j < outliers.size() && !good.empty(); ++j)
        sampler.replace_walker(good[random.below(good.size(), RandomPurpose::kOutlier, outliers[j], g, 0)],
                               outliers[j]);
      result.walkers_reset += static_cast<long>(outliers.size());
    }
    if (convergence_check_due(g, s.check_every)) {
      const double check_start = elapsed();
      const long first = first_kept_draw(chain, s.burn_in);
      if (chain.num_draws() - first >= 4) {
        result.worst_rhat = 0;
        result.min_ess = kInf;
        for (const auto& d : chain.diagnostics(first)) {
          result.worst_rhat = std::max(result.worst_rhat, d.rhat);
          result.min_ess = std::min(result.min_ess, d.ess_bulk);
        }
        result.converged = s.ess_target > 0 && result.worst_rhat < s.rhat_target && result.min_ess >= s.ess_target;
      }
      result.check_seconds += elapsed() - check_start;
    }
    if (callbacks.progress && elapsed() - last_progress >= s.progress_seconds) {
      last_progress = elapsed();
      report_progress(false);
    }
    if (callbacks.should_stop && callbacks.should_stop()) {
      result.interrupted = true;
      break;
    }
    if (result.converged) break;
    if ((s.checkpoint_every > 0 && g % s.checkpoint_every == 0) || elapsed() - last_checkpoint > s.checkpoint_seconds) {
      const double checkpoint_start = elapsed();
      if (callbacks.checkpoint) callbacks.checkpoint(sampler, chain);
      last_checkpoint = elapsed();
      result.checkpoint_seconds += last_checkpoint - checkpoint_start;
    }
  }
  if (callbacks.progress) report_progress(true);
  result.seconds = elapsed();
  return result;
}

}  // namespace swarmfit
