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
// converged to round-off.
double solve_kepler(double mean_anomaly, double e);
double true_to_mean_anomaly(double true_anomaly, double e);

// Relative position and velocity of a body on the orbit, with mu = G (m_central + m_body).
void elements_to_cartesian(const Elements& el, double mu, double (&pos)[3], double (&vel)[3]);
Elements cartesian_to_elements(const double (&pos)[3], const double (&vel)[3], double mu);

}  // namespace swarmfit
