// The kept draws of a DEMCMC run: the T = 1 walkers every `thin` generations, with their log
// prior, log-likelihood, status code and cumulative accepted proposals.
#pragma once

#include <vector>

#include "swarmfit/inference/demcmc.hpp"
#include "swarmfit/inference/diagnostics.hpp"

namespace swarmfit {

struct Chain {
  int num_parameters = 0, num_walkers = 0;
  std::vector<double> parameters;                 // [draw][walker][parameter]
  std::vector<double> log_prior, log_likelihood;  // [draw][walker]
  std::vector<int> status;                        // [draw][walker]
  std::vector<long> accepted;                     // [draw][walker], accepted proposals since the start
  std::vector<long> generation;                   // [draw], generations done when the draw was kept

  long num_draws() const { return static_cast<long>(generation.size()); }
  double parameter(long draw, int walker, int p) const {
    return parameters[(static_cast<std::size_t>(draw) * num_walkers + walker) * num_parameters + p];
  }
  void append(const Demcmc& sampler);
  // Draws [first, num_draws()) of parameter p, one series per walker.
  std::vector<std::vector<double>> series(int p, long first) const;
  // R-hat and ESS of every parameter over draws [first, num_draws()) (at least 4 of them).
  std::vector<ConvergenceDiagnostics> diagnostics(long first) const;
  // Accepted fraction of each walker's proposals over draws (first, num_draws()).
  std::vector<double> acceptance(long first) const;
  // Outlier walkers (DREAM, Vrugt et al. 2009, Int. J. Nonlin. Sci. Num. 10, 273, sec. 2.2): those
  // whose mean log posterior over the last `window` draws is below Q1 - 2 IQR of all walkers'.
  std::vector<int> outliers(long window) const;
};

// The first draw after `burn_in` generations (burn_in < 0: the second half of the draws).
long first_kept_draw(const Chain& chain, long burn_in);

}  // namespace swarmfit
