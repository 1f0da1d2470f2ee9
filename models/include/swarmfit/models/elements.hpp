// Orbital elements <-> Cartesian states of one two-body orbit, and the planetary-system model's
// element conventions (README, "Conventions"):
//  - observer on the +z axis, sky plane x-y; inclination i = 90 deg is edge-on;
//  - elements are the planet's: omega is the planet's argument of pericentre, measured from the
//    ascending node, where the planet crosses the sky plane moving towards the observer (+z);
//  - rotation as Murray & Dermott (1999, "Solar System Dynamics", eq. 2.122):
//    x = r [cos O cos(w+f) - sin O sin(w+f) cos i], y = r [sin O cos(w+f) + cos O sin(w+f) cos i],
//    z = r sin(w+f) sin i;
//  - a transit (planet in front, z > 0 at conjunction) happens at true anomaly f = pi/2 - omega.
#pragma once

#include <cmath>

#include "swarmfit/integrators/portability.hpp"
#include "swarmfit/models/units.hpp"

namespace swarmfit {

struct Elements {
  double a = 0.0;             // semi-major axis
  double e = 0.0;             // eccentricity, 0 <= e < 1
  double inc = 0.0;           // inclination, radians
  double node = 0.0;          // longitude of the ascending node, radians
  double omega = 0.0;         // argument of pericentre, radians
  double mean_anomaly = 0.0;  // radians
};

// Eccentric anomaly E with E - e sin E = M (0 <= e < 1): Newton from a Danby starting value,
// converged to round-off. Host and device (the GPU sets up its batches itself: system_setup.hpp).
SWARMFIT_HD double solve_kepler(double mean_anomaly, double e) {
  const double two_pi = 2.0 * units::kPi;
  double M = fmod(mean_anomaly, two_pi);
  if (M > units::kPi) M -= two_pi;
  if (M < -units::kPi) M += two_pi;
  // Danby (1988) starting value E0 = M + 0.85 e sign(sin M); Newton.
  double E = M + 0.85 * e * (sin(M) >= 0 ? 1.0 : -1.0);
  for (int k = 0; k < 50; ++k) {
    const double f = E - e * sin(E) - M;
    const double fp = 1.0 - e * cos(E);
    const double dE = f / fp;
    E -= dE;
    if (fabs(dE) < 1e-15 * (1.0 + fabs(E))) break;
  }
  return E + (mean_anomaly - M);
}

SWARMFIT_HD double true_to_mean_anomaly(double f, double e) {
  const double E = 2.0 * atan2(sqrt(1.0 - e) * sin(0.5 * f), sqrt(1.0 + e) * cos(0.5 * f));
  return E - e * sin(E);
}

// Relative position and velocity of a body on the orbit, with mu = G (m_central + m_body).
SWARMFIT_HD void elements_to_cartesian(const Elements& el, double mu, double (&pos)[3], double (&vel)[3]) {
  const double E = solve_kepler(el.mean_anomaly, el.e);
  const double cos_e = cos(E), sin_e = sin(E);
  const double root = sqrt(1.0 - el.e * el.e);
  // Position and velocity in the orbital plane (pericentre along x').
  const double xp = el.a * (cos_e - el.e), yp = el.a * root * sin_e;
  const double n = sqrt(mu / (el.a * el.a * el.a));
  const double edot = n / (1.0 - el.e * cos_e);
  const double vxp = -el.a * sin_e * edot, vyp = el.a * root * cos_e * edot;
  const double co = cos(el.omega), so = sin(el.omega);
  const double cn = cos(el.node), sn = sin(el.node);
  const double ci = cos(el.inc), si = sin(el.inc);
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

Elements cartesian_to_elements(const double (&pos)[3], const double (&vel)[3], double mu);

}  // namespace swarmfit
