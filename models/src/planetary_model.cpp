#include "swarmfit/models/planetary_model.hpp"

#include <omp.h>

#include <cmath>

#include "swarmfit/integrators/ensemble.hpp"
#include "swarmfit/models/elements.hpp"
#include "swarmfit/models/status.hpp"
#include "swarmfit/models/system_setup.hpp"
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

ModelShape PlanetaryModel::shape() const {
  ModelShape m;
  m.num_planets = num_planets();
  m.num_instruments = static_cast<int>(instruments_.size());
  m.jacobi = options_.frame == ElementFrame::kJacobi;
  m.mass_from_semi_amplitude = options_.mass_from_semi_amplitude;
  m.phase_from_mean_anomaly = options_.phase_from_mean_anomaly;
  m.plain_eccentricity_vector = options_.plain_eccentricity_vector;
  m.reference_epoch = options_.reference_epoch;
  return m;
}

bool PlanetaryModel::planet_states(const double* params, std::vector<PlanetState>& out, std::string* reason) const {
  out.assign(planets_.size(), PlanetState{});
  return planet_states(params, out.data(), reason);
}

bool PlanetaryModel::planet_states(const double* params, PlanetState* out, std::string* reason) const {
  const SetupCheck check = planet_states_of(shape(), params, out);
  if (check.failure == kSetupOk) return true;
  if (!reason) return false;
  const int w = check.which;
  switch (check.failure) {
    case kSetupNotFinite: *reason = parameters_[w].name + " is not finite"; break;
    case kSetupStarMass: *reason = "star_mass must be > 0"; break;
    case kSetupPeriod: *reason = "period_" + planets_[w] + " must be > 0"; break;
    case kSetupEccentricity:
      *reason = "e of " + planets_[w] +
                (options_.plain_eccentricity_vector ? " = |(ecosw, esinw)|" : " = secosw^2 + sesinw^2") +
                " must be < 1";
      break;
    case kSetupSemiAmplitude: *reason = "K_" + planets_[w] + " must be > 0"; break;
    case kSetupSinInc: *reason = "inc_" + planets_[w] + ": K needs a non-zero sin(inc)"; break;
    case kSetupMass: *reason = "mass_" + planets_[w] + " must be > 0"; break;
    case kSetupJitter: *reason = "jitter_" + instruments_[w] + " must be >= 0"; break;
    default: *reason = "invalid parameters"; break;
  }
  return false;
}

bool PlanetaryModel::initial_state(const double* params, double (*pos)[3], double (*vel)[3], double* mass,
                                   std::string* reason) const {
  const int n = num_bodies();
  constexpr int kOnStack = 16;
  PlanetState on_stack[kOnStack];
  std::vector<PlanetState> on_heap(n - 1 > kOnStack ? n - 1 : 0);
  PlanetState* states = n - 1 > kOnStack ? on_heap.data() : on_stack;
  if (!planet_states(params, states, reason)) return false;
  system_state_of(shape(), params[0], states, pos, vel, mass);
  return true;
}

void set_up_systems(const PlanetaryModel& model, const double* params, long n, Ensemble& ensemble,
                    std::vector<int>& invalid, int threads) {
  const int nb = model.num_bodies(), np = model.num_parameters();
  invalid.assign(n, 0);
#pragma omp parallel for schedule(static) num_threads(threads > 0 ? threads : omp_get_max_threads())
  for (long s = 0; s < n; ++s) {
    double mass[kMaxBodies];
    double pos[kMaxBodies][3], vel[kMaxBodies][3];
    if (!model.initial_state(params + s * np, pos, vel, mass)) {
      invalid[s] = 1;
      stand_in_state(nb, pos, vel, mass);
    }
    for (int i = 0; i < nb; ++i) {
      ensemble.mass(s, i) = mass[i];
      ensemble.radius(s, i) = 0.0;
      for (int d = 0; d < 3; ++d) {
        ensemble.position(s, i, d) = pos[i][d];
        ensemble.velocity(s, i, d) = vel[i][d];
      }
    }
    ensemble.set_time(s, 0.0);
    ensemble.set_time_step(s, 0.0);
    ensemble.set_steps(s, 0.0);
    ensemble.set_status(s, invalid[s] ? kStatusInvalidParameters : kStatusOk);
  }
}

}  // namespace swarmfit
