#include "swarmfit/models/predictions.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "swarmfit/observations/input_error.hpp"

namespace swarmfit {

Predictions predict(const ModelConfig& c, const std::vector<double>& params, long count, double grid_step,
                    const LikelihoodSettings* given) {
  const PlanetaryModel& model = *c.model;
  Predictions out;
  out.count = count;
  double min_period = 1e300;
  for (int p = 0; p < model.num_planets(); ++p)
    min_period = std::min(min_period, c.values[model.planet_parameter(p, 0)]);
  const double t0 = c.data.first_time() - 0.05 * (c.data.last_time() - c.data.first_time());
  const double stop_data = c.data.last_time() + 0.05 * (c.data.last_time() - c.data.first_time());
  if (grid_step <= 0) {
    grid_step = min_period / 50.0;
    // The automatic grid widens rather than pass the limits (very long spans of short periods,
    // many sets): a fit's predictive draws never fail on them.
    const double span = stop_data - std::max(model.options().reference_epoch, t0);
    const double most = std::min(0.5 * kMaxGridPoints, 0.5 * kMaxCurveValues / std::max<long>(count, 1));
    if (span / grid_step > most) grid_step = span / most;
  }
  const double start = std::max(model.options().reference_epoch + grid_step, t0);
  const double stop = stop_data + grid_step;
  const double points = std::floor((stop - start) / grid_step) + 1;
  auto g = [](double v) {
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%.4g", v);
    return std::string(buffer);
  };
  if (!(points <= kMaxGridPoints))
    throw InputError("--grid-step " + g(grid_step) + " d: " + g(points) + " points over the data's span, above the " +
                     "limit of " + g(kMaxGridPoints) + " (choose a larger step)");
  if (!(points * static_cast<double>(count) <= kMaxCurveValues))
    throw InputError("--grid-step " + g(grid_step) + " d: " + g(points) + " points x " + std::to_string(count) +
                     " parameter sets, above the limit of " + g(kMaxCurveValues) +
                     " values (choose a larger step or fewer sets)");
  for (long k = 0; k < static_cast<long>(points); ++k) out.grid.push_back(start + k * grid_step);

  LikelihoodSettings settings = given ? *given : c.likelihood;
  settings.extra_time = stop - c.data.last_time();
  const LikelihoodProblem problem(c.data, model, settings, c.values);
  out.time_step = problem.time_step();
  out.log_likelihood.resize(count);
  out.status.resize(count);
  ModelCurves curves;
  problem.evaluate(params.data(), count, out.log_likelihood.data(), out.status.data(), &curves);
  std::vector<int> grid_status;
  problem.rv_curve(params.data(), count, out.grid, out.rv_curve, grid_status);

  const int np = model.num_parameters();
  const Dataset& d = problem.data();
  const int nrv = static_cast<int>(d.rv.size()), ni = static_cast<int>(d.instruments.size());
  out.offsets.resize(static_cast<std::size_t>(count) * ni);
  out.rv_model.resize(static_cast<std::size_t>(count) * nrv);
  for (long s = 0; s < count && nrv > 0; ++s) {
    // Offsets: the parameters, or (marginalised) the weighted mean residual per instrument.
    for (int j = 0; j < ni; ++j) {
      double offset = params[s * np + model.offset_parameter(j)];
      if (settings.marginalize_offsets) {
        double sw = 0, swr = 0;
        const double jitter = params[s * np + model.jitter_parameter(j)];
        for (int k = 0; k < nrv; ++k)
          if (d.rv[k].instrument == j) {
            const double w = 1 / (d.rv[k].error * d.rv[k].error + jitter * jitter);
            sw += w;
            swr += w * (d.rv[k].rv - curves.rv[s * nrv + k]);
          }
        offset = swr / sw;
      }
      out.offsets[s * ni + j] = offset;
    }
    for (int k = 0; k < nrv; ++k)
      out.rv_model[s * nrv + k] = curves.rv[s * nrv + k] + out.offsets[s * ni + d.rv[k].instrument];
  }
  out.transit_model = curves.transits;
  set_transit_layout(problem, out);
  const int ntr = static_cast<int>(out.transit_rows.size());
  out.rv_rms.assign(count, 0.0);
  out.transit_rms.assign(count, 0.0);
  for (long s = 0; s < count; ++s) {
    for (int k = 0; k < nrv; ++k) {
      const double r = d.rv[k].rv - out.rv_model[s * nrv + k];
      out.rv_rms[s] += r * r / nrv;
    }
    for (int k = 0; k < ntr; ++k) {
      const double r = out.transit_rows[k].time - out.transit_model[s * ntr + k];
      if (std::isfinite(r)) out.transit_rms[s] += r * r / ntr;
    }
    out.rv_rms[s] = std::sqrt(out.rv_rms[s]);
    out.transit_rms[s] = std::sqrt(out.transit_rms[s]);
  }
  return out;
}

void set_transit_layout(const LikelihoodProblem& problem, Predictions& out) {
  out.transit_rows = problem.transit_rows();
  out.transit_planet.clear();
  out.ephemeris.clear();
  for (std::size_t r = 0; r < out.transit_rows.size(); ++r)
    out.transit_planet.push_back(problem.transit_row_planet(static_cast<int>(r)));
  for (int p = 0; p < problem.model().num_planets(); ++p) {
    bool observed = false;
    for (int q : out.transit_planet) observed = observed || q == p;
    out.ephemeris.push_back(observed ? problem.ephemeris(p) : LinearEphemeris{});
  }
  out.transit_linear.clear();
  for (std::size_t r = 0; r < out.transit_rows.size(); ++r) {
    const LinearEphemeris& e = out.ephemeris[out.transit_planet[r]];
    out.transit_linear.push_back(e.t0 + e.period * out.transit_rows[r].epoch);
  }
}

}  // namespace swarmfit
