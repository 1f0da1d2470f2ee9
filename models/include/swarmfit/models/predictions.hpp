// Model curves of parameter sets for output and plots (`swarmfit predict`, the predictive draws
// of `swarmfit fit`): the star's RV on a time grid and at the data times (with each
// instrument's offset), and the model times of the observed transits.
#pragma once

#include <vector>

#include "swarmfit/models/model_config.hpp"

namespace swarmfit {

struct Predictions {
  long count = 0;
  double time_step = 0;                          // days, the integration step used
  std::vector<double> grid;                      // BJD_TDB
  std::vector<double> rv_curve;                  // [set][grid], m/s, barycentric (no offsets)
  std::vector<double> rv_model;                  // [set][rv point], m/s, with the instrument's offset
  std::vector<double> offsets;                   // [set][instrument] (fitted, or the marginal's optimum)
  std::vector<double> transit_model;             // [set][transit row], BJD_TDB (NaN where missed)
  std::vector<TransitObservation> transit_rows;  // sorted by planet (model order), then epoch
  std::vector<int> transit_planet;               // model planet of each row
  std::vector<LinearEphemeris> ephemeris;        // per model planet (the data's)
  std::vector<double> transit_linear;            // [transit row], BJD_TDB: the data's linear ephemeris
  std::vector<double> log_likelihood;            // [set]
  std::vector<int> status;                       // [set]
  // Root-mean-square residuals (observed - model) per set: RVs (m/s, with the offsets) and the
  // transits the model has (days, over all rows).
  std::vector<double> rv_rms, transit_rms;
};

constexpr double kMaxGridPoints = 2e6;   // points of an RV curve
constexpr double kMaxCurveValues = 2e8;  // points x parameter sets (1.6 GB)

// params: count columns of model.num_parameters() values. grid_step <= 0: the shortest period / 50
// (widened to stay within the limits). An explicit grid past kMaxGridPoints, or curves past
// kMaxCurveValues, is an InputError before any integration.
// `settings` (optional): the likelihood settings to integrate with instead of the configuration's
// (a fit's, with its mean-ephemeris map).
Predictions predict(const ModelConfig& config, const std::vector<double>& params, long count, double grid_step,
                    const LikelihoodSettings* settings = nullptr);
// Only the transit rows, their planets and the data's ephemerides (no integration).
void set_transit_layout(const LikelihoodProblem& problem, Predictions& out);

}  // namespace swarmfit
