// A planetary-system model: named parameters -> barycentric Cartesian initial conditions
// (AU, day, Msun; G = k^2) at the reference epoch.
// Parameters, in this order (units in the README):
//   star_mass                                  Msun
//   per planet p (star outwards):  period_p (days), mass_p (Earth masses) or K_p (m/s),
//     secosw_p, sesinw_p (sqrt(e) cos w, sqrt(e) sin w; or ecosw_p, esinw_p = e cos w, e sin w),
//     tc_p (BJD_TDB, a time of conjunction)
//     or mean_anomaly_p (deg, at the reference epoch), inc_p (deg), node_p (deg)
//   per RV instrument j:  offset_j (m/s), jitter_j (m/s)
// Elements are osculating at the reference epoch, Jacobi by default (planet p orbits the star and
// the planets inside it, mu = G (m0 + ... + m_p)), or astrocentric (mu = G (m0 + m_p)).
#pragma once

#include <string>
#include <vector>

#include "swarmfit/models/system_setup.hpp"

namespace swarmfit {

enum class ElementFrame { kJacobi, kAstrocentric };

struct ModelOptions {
  ElementFrame frame = ElementFrame::kJacobi;
  bool mass_from_semi_amplitude = false;   // K_p instead of mass_p
  bool phase_from_mean_anomaly = false;    // mean_anomaly_p instead of tc_p
  bool plain_eccentricity_vector = false;  // ecosw_p, esinw_p (e cos w, e sin w) instead of secosw_p, sesinw_p
  double reference_epoch = 0.0;            // BJD_TDB
};

struct ParameterInfo {
  std::string name;
  std::string unit;
  std::string meaning;
};

class PlanetaryModel {
 public:
  PlanetaryModel(std::vector<std::string> planets, std::vector<std::string> instruments, ModelOptions options);

  const std::vector<ParameterInfo>& parameters() const { return parameters_; }
  int num_parameters() const { return static_cast<int>(parameters_.size()); }
  int index(const std::string& name) const;  // -1 when there is no such parameter
  const std::vector<std::string>& planets() const { return planets_; }
  const std::vector<std::string>& instruments() const { return instruments_; }
  const ModelOptions& options() const { return options_; }
  int num_bodies() const { return static_cast<int>(planets_.size()) + 1; }

  // Parameter index of a planet's quantity (0 period, 1 mass or K, 2 secosw or ecosw, 3 sesinw or esinw,
  // 4 tc or mean anomaly, 5 inc, 6 node) and of an instrument's offset and jitter.
  int planet_parameter(int planet, int quantity) const { return 1 + 7 * planet + quantity; }
  int offset_parameter(int instrument) const { return 1 + 7 * num_planets() + 2 * instrument; }
  int jitter_parameter(int instrument) const { return offset_parameter(instrument) + 1; }
  int num_planets() const { return static_cast<int>(planets_.size()); }
  // The model as plain values, for system_setup.hpp (host and device).
  ModelShape shape() const;

  // Barycentric positions, velocities and masses of the star and planets (arrays of
  // num_bodies()). Returns false, leaving a reason, for parameters without a bound orbit
  // (e >= 1, mass <= 0, period <= 0, non-finite values, jitter < 0).
  bool initial_state(const double* params, double (*pos)[3], double (*vel)[3], double* mass,
                     std::string* reason = nullptr) const;
  bool planet_states(const double* params, std::vector<PlanetState>& out, std::string* reason = nullptr) const;
  // The same into num_planets() states at out (no allocation: batches set up 1e5 systems on
  // many threads at once, where a heap allocation per system would serialise them).
  bool planet_states(const double* params, PlanetState* out, std::string* reason = nullptr) const;

 private:
  std::vector<std::string> planets_;
  std::vector<std::string> instruments_;
  ModelOptions options_;
  std::vector<ParameterInfo> parameters_;
};

// Systems [0, n) of `ensemble` (of model.num_bodies() bodies) set up from the parameter sets (rows
// of `params`) at time 0, in parallel on `threads` (0: all); a set without a bound orbit gets a
// harmless stand-in state (SIMD lanes stay finite), status kStatusInvalidParameters (status.hpp)
// and invalid[s] = 1. Systems are independent: the result does not depend on the thread count.
class Ensemble;
void set_up_systems(const PlanetaryModel& model, const double* params, long n, Ensemble& ensemble,
                    std::vector<int>& invalid, int threads);

// Semi-amplitude (m/s) of the star's RV for a planet of mass m (Msun) on period P (days)
// around an interior mass M (Msun) with eccentricity e and inclination inc (radians).
double semi_amplitude(double planet_mass, double interior_mass, double period, double e, double inc);
// Its inverse for the planet mass: mass_from_semi_amplitude (system_setup.hpp).

}  // namespace swarmfit
