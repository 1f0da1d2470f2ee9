#include "swarmfit/models/planetary_model.hpp"

#include <cmath>

#include "swarmfit/models/elements.hpp"
#include "swarmfit/models/units.hpp"

namespace swarmfit {

using namespace units;

PlanetaryModel::PlanetaryModel(std::vector<std::string> planets, std::vector<std::string> instruments,
                               ModelOptions options)
    : planets_(std::move(planets)), instruments_(std::move(instruments)), options_(options) {
  parameters_.push_back({"star_mass", "Msun", "mass of the star"});
  for (const std::string& p : planets_) {
    parameters_.push_back({"period_" + p, "day", "osculating period at the reference epoch"});
    if (options_.mass_from_semi_amplitude) {
      parameters_.push_back({"K_" + p, "m/s", "RV semi-amplitude (sets the mass)"});
    } else {
      parameters_.push_back({"mass_" + p, "Earth mass", "planet mass"});
    }
    if (options_.plain_eccentricity_vector) {
      parameters_.push_back({"ecosw_" + p, "", "e cos(omega)"});
      parameters_.push_back({"esinw_" + p, "", "e sin(omega)"});
    } else {
      parameters_.push_back({"secosw_" + p, "", "sqrt(e) cos(omega)"});
      parameters_.push_back({"sesinw_" + p, "", "sqrt(e) sin(omega)"});
    }
    if (options_.phase_from_mean_anomaly) {
      parameters_.push_back({"mean_anomaly_" + p, "deg", "mean anomaly at the reference epoch"});
    } else {
      parameters_.push_back({"tc_" + p, "BJD_TDB", "time of conjunction of the osculating orbit"});
    }
    parameters_.push_back({"inc_" + p, "deg", "inclination to the sky plane normal (90 = edge-on)"});
    parameters_.push_back({"node_" + p, "deg", "longitude of the ascending node in the sky plane"});
  }
  for (const std::string& j : instruments_) {
    parameters_.push_back({"offset_" + j, "m/s", "RV zero point of the instrument"});
    parameters_.push_back({"jitter_" + j, "m/s", "extra RV noise added in quadrature"});
  }
}

int PlanetaryModel::index(const std::string& name) const {
  for (std::size_t k = 0; k < parameters_.size(); ++k)
    if (parameters_[k].name == name) return static_cast<int>(k);
  return -1;
}

double semi_amplitude(double m, double interior, double period, double e, double inc) {
  const double k_au_per_day = std::cbrt(2.0 * kPi * kG / period) * m * std::sin(inc) /
                              (std::pow(interior + m, 2.0 / 3.0) * std::sqrt(1 - e * e));
  return k_au_per_day / kMetresPerSecond;
}

double mass_from_semi_amplitude(double K, double interior, double period, double e, double inc) {
  const double scale =
      K * kMetresPerSecond * std::sqrt(1 - e * e) / (std::cbrt(2.0 * kPi * kG / period) * std::sin(inc));
  double m = scale * std::pow(interior, 2.0 / 3.0);
  for (int k = 0; k < 100; ++k) {
    const double next = scale * std::pow(interior + m, 2.0 / 3.0);
    if (std::fabs(next - m) <= 1e-16 * next) return next;
    m = next;
  }
  return m;
}

bool PlanetaryModel::planet_states(const double* params, std::vector<PlanetState>& out, std::string* reason) const {
  auto fail = [&](const std::string& why) {
    if (reason) *reason = why;
    return false;
  };
  for (int k = 0; k < num_parameters(); ++k)
    if (!std::isfinite(params[k])) return fail(parameters_[k].name + " is not finite");
  const double star = params[0];
  if (!(star > 0)) return fail("star_mass must be > 0");
  out.assign(planets_.size(), PlanetState{});
  double interior = star;
  for (int p = 0; p < num_planets(); ++p) {
    const std::string& name = planets_[p];
    const double period = params[planet_parameter(p, 0)];
    // (x, y) = sqrt(e) (cos w, sin w), e = x^2 + y^2 (the default); or e (cos w, sin w).
    const double x = params[planet_parameter(p, 2)], y = params[planet_parameter(p, 3)];
    const double inc = params[planet_parameter(p, 5)] * kDegree;
    PlanetState& s = out[p];
    s.e = options_.plain_eccentricity_vector ? std::hypot(x, y) : x * x + y * y;
    s.omega = (s.e > 0) ? std::atan2(y, x) : 0.0;
    s.inc = inc;
    s.node = params[planet_parameter(p, 6)] * kDegree;
    if (!(period > 0)) return fail("period_" + name + " must be > 0");
    if (!(s.e < 1))
      return fail("e of " + name +
                  (options_.plain_eccentricity_vector ? " = |(ecosw, esinw)|" : " = secosw^2 + sesinw^2") +
                  " must be < 1");
    const double central = options_.frame == ElementFrame::kJacobi ? interior : star;
    const double amount = params[planet_parameter(p, 1)];
    if (options_.mass_from_semi_amplitude) {
      if (!(amount > 0)) return fail("K_" + name + " must be > 0");
      if (!(std::fabs(std::sin(inc)) > 1e-12)) return fail("inc_" + name + ": K needs a non-zero sin(inc)");
      s.mass = mass_from_semi_amplitude(amount, central, period, s.e, inc);
    } else {
      if (!(amount > 0)) return fail("mass_" + name + " must be > 0");
      s.mass = amount * kEarthMass;
    }
    const double mu = kG * (central + s.mass);
    s.a = std::cbrt(mu * period * period / (4.0 * kPi * kPi));
    const double phase = params[planet_parameter(p, 4)];
    if (options_.phase_from_mean_anomaly) {
      s.mean_anomaly = phase * kDegree;
    } else {
      // Conjunction (planet in front) at true anomaly f = pi/2 - omega; advance the mean
      // anomaly from there to the reference epoch.
      const double mean_at_conjunction = true_to_mean_anomaly(0.5 * kPi - s.omega, s.e);
      s.mean_anomaly = mean_at_conjunction + 2.0 * kPi * (options_.reference_epoch - phase) / period;
      s.mean_anomaly = std::remainder(s.mean_anomaly, 2.0 * kPi);
    }
    interior += s.mass;
  }
  for (int j = 0; j < static_cast<int>(instruments_.size()); ++j)
    if (params[jitter_parameter(j)] < 0) return fail("jitter_" + instruments_[j] + " must be >= 0");
  return true;
}

bool PlanetaryModel::initial_state(const double* params, double (*pos)[3], double (*vel)[3], double* mass,
                                   std::string* reason) const {
  std::vector<PlanetState> states;
  if (!planet_states(params, states, reason)) return false;
  const int n = num_bodies();
  mass[0] = params[0];
  for (int d = 0; d < 3; ++d) pos[0][d] = vel[0][d] = 0.0;
  // Build positions relative to the star (astrocentric) or to the interior centre of mass
  // (Jacobi), in a frame where the star starts at the origin; then move to the barycentre.
  double com_x[3] = {0, 0, 0}, com_v[3] = {0, 0, 0};  // centre of mass of bodies 0..p-1
  double interior = mass[0];
  for (int p = 0; p < n - 1; ++p) {
    const PlanetState& s = states[p];
    const double central = options_.frame == ElementFrame::kJacobi ? interior : mass[0];
    Elements el;
    el.a = s.a;
    el.e = s.e;
    el.inc = s.inc;
    el.node = s.node;
    el.omega = s.omega;
    el.mean_anomaly = s.mean_anomaly;
    double x[3], v[3];
    elements_to_cartesian(el, kG * (central + s.mass), x, v);
    const int i = p + 1;
    mass[i] = s.mass;
    for (int d = 0; d < 3; ++d) {
      const double ox = options_.frame == ElementFrame::kJacobi ? com_x[d] : pos[0][d];
      const double ov = options_.frame == ElementFrame::kJacobi ? com_v[d] : vel[0][d];
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
  return true;
}

}  // namespace swarmfit
