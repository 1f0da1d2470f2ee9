// Chain diagnostics. Integrated autocorrelation time with Sokal's adaptive window (Sokal 1997,
// "Monte Carlo methods in statistical mechanics", sec. 3; c = 5), as emcee computes it
// (Foreman-Mackey et al. 2013) on the walker-averaged series.
#pragma once

#include <vector>

namespace swarmfit {

// tau of a scalar series (length >= 2); 1 for an uncorrelated series.
double integrated_autocorrelation_time(const std::vector<double>& series, double window_factor = 5.0);

}  // namespace swarmfit
