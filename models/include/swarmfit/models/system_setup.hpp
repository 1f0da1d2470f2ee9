// Parameters -> barycentric initial conditions of one planetary system, host and device: the host
// sets up CPU batches (PlanetaryModel::initial_state), the GPU its own batches (cuda_setup.hpp),
// from this one source. Parameter layout and conventions: planetary_model.hpp and the README.
#pragma once

#include <cmath>

#include "swarmfit/integrators/portability.hpp"
#include "swarmfit/models/elements.hpp"
#include "swarmfit/models/units.hpp"

namespace swarmfit {

// Physical state of one planet derived from the parameters (for summaries and conversions).
struct PlanetState {
  double mass = 0.0;  // Msun
  double a = 0.0;     // AU (in the chosen frame)
  double e = 0.0;
  double omega = 0.0;         // radians
  double mean_anomaly = 0.0;  // radians, at the reference epoch
  double inc = 0.0, node = 0.0;
};

// What setting up a system needs to know of a model, as plain values (passed into kernels).
struct ModelShape {
  int num_planets = 0;
  int num_instruments = 0;
  bool jacobi = true;                      // Jacobi elements (else astrocentric)
  bool mass_from_semi_amplitude = false;   // K_p instead of mass_p
  bool phase_from_mean_anomaly = false;    // mean_anomaly_p instead of tc_p
  bool plain_eccentricity_vector = false;  // e cos w, e sin w instead of sqrt(e) cos w, sqrt(e) sin w
  double reference_epoch = 0.0;            // BJD_TDB
  SWARMFIT_HD int num_parameters() const { return 1 + 7 * num_planets + 2 * num_instruments; }
  SWARMFIT_HD int planet_parameter(int planet, int k) const { return 1 + 7 * planet + k; }
  SWARMFIT_HD int offset_parameter(int instrument) const { return 1 + 7 * num_planets + 2 * instrument; }
  SWARMFIT_HD int jitter_parameter(int instrument) const { return offset_parameter(instrument) + 1; }
};

// Why a parameter set has no bound system; `which` is the parameter (kSetupNotFinite), the planet
// or the instrument (kSetupJitter) concerned.
enum SetupFailure : int {
  kSetupOk = 0,
  kSetupNotFinite,
  kSetupStarMass,
  kSetupPeriod,
  kSetupEccentricity,
  kSetupSemiAmplitude,
  kSetupSinInc,
  kSetupMass,
  kSetupJitter
};
struct SetupCheck {
  int failure = kSetupOk;
  int which = -1;
};

// The planet mass with RV semi-amplitude K (m/s) on period P (days) around an interior mass M
// (Msun), eccentricity e, inclination inc (radians): K = (2 pi G / P)^(1/3) m sin i /
// ((M + m)^(2/3) sqrt(1 - e^2)) solved for m by fixed-point iteration, converged to round-off.
SWARMFIT_HD double mass_from_semi_amplitude(double K, double interior, double period, double e, double inc) {
  const double scale =
      K * units::kMetresPerSecond * sqrt(1 - e * e) / (cbrt(2.0 * units::kPi * units::kG / period) * sin(inc));
  double m = scale * pow(interior, 2.0 / 3.0);
  for (int k = 0; k < 100; ++k) {
    const double next = scale * pow(interior + m, 2.0 / 3.0);
    if (fabs(next - m) <= 1e-16 * next) return next;
    m = next;
  }
  return m;
}

// The planets' osculating elements and masses from the parameters (out: num_planets states).
SWARMFIT_HD SetupCheck planet_states_of(const ModelShape& shape, const double* params, PlanetState* out) {
  SetupCheck check;
  auto fail = [&](int why, int which) {
    check.failure = why;
    check.which = which;
    return check;
  };
  for (int k = 0; k < shape.num_parameters(); ++k)
    if (!(params[k] - params[k] == 0.0)) return fail(kSetupNotFinite, k);  // NaN or infinite
  const double star = params[0];
  if (!(star > 0)) return fail(kSetupStarMass, 0);
  double interior = star;
  for (int p = 0; p < shape.num_planets; ++p) {
    const double period = params[shape.planet_parameter(p, 0)];
    // (x, y) = sqrt(e) (cos w, sin w), e = x^2 + y^2 (the default); or e (cos w, sin w).
    const double x = params[shape.planet_parameter(p, 2)], y = params[shape.planet_parameter(p, 3)];
    const double inc = params[shape.planet_parameter(p, 5)] * units::kDegree;
    PlanetState s;
    s.e = shape.plain_eccentricity_vector ? hypot(x, y) : x * x + y * y;
    s.omega = (s.e > 0) ? atan2(y, x) : 0.0;
    s.inc = inc;
    s.node = params[shape.planet_parameter(p, 6)] * units::kDegree;
    if (!(period > 0)) return fail(kSetupPeriod, p);
    if (!(s.e < 1)) return fail(kSetupEccentricity, p);
    const double central = shape.jacobi ? interior : star;
    const double amount = params[shape.planet_parameter(p, 1)];
    if (shape.mass_from_semi_amplitude) {
      if (!(amount > 0)) return fail(kSetupSemiAmplitude, p);
      if (!(fabs(sin(inc)) > 1e-12)) return fail(kSetupSinInc, p);
      s.mass = mass_from_semi_amplitude(amount, central, period, s.e, inc);
    } else {
      if (!(amount > 0)) return fail(kSetupMass, p);
      s.mass = amount * units::kEarthMass;
    }
    const double mu = units::kG * (central + s.mass);
    s.a = cbrt(mu * period * period / (4.0 * units::kPi * units::kPi));
    const double phase = params[shape.planet_parameter(p, 4)];
    if (shape.phase_from_mean_anomaly) {
      s.mean_anomaly = phase * units::kDegree;
    } else {
      // Conjunction (planet in front) at true anomaly f = pi/2 - omega; advance the mean
      // anomaly from there to the reference epoch.
      const double mean_at_conjunction = true_to_mean_anomaly(0.5 * units::kPi - s.omega, s.e);
      s.mean_anomaly = mean_at_conjunction + 2.0 * units::kPi * (shape.reference_epoch - phase) / period;
      s.mean_anomaly = remainder(s.mean_anomaly, 2.0 * units::kPi);
    }
    out[p] = s;
    interior += s.mass;
  }
  for (int j = 0; j < shape.num_instruments; ++j)
    if (params[shape.jitter_parameter(j)] < 0) return fail(kSetupJitter, j);
  return check;
}

// Barycentric positions, velocities and masses of the star and planets (num_planets + 1 bodies)
// from the planets' states: positions relative to the star (astrocentric) or to the interior
// centre of mass (Jacobi), in a frame where the star starts at the origin, then moved to the
// barycentre.
SWARMFIT_HD void system_state_of(const ModelShape& shape, double star_mass, const PlanetState* states, double (*pos)[3],
                                 double (*vel)[3], double* mass) {
  const int n = shape.num_planets + 1;
  mass[0] = star_mass;
  for (int d = 0; d < 3; ++d) pos[0][d] = vel[0][d] = 0.0;
  double com_x[3] = {0, 0, 0}, com_v[3] = {0, 0, 0};  // centre of mass of bodies 0..p-1
  double interior = mass[0];
  for (int p = 0; p < n - 1; ++p) {
    const PlanetState& s = states[p];
    const double central = shape.jacobi ? interior : mass[0];
    Elements el;
    el.a = s.a;
    el.e = s.e;
    el.inc = s.inc;
    el.node = s.node;
    el.omega = s.omega;
    el.mean_anomaly = s.mean_anomaly;
    double x[3], v[3];
    elements_to_cartesian(el, units::kG * (central + s.mass), x, v);
    const int i = p + 1;
    mass[i] = s.mass;
    for (int d = 0; d < 3; ++d) {
      const double ox = shape.jacobi ? com_x[d] : pos[0][d];
      const double ov = shape.jacobi ? com_v[d] : vel[0][d];
      pos[i][d] = ox + x[d];
      vel[i][d] = ov + v[d];
      com_x[d] = (interior * com_x[d] + s.mass * pos[i][d]) / (interior + s.mass);
      com_v[d] = (interior * com_v[d] + s.mass * vel[i][d]) / (interior + s.mass);
    }
    interior += s.mass;
  }
  // com_x, com_v now hold the centre of mass of the whole system.
  for (int i = 0; i < n; ++i)
    for (int d = 0; d < 3; ++d) {
      pos[i][d] -= com_x[d];
      vel[i][d] -= com_v[d];
    }
}

// A harmless stand-in for a system that cannot be set up (never integrated: its status says
// why), so that SIMD lanes and GPU threads compute on finite numbers.
SWARMFIT_HD void stand_in_state(int num_bodies, double (*pos)[3], double (*vel)[3], double* mass) {
  for (int i = 0; i < num_bodies; ++i) {
    mass[i] = i == 0 ? 1.0 : 1e-9;
    for (int d = 0; d < 3; ++d) pos[i][d] = vel[i][d] = 0.0;
    pos[i][0] = i;
    vel[i][1] = i == 0 ? 0.0 : units::kGaussK / sqrt(double(i));
  }
}

}  // namespace swarmfit
