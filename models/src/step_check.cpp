#include "swarmfit/models/step_check.hpp"

#include <cmath>
#include <cstdio>
#include <limits>
#include <utility>

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
                  time_step,
                  halvings    ? (" (the default / " + std::to_string(1 << halvings) + ")").c_str()
                  : doublings ? (" (the default x " + std::to_string(1 << doublings) + ")").c_str()
                              : "",
                  transit_change, rv_change, passed() ? "ok" : "STEP TOO LARGE", kStepCheckTolerance);
  }
  return line;
}

namespace {

// The model of one parameter set integrated at one step (one system on one CPU thread: a team of
// threads would wait for one of them), at the data.
struct StepModel {
  double time_step = 0;
  int status = 0;
  ModelCurves curves;
  std::vector<double> transit_errors;  // of the problem's transit rows (the curves' order)
};

StepModel model_at(const Dataset& data, const PlanetaryModel& model, LikelihoodSettings settings,
                   const std::vector<double>& params) {
  settings.backend = "cpu";
  settings.threads = 1;
  settings.packer.reset();
  const LikelihoodProblem problem(data, model, settings, params);
  StepModel m;
  m.time_step = problem.time_step();
  if (data.rv.empty() && data.transits.empty()) return m;
  double lnl = 0;
  problem.evaluate(params.data(), 1, &lnl, &m.status, &m.curves);
  for (const TransitObservation& row : problem.transit_rows()) m.transit_errors.push_back(row.error);
  return m;
}

// The check of `coarse` against the same model at half its step.
StepCheck compare(const Dataset& data, const StepModel& coarse, const StepModel& fine, bool automatic) {
  StepCheck check;
  check.automatic = automatic;
  check.time_step = coarse.time_step;
  if (data.rv.empty() && data.transits.empty()) return check;
  check.status = coarse.status != 0 ? coarse.status : fine.status;
  if (check.status != 0) return check;
  check.done = true;
  for (std::size_t k = 0; k < coarse.transit_errors.size(); ++k) {
    const double ta = coarse.curves.transits[k], tb = fine.curves.transits[k];
    if (std::isnan(ta) && std::isnan(tb)) continue;  // missed at both steps
    const double change = std::abs(ta - tb) / coarse.transit_errors[k];
    check.transit_change =
        std::isfinite(change) ? std::max(check.transit_change, change) : std::numeric_limits<double>::infinity();
  }
  for (std::size_t k = 0; k < data.rv.size(); ++k) {
    const double change = std::abs(coarse.curves.rv[k] - fine.curves.rv[k]) / data.rv[k].error;
    check.rv_change =
        std::isfinite(change) ? std::max(check.rv_change, change) : std::numeric_limits<double>::infinity();
  }
  return check;
}

LikelihoodSettings at_step(LikelihoodSettings settings, double time_step) {
  settings.time_step = time_step;
  return settings;
}

}  // namespace

StepCheck check_time_step(const Dataset& data, const PlanetaryModel& model, LikelihoodSettings settings,
                          const std::vector<double>& params) {
  const StepModel coarse = model_at(data, model, settings, params);
  if (data.rv.empty() && data.transits.empty()) return compare(data, coarse, coarse, !(settings.time_step > 0));
  const StepModel fine = model_at(data, model, at_step(settings, 0.5 * coarse.time_step), params);
  return compare(data, coarse, fine, !(settings.time_step > 0));
}

StepCheck settle_time_step(const Dataset& data, const PlanetaryModel& model, LikelihoodSettings& settings,
                           const std::vector<double>& params, const std::string& integrator_origin) {
  const bool automatic = !(settings.time_step > 0);
  StepModel coarse = model_at(data, model, settings, params);
  if (data.rv.empty() && data.transits.empty()) return compare(data, coarse, coarse, automatic);
  StepModel fine = model_at(data, model, at_step(settings, 0.5 * coarse.time_step), params);
  StepCheck check = compare(data, coarse, fine, automatic);
  // An adaptive scheme's step is its own (time_step only caps it): halving the cap cannot help.
  const IntegratorInfo* info = find_integrator(settings.integrator);
  if (!automatic || (info && info->adaptive)) return check;
  if (check.passed()) {
    if (settings.step_choice != "largest" || !check.done) return check;
    // Wider while the model at the wider step stays within the tolerance of the model at its half
    // (the step from which it was doubled): the same test as the default's, at the wider step.
    for (int k = 1; k <= kMaxStepDoublings; ++k) {
      StepModel wider = model_at(data, model, at_step(settings, std::ldexp(coarse.time_step, 1)), params);
      StepCheck next = compare(data, wider, coarse, true);
      if (!next.passed() || !next.done) break;
      next.doublings = k;
      settings.time_step = wider.time_step;
      check = next;
      coarse = std::move(wider);
    }
    return check;
  }
  const double first = check.time_step;
  LikelihoodSettings probe = settings;
  probe.backend = "cpu";
  probe.packer.reset();
  const LikelihoodProblem problem(data, model, probe, params);
  const double duration = problem.end_time() - problem.reference_epoch();
  // Halved until it passes: each step integrated once (the finer model of one check is the coarser
  // of the next).
  for (int k = 1; k <= kMaxStepHalvings; ++k) {
    const double step = std::ldexp(first, -k);
    if (!(duration / (0.5 * step) <= kMaxRefinedSteps))  // (the finer model of this halving)
      throw InputError(integrator_origin + ": key 'integrator': " + settings.integrator + " at " +
                       std::to_string(check.time_step) + " d still changes the model at half the step by " +
                       std::to_string(check.worst()) + " data errors, and a finer step's model takes more than " +
                       "1e7 steps: set time_step explicitly or choose another integrator");
    coarse = std::move(fine);
    fine = model_at(data, model, at_step(settings, 0.5 * step), params);
    StepCheck next = compare(data, coarse, fine, true);
    next.halvings = k;
    if (next.passed()) {
      settings.time_step = step;
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
