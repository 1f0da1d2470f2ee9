#include "swarmfit/models/ephemeris.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "swarmfit/models/likelihood.hpp"
#include "swarmfit/models/status.hpp"
#include "swarmfit/observations/input_error.hpp"

namespace swarmfit {

void EphemerisMap::check(int np) const {
  const std::size_t m = planets.size();
  if (m == 0) throw std::runtime_error("ephemeris: no mapped planet");
  if (period_index.size() != m || tc_index.size() != m || reference_epoch_number.size() != m)
    throw std::runtime_error("ephemeris: per-planet arrays of different lengths");
  for (std::size_t q = 0; q < m; ++q)
    if (period_index[q] < 0 || period_index[q] >= np || tc_index[q] < 0 || tc_index[q] >= np)
      throw std::runtime_error("ephemeris: a parameter index out of range");
  if (static_cast<int>(anchor.size()) != np || anchor_osc.size() != 2 * m)
    throw std::runtime_error("ephemeris: anchor of the wrong size");
  if (gain.rows() != static_cast<long>(2 * m) || gain.cols() != np)
    throw std::runtime_error("ephemeris: gain is not [2 x planets][parameters]");
  for (double v : anchor)
    if (!std::isfinite(v)) throw std::runtime_error("ephemeris: anchor is not finite");
  for (double v : anchor_osc)
    if (!std::isfinite(v)) throw std::runtime_error("ephemeris: anchor is not finite");
  if (!gain.allFinite()) throw std::runtime_error("ephemeris: gain is not finite");
}

namespace {

int tc_parameter(const PlanetaryModel& model, int planet) { return model.planet_parameter(planet, 4); }

}  // namespace

void LikelihoodProblem::attach_ephemeris(const EphemerisMap& source) {
  source.check(model_.num_parameters());
  auto e = std::make_shared<EphemerisMap>(source);
  e->rows.assign(e->planets.size(), {});
  e->w_period.assign(e->planets.size(), {});
  e->w_tc.assign(e->planets.size(), {});
  for (int q = 0; q < e->num_mapped(); ++q) {
    const int planet = e->planets[q];
    if (planet < 0 || planet >= model_.num_planets() || e->period_index[q] != model_.planet_parameter(planet, 0) ||
        e->tc_index[q] != tc_parameter(model_, planet))
      throw std::runtime_error("ephemeris: the mapped planets do not match the model");
    // Weighted least squares t = T + P u, u = epoch - n*, weights 1 / sigma^2: P and T as linear
    // functionals of the model times (the normal equations solved once).
    double s = 0, su = 0, suu = 0;
    for (int row = 0; row < tables_.num_transits; ++row) {
      if (transit_row_planet(row) != planet) continue;
      const double w = 1.0 / (transit_error_[row] * transit_error_[row]);
      const double u = transit_epoch_[row] - static_cast<double>(e->reference_epoch_number[q]);
      e->rows[q].push_back(row);
      s += w;
      su += w * u;
      suu += w * u * u;
    }
    const double det = s * suu - su * su;
    if (!(det > 0)) throw std::runtime_error("ephemeris: a mapped planet has fewer than two epochs");
    for (int row : e->rows[q]) {
      const double w = 1.0 / (transit_error_[row] * transit_error_[row]);
      const double u = transit_epoch_[row] - static_cast<double>(e->reference_epoch_number[q]);
      e->w_period[q].push_back(w * (s * u - su) / det);
      e->w_tc[q].push_back(w * (suu - su * u) / det);
    }
  }
  ephemeris_ = std::move(e);
}

void LikelihoodProblem::mean_ephemeris(const double* transits_relative, long n, double* out) const {
  const EphemerisMap& e = *ephemeris_;
  const int nt = tables_.num_transits, m = e.num_mapped();
  for (long s = 0; s < n; ++s)
    for (int q = 0; q < m; ++q) {
      double period = 0, tc = 0;
      for (std::size_t i = 0; i < e.rows[q].size(); ++i) {
        const double t = transits_relative[s * nt + e.rows[q][i]];
        period += e.w_period[q][i] * t;
        tc += e.w_tc[q][i] * t;
      }
      out[(s * m + q) * 2] = period;
      out[(s * m + q) * 2 + 1] = tc;  // days after the reference epoch
    }
}

void LikelihoodProblem::osculating(const double* y, long n, std::vector<double>& x, std::vector<int>& status,
                                   DeviceTiming* timing) const {
  const EphemerisMap& e = *ephemeris_;
  const int np = model_.num_parameters(), m = e.num_mapped();
  const double t_ref = reference_epoch();
  x.assign(y, y + n * np);
  status.assign(n, kStatusOk);
  // g0: the linear guess about the anchor.
  for (long s = 0; s < n; ++s) {
    const double* ys = y + s * np;
    double* xs = x.data() + s * np;
    for (int r = 0; r < 2 * m; ++r) {
      double v = e.anchor_osc[r];
      for (int j = 0; j < np; ++j)
        if (e.gain(r, j) != 0) v += e.gain(r, j) * (ys[j] - e.anchor[j]);
      xs[r % 2 ? e.tc_index[r / 2] : e.period_index[r / 2]] = v;
    }
  }
  // One chord step: x += J^-1 (y - F(g0)), J^-1 restricted to the periods and epochs.
  ModelCurves curves;
  curves.relative_times = true;
  std::vector<double> lnl(n), f(static_cast<std::size_t>(n) * 2 * m);
  evaluate_here(x.data(), n, lnl.data(), status.data(), &curves, timing);
  mean_ephemeris(curves.transits.data(), n, f.data());
  std::vector<double> residual(2 * m);
  for (long s = 0; s < n; ++s) {
    if (status[s] != kStatusOk) continue;
    const double* ys = y + s * np;
    double* xs = x.data() + s * np;
    for (int q = 0; q < m; ++q) {
      residual[2 * q] = ys[e.period_index[q]] - f[(s * m + q) * 2];
      residual[2 * q + 1] = (ys[e.tc_index[q]] - t_ref) - f[(s * m + q) * 2 + 1];
    }
    for (int r = 0; r < 2 * m; ++r) {
      double v = 0;
      for (int k = 0; k < 2 * m; ++k) v += e.gain(r, k % 2 ? e.tc_index[k / 2] : e.period_index[k / 2]) * residual[k];
      xs[r % 2 ? e.tc_index[r / 2] : e.period_index[r / 2]] += v;
    }
  }
}

std::shared_ptr<const EphemerisMap> anchor_ephemeris(const LikelihoodProblem& problem, const std::vector<int>& free,
                                                     const std::vector<double>& typical,
                                                     const std::vector<double>& anchor,
                                                     const std::vector<double>& step) {
  const PlanetaryModel& model = problem.model();
  const int np = model.num_parameters();
  if (model.shape().phase_from_mean_anomaly)
    throw InputError("ephemeris = mean needs phase_parameter = tc (the mean epoch replaces each planet's tc)");
  EphemerisMap e;
  auto is_free = [&](int k) { return std::find(free.begin(), free.end(), k) != free.end(); };
  for (int p = 0; p < model.num_planets(); ++p) {
    const int ip = model.planet_parameter(p, 0), it = tc_parameter(model, p);
    int epochs = 0;  // distinct epochs, at most two counted
    long first = 0;
    for (int row = 0; row < static_cast<int>(problem.transit_rows().size()); ++row) {
      if (problem.transit_row_planet(row) != p) continue;
      const long epoch = problem.transit_rows()[row].epoch;
      if (epochs == 0) first = epoch;
      if (epochs == 0 || (epochs == 1 && epoch != first)) ++epochs;
    }
    if (epochs < 2 || !is_free(ip) || !is_free(it)) continue;  // no mean ephemeris: kept osculating
    const LinearEphemeris eph = problem.ephemeris(p);
    e.planets.push_back(p);
    e.period_index.push_back(ip);
    e.tc_index.push_back(it);
    e.reference_epoch_number.push_back(std::lround((typical[it] - eph.t0) / eph.period));
  }
  if (e.planets.empty())
    throw InputError("ephemeris = mean: no planet has transit times at two epochs or more with its period and tc free");
  const int m = e.num_mapped();
  // F and its Jacobian at the anchor by central differences along the free parameters.
  e.anchor = anchor;
  e.gain = Eigen::MatrixXd::Zero(2 * m, np);
  e.anchor_osc.assign(2 * m, 0.0);
  for (int q = 0; q < m; ++q) {
    e.anchor_osc[2 * q] = anchor[e.period_index[q]];
    e.anchor_osc[2 * q + 1] = anchor[e.tc_index[q]];
  }
  LikelihoodProblem copy = problem;
  copy.attach_ephemeris(e);  // for the rows' weights (evaluate_here ignores the map)
  const long d = static_cast<long>(free.size()), columns = 2 * d + 1;
  std::vector<double> x(static_cast<std::size_t>(columns) * np);
  for (long c = 0; c < columns; ++c) {
    std::copy(anchor.begin(), anchor.end(), x.begin() + c * np);
    if (c > 0) x[c * np + free[(c - 1) % d]] += (c <= d ? 1 : -1) * step[(c - 1) % d];
  }
  std::vector<double> lnl(columns), f(static_cast<std::size_t>(columns) * 2 * m);
  std::vector<int> status(columns);
  ModelCurves curves;
  curves.relative_times = true;
  copy.evaluate_osculating(x.data(), columns, lnl.data(), status.data(), &curves, nullptr);
  for (int s : status)
    if (s != kStatusOk)
      throw InputError(std::string("ephemeris = mean: the model cannot be integrated about the optimum (") +
                       model_status_name(s) + ")");
  copy.mean_ephemeris(curves.transits.data(), columns, f.data());
  Eigen::MatrixXd jacobian(2 * m, d);
  for (long j = 0; j < d; ++j)
    for (int r = 0; r < 2 * m; ++r)
      jacobian(r, j) = (f[(1 + j) * 2 * m + r] - f[(1 + d + j) * 2 * m + r]) / (2 * step[j]);
  for (int q = 0; q < m; ++q) {
    e.anchor[e.period_index[q]] = f[2 * q];
    e.anchor[e.tc_index[q]] = f[2 * q + 1] + problem.reference_epoch();
  }
  // J = [B C] over (periods and epochs, the other free parameters): J^-1 in full coordinates is
  // B^-1 on the first and -B^-1 C on the second (the other rows of J are the identity's).
  Eigen::MatrixXd b(2 * m, 2 * m);
  for (int k = 0; k < 2 * m; ++k) {
    const int index = k % 2 ? e.tc_index[k / 2] : e.period_index[k / 2];
    const long j = std::find(free.begin(), free.end(), index) - free.begin();
    b.col(k) = jacobian.col(j);
  }
  const Eigen::FullPivLU<Eigen::MatrixXd> lu(b);
  if (!lu.isInvertible() || !(lu.rcond() > 1e-12))
    throw InputError("ephemeris = mean: the mean ephemeris does not determine the osculating periods and epochs here");
  const Eigen::MatrixXd b_inverse = lu.inverse();
  for (long j = 0; j < d; ++j) {
    const Eigen::VectorXd column = b_inverse * jacobian.col(j);
    e.gain.col(free[j]) = -column;
  }
  for (int k = 0; k < 2 * m; ++k) e.gain.col(k % 2 ? e.tc_index[k / 2] : e.period_index[k / 2]) = b_inverse.col(k);
  e.check(np);
  return std::make_shared<const EphemerisMap>(std::move(e));
}

void to_mean_ephemeris(const LikelihoodProblem& problem, const EphemerisMap& map, double* params, long n,
                       std::vector<int>& status) {
  LikelihoodProblem copy = problem;
  copy.attach_ephemeris(map);
  const int np = problem.model().num_parameters(), m = map.num_mapped();
  std::vector<double> lnl(n), f(static_cast<std::size_t>(n) * 2 * m);
  status.assign(n, kStatusOk);
  ModelCurves curves;
  curves.relative_times = true;
  copy.evaluate_osculating(params, n, lnl.data(), status.data(), &curves, nullptr);
  copy.mean_ephemeris(curves.transits.data(), n, f.data());
  for (long s = 0; s < n; ++s) {
    if (status[s] != kStatusOk) continue;
    for (int q = 0; q < m; ++q) {
      params[s * np + map.period_index[q]] = f[(s * m + q) * 2];
      params[s * np + map.tc_index[q]] = f[(s * m + q) * 2 + 1] + problem.reference_epoch();
    }
  }
}

}  // namespace swarmfit
