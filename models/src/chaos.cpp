#include "swarmfit/models/chaos.hpp"

#include <cmath>
#include <limits>
#include <stdexcept>

namespace swarmfit {

std::vector<double> default_tangent(int num_bodies) {
  // Components sin(1 + k) (k = 0 .. 6n - 1): no component zero, no two equal, no structure the
  // dynamics could align with.
  std::vector<double> d(6 * static_cast<std::size_t>(num_bodies));
  for (std::size_t k = 0; k < d.size(); ++k) d[k] = std::sin(1.0 + static_cast<double>(k));
  return d;
}

ChaosState::ChaosState(const Ensemble& e, const std::vector<double>& direction)
    : num_systems_(e.num_systems()), num_bodies_(e.num_bodies()), stride_(e.num_chunks() * kChunk) {
  if (num_bodies_ > kMaxChaosBodies)
    throw std::invalid_argument("chaos indicators take at most " + std::to_string(kMaxChaosBodies) + " bodies");
  std::vector<double> t = direction.empty() ? default_tangent(num_bodies_) : direction;
  if (t.size() != 6 * static_cast<std::size_t>(num_bodies_))
    throw std::invalid_argument("tangent direction: expected 6 values per body");
  double norm = 0;
  for (double x : t) norm += x * x;
  if (!(norm > 0) || !std::isfinite(norm)) throw std::invalid_argument("tangent direction: zero or non-finite");
  for (double& x : t) x /= std::sqrt(norm);
  fields_.assign(static_cast<std::size_t>(kChaosFields) * stride_, 0.0);
  for (long s = 0; s < stride_; ++s) {
    const long from = s < num_systems_ ? s : 0;  // padding slots: copies of system 0, never integrated
    fields_[static_cast<std::size_t>(kChaosStartTime) * stride_ + s] = e.time(from);
    fields_[static_cast<std::size_t>(kChaosHill6) * stride_ + s] = 1e300;
    for (int k = 0; k < 6 * num_bodies_; ++k) fields_[static_cast<std::size_t>(kChaosTangent + k) * stride_ + s] = t[k];
  }
}

std::vector<double> ChaosState::tangent(long s) const {
  std::vector<double> t(6 * static_cast<std::size_t>(num_bodies_));
  for (std::size_t k = 0; k < t.size(); ++k) t[k] = field(kChaosTangent + static_cast<int>(k), s);
  return t;
}

ChaosIndicators ChaosState::indicators(long s) const {
  ChaosIndicators c;
  c.steps = static_cast<long>(field(kChaosCount, s));
  const double elapsed = field(kChaosElapsed, s);
  if (c.steps > 0 && elapsed != 0) {
    c.megno = field(kChaosYss, s) / elapsed;
    c.megno_slope = field(kChaosVarT, s) > 0 ? field(kChaosCovYt, s) / field(kChaosVarT, s) : 0.0;
    double norm2 = 0;
    for (double x : tangent(s)) norm2 += x * x;
    // |delta(t0)| = 1; each rescaling multiplied the tangent by kChaosRescale.
    c.lyapunov = (0.5 * std::log(norm2) - field(kChaosRescales, s) * std::log(kChaosRescale)) / elapsed;
  }
  c.closest_hill = field(kChaosHill6, s) >= 1e300 ? std::numeric_limits<double>::infinity()
                                                  : std::pow(field(kChaosHill6, s), 1.0 / 6.0);
  for (int i = 1; i < num_bodies_; ++i) {
    c.max_e.push_back(field(kChaosPlanets + 3 * (i - 1) + 1, s));
    c.max_da.push_back(field(kChaosPlanets + 3 * (i - 1) + 2, s));
  }
  return c;
}

void integrate_chaos(Ensemble& ensemble, ChaosState& state, const RunRequest& request, const std::string& backend) {
  if (state.num_systems() != ensemble.num_systems() || state.num_bodies() != ensemble.num_bodies())
    throw std::invalid_argument("integrate_chaos: the state was made for another ensemble");
  if (backend == "cuda")
    integrate_chaos_cuda(ensemble, state, request);
  else
    integrate_chaos_cpu(ensemble, state, request);
}

void integrate_chaos_cpu(Ensemble& ensemble, ChaosState& state, const RunRequest& request) {
  integrate_cpu_observed<ChaosObservation>(ensemble, request, ChaosObservation::Params{state.fields(), state.stride()});
}

}  // namespace swarmfit
