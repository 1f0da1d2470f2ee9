// Chaos indicators of whole ensembles (chaos_observer.hpp says what is computed and how): the state
// a chaos run carries between calls, the integration on either backend, and each system's
// indicators. A run can be cut into calls of any length (each resumes the sums and the tangent),
// which is how long stability integrations are checkpointed.
#pragma once

#include <string>
#include <vector>

#include "swarmfit/integrators/backend.hpp"
#include "swarmfit/models/chaos_observer.hpp"

namespace swarmfit {

struct ChaosIndicators {
  double megno = 0.0;          // <Y> (0 before the first step)
  double megno_slope = 0.0;    // least-squares slope of <Y>(t): REBOUND's sim.lyapunov(), ~ lambda / 2
  double lyapunov = 0.0;       // finite-time exponent ln(|delta(t)| / |delta(t0)|) / (t - t0), per time unit
  double closest_hill = 0.0;   // the smallest planet-planet distance in mutual Hill radii (inf: one planet)
  std::vector<double> max_e;   // per planet (index 0: planet 1)
  std::vector<double> max_da;  // max |a - a0| / a0 per planet
  long steps = 0;              // steps in the sums
};

class ChaosState {
 public:
  // Starts the indicators of every system of `e` at its current time, each with the tangent
  // `direction` (6 n values per system, body by body: dx dy dz dvx dvy dvz; normalised here), or
  // default_tangent() when empty. At most kMaxChaosBodies bodies.
  explicit ChaosState(const Ensemble& e, const std::vector<double>& direction = {});
  long num_systems() const { return num_systems_; }
  int num_bodies() const { return num_bodies_; }
  long stride() const { return stride_; }
  double* fields() { return fields_.data(); }
  const std::vector<double>& data() const { return fields_; }
  std::vector<double>& data() { return fields_; }
  double field(int f, long system) const { return fields_[static_cast<std::size_t>(f) * stride_ + system]; }
  ChaosIndicators indicators(long system) const;
  // The current tangent of a system (6 n values, inertial frame).
  std::vector<double> tangent(long system) const;

 private:
  long num_systems_;
  int num_bodies_;
  long stride_;
  std::vector<double> fields_;
};

// The same direction for every system (so that copies of a system give the same indicators): a
// fixed spread over all components, unit norm.
std::vector<double> default_tangent(int num_bodies);

// Every system to request.destination_time with its tangent and indicators. Schemes: any of the list.
void integrate_chaos(Ensemble& ensemble, ChaosState& state, const RunRequest& request, const std::string& backend);
void integrate_chaos_cpu(Ensemble& ensemble, ChaosState& state, const RunRequest& request);
void integrate_chaos_cuda(Ensemble& ensemble, ChaosState& state, const RunRequest& request);

}  // namespace swarmfit
