// Chain diagnostics. Integrated autocorrelation time with Sokal's adaptive window (Sokal 1997,
// "Monte Carlo methods in statistical mechanics", sec. 3; c = 5), as emcee computes it
// (Foreman-Mackey et al. 2013) on the walker-averaged series.
#pragma once

#include <vector>

namespace swarmfit {

// tau of a scalar series (length >= 2); 1 for an uncorrelated series.
double integrated_autocorrelation_time(const std::vector<double>& series, double window_factor = 5.0);

// Convergence diagnostics of Vehtari, Gelman, Simpson, Carpenter & Buerkner (2021, Bayesian
// Analysis 16, 667): chains[c][t] are draws of one scalar; at least 2 chains of >= 4 draws.
// Split chains (each cut in two), rank-normalised (ranks -> normal quantiles).
struct ConvergenceDiagnostics {
  double rhat = 0;      // max of the rank-normalised split R-hat of the draws and of |draw - median|
  double ess_bulk = 0;  // effective sample size of the rank-normalised split chains
  double ess_tail = 0;  // min of the ESS of the 5% and 95% quantile indicators
};
ConvergenceDiagnostics convergence_diagnostics(const std::vector<std::vector<double>>& chains);

}  // namespace swarmfit
