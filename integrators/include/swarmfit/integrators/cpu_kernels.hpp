// The CPU backend's kernels: OpenMP over the packs of W systems (a chunk of 32 systems holds
// 32 / W of them); a pack's systems advance together, one system per SIMD lane (Pack<W>,
// lanes.hpp). The physics is integrate_lanes(), the same function the CUDA kernels call with
// T = double. Included only by the compilation units that instantiate integrate_cpu_scheme, one
// per scheme and observation policy (generated from integrators/templates/cpu_kernels.cpp.in and
// models' likelihood template), so that they build in parallel; everything else calls the
// dispatch in backend.hpp.
#pragma once

#include <omp.h>

#include <stdexcept>
#include <string>

#include "swarmfit/integrators/backend.hpp"
#include "swarmfit/integrators/dispatch.hpp"
#include "swarmfit/integrators/observation.hpp"
#include "swarmfit/integrators/schemes.hpp"

namespace swarmfit {

static_assert(kChunk % kSimdWidth == 0, "a chunk must hold whole SIMD packs");

template <template <int, class> class Scheme, class Observation, int N>
void integrate_chunks(EnsembleView view, const RunRequest& request, const typename Observation::Params& params) {
  using T = Pack<kSimdWidth>;
  const int threads = request.threads > 0 ? request.threads : omp_get_max_threads();
  // A pack per iteration, not a chunk: a batch of a few dozen systems (a fit's stability pass) still
  // spreads over the threads. Each pack is independent, so the results do not depend on the threads.
  constexpr int kPacks = kChunk / kSimdWidth;
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads)
  for (long pack = 0; pack < view.num_chunks * kPacks; ++pack) {
    const long chunk = pack / kPacks;
    const int lane = static_cast<int>(pack % kPacks) * kSimdWidth;
    Bodies<N, T> bodies;
    T radius[N];
    Clock<T> clock;
    load_lanes<N>(view, chunk, lane, bodies, radius, clock);
    const long first = chunk * kChunk + lane;
    if constexpr (HasPerSystemRuns<Observation>::value) {
      const SystemRun& run = Observation::run_of(params, first);
      observe_lanes<Observation, Scheme, N, T>(params, first, bodies, radius, clock, run.t_end, run.step, run.monitors);
    } else {
      observe_lanes<Observation, Scheme, N, T>(params, first, bodies, radius, clock, request.destination_time,
                                               request.step, request.monitors);
    }
    store_lanes<N>(view, chunk, lane, bodies, clock);
  }
}

template <template <int, class> class Scheme, class Observation>
void integrate_cpu_scheme(Ensemble& ensemble, const RunRequest& request, const typename Observation::Params& params) {
  dispatch_bodies(ensemble.num_bodies(), [&](auto n) {
    constexpr int N = decltype(n)::value;
    if constexpr (N <= Observation::kMaxBodies)
      integrate_chunks<Scheme, Observation, N>(ensemble.view(), request, params);
  });
}

}  // namespace swarmfit
