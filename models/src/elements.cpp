#include "swarmfit/models/elements.hpp"

#include <cmath>

namespace swarmfit {

Elements cartesian_to_elements(const double (&x)[3], const double (&v)[3], double mu) {
  Elements el;
  const double r = std::sqrt(x[0] * x[0] + x[1] * x[1] + x[2] * x[2]);
  const double v2 = v[0] * v[0] + v[1] * v[1] + v[2] * v[2];
  const double h[3] = {x[1] * v[2] - x[2] * v[1], x[2] * v[0] - x[0] * v[2], x[0] * v[1] - x[1] * v[0]};
  const double hnorm = std::sqrt(h[0] * h[0] + h[1] * h[1] + h[2] * h[2]);
  el.a = 1.0 / (2.0 / r - v2 / mu);
  const double rv = x[0] * v[0] + x[1] * v[1] + x[2] * v[2];
  double ev[3];
  for (int d = 0; d < 3; ++d) ev[d] = ((v2 - mu / r) * x[d] - rv * v[d]) / mu;
  el.e = std::sqrt(ev[0] * ev[0] + ev[1] * ev[1] + ev[2] * ev[2]);
  el.inc = std::acos(h[2] / hnorm);
  el.node = std::atan2(h[0], -h[1]);
  // Argument of latitude u = omega + f from the node line.
  const double cn = std::cos(el.node), sn = std::sin(el.node);
  const double u = std::atan2(x[2] / std::sin(el.inc), x[0] * cn + x[1] * sn);
  const double f = std::atan2(rv * hnorm / mu, hnorm * hnorm / mu - r);
  el.omega = u - f;
  el.mean_anomaly = true_to_mean_anomaly(f, el.e);
  return el;
}

}  // namespace swarmfit
