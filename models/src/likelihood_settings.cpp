// The likelihood settings' defaults that need the units and the monitors (likelihood.hpp), in a
// file of their own: a ModelConfig can then be built without the likelihood's integration code
// (tests/fuzz/fuzz_params links only the model's parameterisation).
#include "swarmfit/models/likelihood.hpp"
#include "swarmfit/models/units.hpp"

namespace swarmfit {

double LikelihoodSettings::units_solar_radius() { return units::kSolarRadius; }

MonitorParams LikelihoodSettings::default_monitors() {
  MonitorParams m;
  m.rmax = 100.0;  // AU
  m.stop_on_unbound = true;
  m.close_approach = 1.0;  // mutual Hill radii
  return m;
}

}  // namespace swarmfit
