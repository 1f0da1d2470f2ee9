// CPU backend kernels: OpenMP over chunks of 32 systems; inside a chunk, packs of W systems
// advance together, one system per SIMD lane (Pack<W>, lanes.hpp). The physics is
// integrate_lanes(), the same function the CUDA kernel calls with T = double.
// Each scheme is instantiated in its own translation unit (cpu_kernels_<scheme>.cpp) so builds
// run in parallel.
#pragma once

#include <omp.h>

#include <stdexcept>
#include <string>

#include "swarmfit/integrators/backend.hpp"
#include "swarmfit/integrators/dispatch.hpp"
#include "swarmfit/integrators/schemes.hpp"

namespace swarmfit {

#if defined(__AVX512F__)
constexpr int kSimdWidth = 8;
#elif defined(__AVX__)
constexpr int kSimdWidth = 4;
#else
constexpr int kSimdWidth = 2;
#endif
static_assert(kChunk % kSimdWidth == 0, "a chunk must hold whole SIMD packs");

template <template <int, class> class Scheme, int N>
void integrate_chunks(EnsembleView view, const RunRequest& request, const ObservationTables* tables) {
  using T = Pack<kSimdWidth>;
  const int threads = request.threads > 0 ? request.threads : omp_get_max_threads();
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads)
  for (long chunk = 0; chunk < view.num_chunks; ++chunk) {
    for (int lane = 0; lane < kChunk; lane += kSimdWidth) {
      Bodies<N, T> bodies;
      T radius[N];
      Clock<T> clock;
      load_lanes<N>(view, chunk, lane, bodies, radius, clock);
      if (tables) {
        if constexpr (N <= kMaxObservedBodies) {
          ObserverRecord<N, T> record(*tables, chunk * kChunk + lane);
          LikelihoodObserver<N, T> observer(record);
          integrate_lanes<Scheme, N, T>(bodies, radius, clock, request.destination_time, request.step, request.monitors,
                                        &observer);
          clock.status = observer.finish(clock.status);
        }
      } else {
        integrate_lanes<Scheme, N, T>(bodies, radius, clock, request.destination_time, request.step, request.monitors);
      }
      store_lanes<N>(view, chunk, lane, bodies, clock);
    }
  }
}

template <template <int, class> class Scheme>
void integrate_cpu_scheme(Ensemble& ensemble, const RunRequest& request, const ObservationTables* tables) {
  if (tables && ensemble.num_bodies() > kMaxObservedBodies)
    throw std::invalid_argument("observed integrations take at most " + std::to_string(kMaxObservedBodies) + " bodies");
  dispatch_bodies(ensemble.num_bodies(),
                  [&](auto n) { integrate_chunks<Scheme, decltype(n)::value>(ensemble.view(), request, tables); });
}

// Defined in cpu_kernels_<scheme>.cpp.
void integrate_cpu_hermite(Ensemble& ensemble, const RunRequest& request, const ObservationTables* tables);
void integrate_cpu_hermite_adaptive(Ensemble& ensemble, const RunRequest& request, const ObservationTables* tables);
void integrate_cpu_mvs(Ensemble& ensemble, const RunRequest& request, const ObservationTables* tables);
void integrate_cpu_rkck(Ensemble& ensemble, const RunRequest& request, const ObservationTables* tables);
void integrate_cpu_leapfrog(Ensemble& ensemble, const RunRequest& request, const ObservationTables* tables);

}  // namespace swarmfit
