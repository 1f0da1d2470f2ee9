// The integration-error check: an error the likelihood cannot see. The same model is integrated
// at the step in use and at half of it; the largest change of a model transit time and of a model
// RV at the data, in units of each datum's error, measures the integration error where it matters
// (step doubling, Richardson 1911; as REBOUND users compare runs at two steps). A change below
// kStepCheckTolerance of the errors passes; a larger one means the step is too large for the data.
#pragma once

#include <string>
#include <vector>

#include "swarmfit/models/likelihood.hpp"

namespace swarmfit {

constexpr double kStepCheckTolerance = 0.1;  // of the data's errors
// Steps of one model integration (one parameter set over the data's span) past which a
// configuration is refused: no fit or prediction needs more (the longest published RV series at
// the shortest periods take ~1e6).
constexpr double kMaxModelSteps = 1e8;
constexpr int kMaxStepHalvings = 10;  // a default step is refined at most 2^10 times
// and no further than where the model at half the step would take more than this many steps: ten
// times what the longest published RV series at the shortest periods need. A default step that
// still fails there belongs to a model that does not settle as the step shrinks (one chaotic at the
// configuration's values), and each halving costs as much as all before it: the last ones were
// nearly all of a catalog's set-up, spent on a target refused anyway.
constexpr double kMaxRefinedSteps = 1e7;
// step_choice = largest: a default step is widened at most 2^2 times (the Kepler-splitting
// schemes' P / 20 to P / 5: past that a step no longer resolves the shortest orbit, and the check
// at one parameter set would be all that stands between the fit and a wrong map).
constexpr int kMaxStepDoublings = 2;

struct StepCheck {
  bool done = false;          // false: no data, or the model could not be integrated (status)
  double time_step = 0;       // days, the step checked
  double transit_change = 0;  // max |t(h) - t(h/2)| / sigma over the transit rows
  double rv_change = 0;       // max |RV(h) - RV(h/2)| / sigma over the RV points
  int status = 0;             // the model's status at the step (model_status_name), when not done
  int halvings = 0;           // times the scheme's default step was halved to pass
  int doublings = 0;          // step_choice = largest: times it was doubled, every doubled step passing
  bool automatic = true;      // the step was chosen here (key time_step = 0)
  double worst() const { return transit_change > rv_change ? transit_change : rv_change; }
  bool passed() const { return !done || worst() <= kStepCheckTolerance; }
  // One line: "step 0.49 d: at half the step transit times change by <= 0.0012 sigma, RVs by ..."
  std::string describe() const;
};

// The check of one parameter set (num_parameters() values) at settings.time_step (0: the scheme's
// default), on the cpu backend whatever the settings say (one system).
StepCheck check_time_step(const Dataset& data, const PlanetaryModel& model, LikelihoodSettings settings,
                          const std::vector<double>& params);

// With settings.time_step = 0: the scheme's default step, halved until the check passes (at most
// kMaxStepHalvings times; InputError naming the integrator's origin, FILE:LINE, past that); with
// settings.step_choice = "largest" a default step that passes is doubled while the check at the
// doubled step passes (at most kMaxStepDoublings times; not for adaptive schemes). With a step
// given: that step, checked (the caller reports a failed check). Either way settings.time_step is
// left as the step to use (0 where the default passed as it is, so that runs stay bitwise those of
// before).
StepCheck settle_time_step(const Dataset& data, const PlanetaryModel& model, LikelihoodSettings& settings,
                           const std::vector<double>& params, const std::string& integrator_origin);

}  // namespace swarmfit
