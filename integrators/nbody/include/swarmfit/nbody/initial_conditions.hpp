// Initial conditions for the large-N engine, in Henon (N-body) units where the model has them:
// G = 1, total mass 1, E = -1/4 (Heggie & Mathieu 1986).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "swarmfit/nbody/engine.hpp"

namespace swarmfit::nbody {

// A Plummer sphere of n equal masses (Aarseth, Henon & Wielen 1974, A&A 37, 183): radii from the
// inverted cumulative mass, speeds by von Neumann rejection from q^2 (1 - q^2)^(7/2), isotropic
// directions; scale radius 3 pi / 16 (Henon units); moved to the centre-of-mass frame. Radii
// beyond `max_radius` (in Henon units) are drawn again (the usual truncation; 0: none).
Bodies plummer_sphere(long n, std::uint64_t seed, double max_radius = 0.0);
// A uniform sphere of radius `radius` at rest (cold collapse), n equal masses of total mass 1.
Bodies cold_sphere(long n, std::uint64_t seed, double radius = 1.0);
// The figure-eight orbit of three equal masses (Chenciner & Montgomery 2000, Ann. Math. 152,
// 881; initial conditions of Simo 2002), period 6.32591398 at G = 1.
Bodies figure_eight();
constexpr double kFigureEightPeriod = 6.32591398;
// Two bodies (masses 1 - mu and mu, G = 1) on a Kepler orbit of semi-major axis a and
// eccentricity e, starting at pericentre, centre of mass at rest at the origin.
Bodies kepler_pair(double e, double a = 1.0, double mu = 1e-3);
// The Sun and the eight planets at J2000 from the JPL mean orbital elements (E. M. Standish, JPL
// Solar System Dynamics, "Planetary Mean Orbits (J2000)": a, e, i, Omega, varpi, L; ecliptic
// and equinox of J2000) and the IAU (1976) Sun/planet mass ratios (Earth: the Earth-Moon
// system), in AU, solar masses and Julian years, G = kSolarSystemG; barycentric. With
// `belt` test particles of a Kuiper belt: a uniform in [35, 50] AU, e and i (radians) drawn from
// Rayleigh distributions of scale 0.05 and 0.035 (2 degrees), the angles uniform. `giants_only`:
// the Sun (with the terrestrial planets' masses added) and Jupiter to Neptune, the usual set-up of
// long Kuiper-belt integrations (Levison & Duncan 1993), whose steps Mercury would set.
Bodies solar_system(long belt = 0, std::uint64_t seed = 1, bool giants_only = false);
// G in AU^3 / (solar mass yr^2): (Gaussian constant k x 365.25)^2.
constexpr double kSolarSystemG = (0.01720209895 * 365.25) * (0.01720209895 * 365.25);
struct PlanetTable {
  const char* name;
  double mass_ratio;               // Sun / planet
  double a, e, i, node, varpi, L;  // AU, -, degrees
  double period_days;              // sidereal, from the table's centennial rate of L
};
extern const PlanetTable kPlanets[8];
// The sidereal periods of a solar_system run: each planet's heliocentric longitude in the ecliptic,
// sampled often (more than twice an orbit), unwrapped and fitted by least squares with a line;
// period = 2 pi / slope.
class LongitudePeriods {
 public:
  explicit LongitudePeriods(int planets)
      : last_(planets + 1),
        turns_(planets + 1),
        st_(planets + 1),
        sl_(planets + 1),
        stt_(planets + 1),
        stl_(planets + 1) {}
  void add(double t, const Bodies& b);  // body 0 is the Sun, 1.. the planets
  double period(int planet) const;      // in the run's time unit
 private:
  std::vector<double> last_, turns_, st_, sl_, stt_, stl_;
  long samples_ = 0;
};
// Osculating elements about a centre (G (M + m) = mu), angles in radians: semi-major axis,
// eccentricity, inclination, longitude of the ascending node, argument of pericentre, mean
// anomaly (bound orbits, inclined: the node is taken from z x h). Murray & Dermott 1999 sec. 2.8.
struct OrbitElements {
  double a = 0, e = 0, i = 0, node = 0, omega = 0, M = 0;
  double varpi() const { return node + omega; }       // longitude of pericentre
  double lambda() const { return node + omega + M; }  // mean longitude
};
OrbitElements state_to_elements(const BodyState& body, const BodyState& centre, double mu);
// The inverse: position and velocity relative to the centre from a, e, i, node, omega, M.
void elements_to_state(double mu, double a, double e, double i, double node, double omega, double M, double x[3],
                       double v[3]);
// `count` test particles (mass 0) appended after the massive bodies of `b`.
void append_test_particles(Bodies& b, long count);

}  // namespace swarmfit::nbody
