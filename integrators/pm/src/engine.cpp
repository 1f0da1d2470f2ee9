#include <omp.h>

#include <chrono>
#include <cmath>
#include <stdexcept>

#include "swarmfit/pm/pm.hpp"

namespace swarmfit::pm {

namespace {
double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}
}  // namespace

template <class Real>
PmEngine<Real>::PmEngine(ParticleSet<Real> particles, const PmSettings& settings,
                         std::unique_ptr<MeshForces<Real>> forces, double time)
    : particles_(std::move(particles)), settings_(settings), forces_(std::move(forces)), time_(time) {
  settings_.check();
  if (!forces_) throw std::invalid_argument("PmEngine: no mesh forces");
  wrap();
  forces_->take_share(particles_);
  if (forces_->resident()) forces_->load(particles_);
}

template <class Real>
const ParticleSet<Real>& PmEngine<Real>::particles() {
  if (stale_) forces_->store(particles_);
  stale_ = false;
  return particles_;
}

template <class Real>
void PmEngine<Real>::wrap() {
  if (settings_.boundary != Boundary::periodic) return;
  const long n = particles_.size();
  const double box = settings_.box;
  for (int d = 0; d < 3; ++d) {
    const double lo = settings_.origin[d];
    Real* x = particles_.x[d].data();
#pragma omp parallel for schedule(static)
    for (long i = 0; i < n; ++i) x[i] = static_cast<Real>(periodic_wrap(static_cast<double>(x[i]), lo, box));
  }
}

template <class Real>
void PmEngine<Real>::step(double dt) {
  if (!(dt > 0) || !std::isfinite(dt)) throw std::invalid_argument("PmEngine::step: dt must be positive");
  if (forces_->resident()) {
    forces_->kdk(dt);
    force_seconds_ += forces_->kdk_force_seconds;
    update_seconds_ += forces_->kdk_update_seconds;
    stale_ = true;
    time_ += dt;
    ++steps_;
    return;
  }
  auto t = std::chrono::steady_clock::now();
  if (!have_acc_) {
    forces_->accelerations(particles_, &acc_, nullptr);
    have_acc_ = true;
  }
  force_seconds_ += seconds_since(t);
  long n = particles_.size();  // (a distributed backend's share changes in accelerations())
  const Real half = static_cast<Real>(0.5 * dt), full = static_cast<Real>(dt);
  t = std::chrono::steady_clock::now();
  for (int d = 0; d < 3; ++d) {
    Real* v = particles_.v[d].data();
    Real* x = particles_.x[d].data();
    const Real* a = acc_.data() + static_cast<std::size_t>(d) * n;
#pragma omp parallel for schedule(static)
    for (long i = 0; i < n; ++i) {
      kick(v[i], a[i], half);
      drift(x[i], v[i], full);
    }
  }
  wrap();
  update_seconds_ += seconds_since(t);
  t = std::chrono::steady_clock::now();
  forces_->accelerations(particles_, &acc_, nullptr);
  force_seconds_ += seconds_since(t);
  n = particles_.size();
  t = std::chrono::steady_clock::now();
  for (int d = 0; d < 3; ++d) {
    Real* v = particles_.v[d].data();
    const Real* a = acc_.data() + static_cast<std::size_t>(d) * n;
#pragma omp parallel for schedule(static)
    for (long i = 0; i < n; ++i) kick(v[i], a[i], half);
  }
  update_seconds_ += seconds_since(t);
  time_ += dt;
  ++steps_;
}

template <class Real>
PmDiagnostics PmEngine<Real>::diagnostics() {
  particles();  // a resident backend's particles copied back
  std::vector<Real> pot;
  // (A distributed backend may move particles between ranks: their accelerations follow them.)
  forces_->accelerations(particles_, have_acc_ && !forces_->distributed() ? nullptr : &acc_, &pot);
  have_acc_ = true;
  PmDiagnostics d;
  const long n = particles_.size();
  for (long i = 0; i < n; ++i) {
    const double m = particles_.mass[i];
    double v2 = 0;
    for (int c = 0; c < 3; ++c) {
      const double v = particles_.v[c][i];
      v2 += v * v;
      d.momentum[c] += m * v;
    }
    d.kinetic += 0.5 * m * v2;
    if (particles_.status[i] == 0) {
      d.potential += 0.5 * m * static_cast<double>(pot[i]);
      d.mass_on_mesh += m;
    } else {
      ++d.off_mesh;
    }
  }
  if (forces_->distributed()) {
    double sums[7] = {d.kinetic,
                      d.potential,
                      d.momentum[0],
                      d.momentum[1],
                      d.momentum[2],
                      d.mass_on_mesh,
                      static_cast<double>(d.off_mesh)};
    forces_->sum_over_ranks(sums, 7);
    d.kinetic = sums[0];
    d.potential = sums[1];
    for (int c = 0; c < 3; ++c) d.momentum[c] = sums[2 + c];
    d.mass_on_mesh = sums[5];
    d.off_mesh = std::lround(sums[6]);
  }
  return d;
}

template class PmEngine<float>;
template class PmEngine<double>;

}  // namespace swarmfit::pm
