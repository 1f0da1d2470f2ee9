#include "swarmfit/models/elements.hpp"

#include <cmath>

namespace swarmfit {

double solve_kepler(double mean_anomaly, double e) {
  const double two_pi = 2.0 * M_PI;
  double M = std::fmod(mean_anomaly, two_pi);
  if (M > M_PI) M -= two_pi;
  if (M < -M_PI) M += two_pi;
  // Danby (1988) starting value E0 = M + 0.85 e sign(sin M); Newton with a bracket fallback.
  double E = M + 0.85 * e * (std::sin(M) >= 0 ? 1.0 : -1.0);
  for (int k = 0; k < 50; ++k) {
    const double f = E - e * std::sin(E) - M;
    const double fp = 1.0 - e * std::cos(E);
    const double dE = f / fp;
    E -= dE;
    if (std::fabs(dE) < 1e-15 * (1.0 + std::fabs(E))) break;
  }
  return E + (mean_anomaly - M);
}

double true_to_mean_anomaly(double f, double e) {
  const double E = 2.0 * std::atan2(std::sqrt(1.0 - e) * std::sin(0.5 * f), std::sqrt(1.0 + e) * std::cos(0.5 * f));
  return E - e * std::sin(E);
}

void elements_to_cartesian(const Elements& el, double mu, double (&pos)[3], double (&vel)[3]) {
  const double E = solve_kepler(el.mean_anomaly, el.e);
  const double cos_e = std::cos(E), sin_e = std::sin(E);
  const double root = std::sqrt(1.0 - el.e * el.e);
  // Position and velocity in the orbital plane (pericentre along x').
  const double xp = el.a * (cos_e - el.e), yp = el.a * root * sin_e;
  const double n = std::sqrt(mu / (el.a * el.a * el.a));
  const double edot = n / (1.0 - el.e * cos_e);
  const double vxp = -el.a * sin_e * edot, vyp = el.a * root * cos_e * edot;
  const double co = std::cos(el.omega), so = std::sin(el.omega);
  const double cn = std::cos(el.node), sn = std::sin(el.node);
  const double ci = std::cos(el.inc), si = std::sin(el.inc);
  // Rotation R_z(node) R_x(inc) R_z(omega) (Murray & Dermott eq. 2.119-2.122).
  const double r11 = cn * co - sn * so * ci, r12 = -cn * so - sn * co * ci;
  const double r21 = sn * co + cn * so * ci, r22 = -sn * so + cn * co * ci;
  const double r31 = so * si, r32 = co * si;
  pos[0] = r11 * xp + r12 * yp;
  pos[1] = r21 * xp + r22 * yp;
  pos[2] = r31 * xp + r32 * yp;
  vel[0] = r11 * vxp + r12 * vyp;
  vel[1] = r21 * vxp + r22 * vyp;
  vel[2] = r31 * vxp + r32 * vyp;
}

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
