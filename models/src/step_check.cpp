#include "swarmfit/models/step_check.hpp"

#include <cmath>
#include <cstdio>
#include <limits>

#include "swarmfit/integrators/registry.hpp"
#include "swarmfit/models/status.hpp"
#include "swarmfit/observations/input_error.hpp"

namespace swarmfit {

std::string StepCheck::describe() const {
  char line[320];
  if (!done) {
    std::snprintf(line, sizeof line, "step %.6g d: not checked (%s)", time_step,
                  status ? model_status_name(status) : "no data");
  } else {
    std::snprintf(line, sizeof line,
                  "step %.6g d%s: at half the step, transit times change by %.3g sigma, RVs by %.3g sigma at most "
                  "(%s: tolerance %.2g sigma)",
                  time_step, halvings ? (" (the default / " + std::to_string(1 << halvings) + ")").c_str() : "",
                  transit_change, rv_change, passed() ? "ok" : "STEP TOO LARGE", kStepCheckTolerance);
  }
  return line;
}

StepCheck check_time_step(const Dataset& data, const PlanetaryModel& model, LikelihoodSettings settings,
                          const std::vector<double>& params) {
  StepCheck check;
  check.automatic = !(settings.time_step > 0);
  settings.backend = "cpu";
  settings.packer.reset();
  const LikelihoodProblem coarse(data, model, settings, params);
  check.time_step = coarse.time_step();
  if (data.rv.empty() && data.transits.empty()) return check;
  settings.time_step = 0.5 * coarse.time_step();
  const LikelihoodProblem fine(data, model, settings, params);
  double lnl[2];
  int status[2];
  ModelCurves a, b;
  coarse.evaluate(params.data(), 1, &lnl[0], &status[0], &a);
  fine.evaluate(params.data(), 1, &lnl[1], &status[1], &b);
  check.status = status[0] != 0 ? status[0] : status[1];
  if (check.status != 0) return check;
  check.done = true;
  const auto& rows = coarse.transit_rows();
  for (std::size_t k = 0; k < rows.size(); ++k) {
    const double ta = a.transits[k], tb = b.transits[k];
    if (std::isnan(ta) && std::isnan(tb)) continue;  // missed at both steps
    const double change = std::abs(ta - tb) / rows[k].error;
    check.transit_change =
        std::isfinite(change) ? std::max(check.transit_change, change) : std::numeric_limits<double>::infinity();
  }
  for (std::size_t k = 0; k < data.rv.size(); ++k) {
    const double change = std::abs(a.rv[k] - b.rv[k]) / data.rv[k].error;
    check.rv_change =
        std::isfinite(change) ? std::max(check.rv_change, change) : std::numeric_limits<double>::infinity();
  }
  return check;
}

StepCheck settle_time_step(const Dataset& data, const PlanetaryModel& model, LikelihoodSettings& settings,
                           const std::vector<double>& params, const std::string& integrator_origin) {
  StepCheck check = check_time_step(data, model, settings, params);
  // An adaptive scheme's step is its own (time_step only caps it): halving the cap cannot help.
  const IntegratorInfo* info = find_integrator(settings.integrator);
  if (!check.automatic || check.passed() || (info && info->adaptive)) return check;
  const double first = check.time_step;
  LikelihoodSettings probe = settings;
  probe.backend = "cpu";
  probe.packer.reset();
  const LikelihoodProblem problem(data, model, probe, params);
  const double duration = problem.end_time() - problem.reference_epoch();
  for (int k = 1; k <= kMaxStepHalvings; ++k) {
    LikelihoodSettings finer = settings;
    finer.time_step = std::ldexp(first, -k);
    if (!(duration / finer.time_step <= kMaxModelSteps))
      throw InputError(integrator_origin + ": key 'integrator': " + settings.integrator + " at " +
                       std::to_string(check.time_step) + " d still changes the model at half the step by " +
                       std::to_string(check.worst()) + " data errors, and a finer step takes more than 1e8 steps: " +
                       "set time_step explicitly or choose another integrator");
    StepCheck next = check_time_step(data, model, finer, params);
    next.automatic = true;
    next.halvings = k;
    if (next.passed()) {
      settings.time_step = finer.time_step;
      return next;
    }
    check = next;
  }
  throw InputError(integrator_origin + ": key 'integrator': " + settings.integrator + " at its default step / " +
                   std::to_string(1 << kMaxStepHalvings) + " (" + std::to_string(check.time_step) +
                   " d) still changes the model at half the step by " + std::to_string(check.worst()) +
                   " data errors: set time_step explicitly or choose another integrator");
}

}  // namespace swarmfit
