#include "swarmfit/integrators/ensemble.hpp"

#include <stdexcept>

#include "swarmfit/integrators/dispatch.hpp"

namespace swarmfit {

Ensemble::Ensemble(long num_systems, int num_bodies)
    : num_systems_(num_systems),
      num_bodies_(num_bodies),
      num_chunks_((num_systems + kChunk - 1) / kChunk),
      bodies_(static_cast<std::size_t>(num_chunks_) * kBodyFields * num_bodies * kChunk),
      clocks_(static_cast<std::size_t>(num_chunks_) * kClockFields * kChunk) {
  if (num_systems < 1) throw std::invalid_argument("an ensemble needs at least one system");
  if (num_bodies < kMinBodies || num_bodies > kMaxBodies)
    throw std::invalid_argument("number of bodies must be between 2 and 16");
  // Zeroed in parallel (the storage is left uninitialised by its allocator): every thread
  // touches its own pages first.
  const long nb = static_cast<long>(bodies_.size()), nc = static_cast<long>(clocks_.size());
#pragma omp parallel for schedule(static) if (nb > (1L << 16))
  for (long k = 0; k < nb; ++k) bodies_[k] = 0.0;
#pragma omp parallel for schedule(static) if (nc > (1L << 16))
  for (long k = 0; k < nc; ++k) clocks_[k] = 0.0;
}

void Ensemble::fill_padding() {
  for (long sys = num_systems_; sys < num_chunks_ * kChunk; ++sys) {
    for (int body = 0; body < num_bodies_; ++body) {
      for (int field = 0; field < kBodyFields; ++field)
        bodies_[offset(sys, field, body)] = bodies_[offset(0, field, body)];
    }
    clocks_[clock(sys, kClockTime)] = clocks_[clock(0, kClockTime)];
    clocks_[clock(sys, kClockTimeStep)] = clocks_[clock(0, kClockTimeStep)];
    clocks_[clock(sys, kClockStatus)] = kStatusPadding;
    clocks_[clock(sys, kClockSteps)] = 0.0;
  }
}

double Ensemble::energy(long sys, double G) const {
  EnsembleView v{const_cast<double*>(bodies_.data()), const_cast<double*>(clocks_.data()), num_chunks_, num_bodies_};
  return dispatch_bodies(num_bodies_, [&](auto n) {
    constexpr int N = decltype(n)::value;
    Bodies<N, double> b;
    double radius[N];
    Clock<double> c;
    load_lanes<N>(v, sys / kChunk, static_cast<int>(sys % kChunk), b, radius, c);
    return total_energy<N>(b, G);
  });
}

}  // namespace swarmfit
