// Mean-ephemeris coordinates for transit-timing fits (fit key `ephemeris = mean`).
//
// Why: transit times fix each planet's MEAN period and epoch (the linear ephemeris of its
// transits over the data) to ~1e-6 of a period, while the osculating period and time of
// conjunction at the reference epoch differ from them by terms ~ mass x eccentricity x resonant
// phase (Lithwick, Xie & Wu 2012, ApJ 761, 122, eq. A.29). In the osculating elements the
// posterior is therefore a thin curved sheet, which no linear metric whitens; in the mean
// ephemeris it is nearly flat (bench/RESULTS.md has the measurement). The sampler then moves in
// y = (mean period, mean epoch of every transiting planet; every other parameter as is) and the
// likelihood integrates the osculating x = g(y) that has that mean ephemeris.
//
// The inverse g: F(x) (the weighted least-squares line through the model's transit times of each
// planet, t = T + P (epoch - n*), n* the data epoch nearest the configuration's tc) is smooth but
// not invertible in closed form. g is one preconditioned Newton step from a linear guess about an
// anchor x_a (the least-squares optimum), with J = dF/dx at x_a fixed (a chord method, Kelley 1995,
// "Iterative methods for linear and nonlinear equations", ch. 5.4):
//   g0(y) = x_a + J^-1 (y - F(x_a)),    g(y) = g0(y) + J^-1 (y - F(g0(y)))
// (only the periods and epochs of x change: the other rows of J are the identity's). g is a fixed
// smooth function of y, so the posterior in y is exact (the priors on period and tc apply to y);
// F(g(y)) = y holds to second order in y - F(x_a) (tested). It costs one more integration per
// likelihood (F(g0(y)) from the model's transit times).
#pragma once

#include <Eigen/Dense>
#include <string>
#include <vector>

namespace swarmfit {

struct EphemerisMap {
  // Per mapped planet: the model planet, the full-vector indices of its period and tc, and n*.
  std::vector<int> planets, period_index, tc_index;
  std::vector<long> reference_epoch_number;
  std::vector<double> anchor;      // full parameter vector in mean coordinates: y_a = F(x_a) (others x_a)
  std::vector<double> anchor_osc;  // per mapped planet: x_a's period, tc (2 m values)
  Eigen::MatrixXd gain;            // 2m x np: rows (period, tc) of each planet, J^-1 in full coordinates
  // Rows of the problem's transit tables and their weights per mapped planet (set by attach()):
  // P = sum w_period[i] t[row[i]], T = sum w_tc[i] t[row[i]], t relative to the reference epoch.
  std::vector<std::vector<int>> rows;
  std::vector<std::vector<double>> w_period, w_tc;

  int num_mapped() const { return static_cast<int>(planets.size()); }
  // Checks sizes and finiteness against np parameters (throws std::runtime_error naming what).
  void check(int num_parameters) const;
};

}  // namespace swarmfit
