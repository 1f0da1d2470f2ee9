#include "swarmfit/integrators/ensemble_checks.hpp"

#include <algorithm>
#include <cmath>

namespace swarmfit {

std::string initial_state_problem(const Ensemble& e, long s) {
  for (int i = 0; i < e.num_bodies(); ++i) {
    double sum = e.mass(s, i);
    for (int d = 0; d < 3; ++d) sum += e.position(s, i, d) + e.velocity(s, i, d);
    if (!std::isfinite(sum)) return "body " + std::to_string(i) + ": non-finite initial condition";
    if (e.mass(s, i) < 0) return "body " + std::to_string(i) + ": negative mass";
  }
  for (int i = 0; i < e.num_bodies(); ++i)
    for (int j = i + 1; j < e.num_bodies(); ++j) {
      double r2 = 0;
      for (int d = 0; d < 3; ++d) r2 += std::pow(e.position(s, i, d) - e.position(s, j, d), 2);
      if (r2 == 0) return "body " + std::to_string(i) + " coincides with body " + std::to_string(j);
    }
  return "";
}

std::vector<double> system_energies(const Ensemble& e, double G) {
  std::vector<double> energy(e.num_systems());
  for (long s = 0; s < e.num_systems(); ++s) energy[s] = e.energy(s, G);
  return energy;
}

std::vector<double> relative_energy_errors(const std::vector<double>& before, const Ensemble& after, double G) {
  std::vector<double> error(after.num_systems());
  for (long s = 0; s < after.num_systems(); ++s) error[s] = (after.energy(s, G) - before[s]) / std::fabs(before[s]);
  return error;
}

ErrorSpread error_spread(const std::vector<double>& errors) {
  ErrorSpread spread;
  if (errors.empty()) return spread;
  std::vector<double> a;
  for (double x : errors) a.push_back(std::fabs(x));
  std::sort(a.begin(), a.end());
  spread.worst = a.back();
  const std::size_t k = a.size() / 2;
  spread.median = a.size() % 2 ? a[k] : 0.5 * (a[k - 1] + a[k]);
  return spread;
}

StateDifference state_difference(const Ensemble& e, const Ensemble& ref, long s) {
  double pos_scale = 0, vel_scale = 0, dpos = 0, dvel = 0;
  for (int i = 0; i < e.num_bodies(); ++i) {
    double p2 = 0, v2 = 0, dp2 = 0, dv2 = 0;
    for (int d = 0; d < 3; ++d) {
      p2 += ref.position(s, i, d) * ref.position(s, i, d);
      v2 += ref.velocity(s, i, d) * ref.velocity(s, i, d);
      dp2 += std::pow(e.position(s, i, d) - ref.position(s, i, d), 2);
      dv2 += std::pow(e.velocity(s, i, d) - ref.velocity(s, i, d), 2);
    }
    pos_scale = std::max(pos_scale, std::sqrt(p2));
    vel_scale = std::max(vel_scale, std::sqrt(v2));
    dpos = std::max(dpos, std::sqrt(dp2));
    dvel = std::max(dvel, std::sqrt(dv2));
  }
  StateDifference diff;
  diff.position = dpos / std::max(pos_scale, 1e-300);
  diff.velocity = dvel / std::max(vel_scale, 1e-300);
  diff.time = std::fabs(e.time(s) - ref.time(s)) / std::max(std::fabs(ref.time(s)), 1.0);
  return diff;
}

}  // namespace swarmfit
