// Host container of an ensemble of M systems of n bodies each (Swarm-NG's "ensemble"): the
// chunked structure of arrays of ensemble_layout.hpp plus per-system time, step, status, steps.
#pragma once

#include <cstddef>
#include <memory>
#include <new>
#include <utility>
#include <vector>

#include "swarmfit/integrators/ensemble_layout.hpp"

namespace swarmfit {

constexpr int kMinBodies = 2;
constexpr int kMaxBodies = 16;

// std::allocator whose value-less construct() leaves a double uninitialised, so that the
// Ensemble constructor can zero its arrays in parallel: the first touch of a large ensemble's
// pages on one thread would cost as much as a likelihood batch's host set-up.
template <class V>
struct UninitialisedAllocator : std::allocator<V> {
  template <class U>
  struct rebind {
    using other = UninitialisedAllocator<U>;
  };
  UninitialisedAllocator() noexcept = default;
  template <class U>
  UninitialisedAllocator(const UninitialisedAllocator<U>&) noexcept {}
  template <class U>
  void construct(U* p) noexcept {
    ::new (static_cast<void*>(p)) U;
  }
  template <class U, class... A>
  void construct(U* p, A&&... a) {
    ::new (static_cast<void*>(p)) U(std::forward<A>(a)...);
  }
};
using EnsembleStorage = std::vector<double, UninitialisedAllocator<double>>;

class Ensemble {
 public:
  Ensemble(long num_systems, int num_bodies);

  long num_systems() const { return num_systems_; }
  int num_bodies() const { return num_bodies_; }
  long num_chunks() const { return num_chunks_; }

  double& position(long sys, int body, int d) { return bodies_[offset(sys, kFieldX + d, body)]; }
  double& velocity(long sys, int body, int d) { return bodies_[offset(sys, kFieldVx + d, body)]; }
  double& mass(long sys, int body) { return bodies_[offset(sys, kFieldMass, body)]; }
  double& radius(long sys, int body) { return bodies_[offset(sys, kFieldRadius, body)]; }
  double position(long sys, int body, int d) const { return bodies_[offset(sys, kFieldX + d, body)]; }
  double velocity(long sys, int body, int d) const { return bodies_[offset(sys, kFieldVx + d, body)]; }
  double mass(long sys, int body) const { return bodies_[offset(sys, kFieldMass, body)]; }
  double radius(long sys, int body) const { return bodies_[offset(sys, kFieldRadius, body)]; }

  double time(long sys) const { return clocks_[clock(sys, kClockTime)]; }
  double time_step(long sys) const { return clocks_[clock(sys, kClockTimeStep)]; }
  int status(long sys) const { return static_cast<int>(clocks_[clock(sys, kClockStatus)]); }
  double steps(long sys) const { return clocks_[clock(sys, kClockSteps)]; }
  void set_time(long sys, double t) { clocks_[clock(sys, kClockTime)] = t; }
  void set_time_step(long sys, double h) { clocks_[clock(sys, kClockTimeStep)] = h; }
  void set_status(long sys, int s) { clocks_[clock(sys, kClockStatus)] = s; }
  void set_steps(long sys, double n) { clocks_[clock(sys, kClockSteps)] = n; }

  // Fills the unused lanes of the last chunk with copies of system 0 marked kStatusPadding, so
  // that SIMD lanes beyond the end compute on sane numbers and are never integrated.
  void fill_padding();

  // Total energy of one system (inertial frame), in units where the constant of gravity is G.
  double energy(long sys, double G) const;

  EnsembleView view() { return EnsembleView{bodies_.data(), clocks_.data(), num_chunks_, num_bodies_}; }
  EnsembleStorage& body_data() { return bodies_; }
  EnsembleStorage& clock_data() { return clocks_; }
  const EnsembleStorage& body_data() const { return bodies_; }
  const EnsembleStorage& clock_data() const { return clocks_; }

 private:
  std::size_t offset(long sys, int field, int body) const {
    return body_offset(sys / kChunk, field, body, static_cast<int>(sys % kChunk), num_bodies_);
  }
  std::size_t clock(long sys, int field) const {
    return clock_offset(sys / kChunk, field, static_cast<int>(sys % kChunk));
  }
  long num_systems_;
  int num_bodies_;
  long num_chunks_;
  EnsembleStorage bodies_;
  EnsembleStorage clocks_;
};

}  // namespace swarmfit
