// The likelihood observer with a thread per body (the MVS body kernel, cuda_body_kernels.cuh), for
// fits whose half-population is too small to fill the GPU a thread per system: a resonant chain
// such as TRAPPIST-1 (8 bodies, ~400 systems a launch) runs each system's steps one after another
// in one thread, so the launch lasts one thread's ~20,000 dependent steps; with a thread per body
// each step is one Kepler drift and one body's forces. The observations are those of
// likelihood_observer.hpp, from the same functions: each system's ObserverRecord lives in shared
// memory; a planet's thread watches its own conjunctions (the sign of x . v on the sky) and finds
// the time of its transit itself (transit_root, with Mvs::dense_relative), so the planets of one
// step search in parallel; the RVs due (record_rv, Mvs::dense_star_vz) and the bookkeeping of the
// conjunctions (conjunction(), in planet order, as ObserverRecord::observe makes it) run in the
// star's thread. Each event rebuilds the whole system's Mvs state (Bodies, Work) from the exchange
// in the thread that needs it, so a system's ln L is bitwise that of the thread-per-system kernel
// in the reproducible build (tests/models/test_observers_gpu.cpp).
#pragma once

#include <new>

#include "swarmfit/integrators/cuda_body_kernels.cuh"
#include "swarmfit/models/likelihood_observer.hpp"

namespace swarmfit {
namespace SWARMFIT_KERNELS {

// A system's observation state in shared memory: its record, the kick accelerations published at
// an event, and each planet's conjunction found at this step for the star's thread to book.
template <int N>
struct LikelihoodBodyShared {
  alignas(ObserverRecord<N, double>) unsigned char record[sizeof(ObserverRecord<N, double>)];
  double kick_acc[N][3];
  double event_time[N];
  bool event_transit[N];
  bool event[N];
};

template <int N>
struct LikelihoodBodyObserver {
  static constexpr bool kActive = true;
  using Params = ObservationTables;
  using Record = ObserverRecord<N, double>;
  using Thread = BodyThread<N>;
  using S = Mvs<N, double>;

  LikelihoodBodyShared<N>& sh;
  Record& rec;
  const int self;
  const bool member;
  bool detect;              // this body's conjunctions are observed
  bool g_negative = false;  // its sky-plane x . v was negative after the last step
  double rv_next_time;      // the system's next RV time (a copy of the record's)

  __device__ static LikelihoodBodyShared<N>& shared_of(const Thread& th) {
    __shared__ LikelihoodBodyShared<N> all[Thread::kWarps][Thread::kGroups];
    return all[th.warp][th.group];
  }

  __device__ LikelihoodBodyObserver(const ObservationTables& tab, const Thread& th)
      : sh(shared_of(th)), rec(*reinterpret_cast<Record*>(sh.record)), self(th.self), member(th.member) {
    if (member && self == 0) new (sh.record) Record(tab, th.system);
    __syncwarp();
    rv_next_time = member ? rec.rv_next_time : HUGE_VAL;
    detect = member && self > 0 && self < kMaxObservedBodies && tab.detect[self];
  }

  // LikelihoodObserver::start for this body.
  __device__ void start(bool active, const double (&rp)[3], const double (&rv)[3]) {
    g_negative = active && detect && rp[0] * rv[0] + rp[1] * rv[1] < 0.0;
  }

  // LikelihoodObserver::after_step for this body: its conjunction (counted off without a search
  // where its epoch is not observed: ObserverRecord::skip), the system's RVs due; the events to
  // event() below, called by the whole warp when any thread of it has one.
  __device__ void after_step(const MvsBodyStep<N>& s, double& code) {
    bool crossing = false, rv_due = false;
    if (s.active) {
      rv_due = rv_next_time <= s.t_new + s.pending;  // Mvs::observation_lag with the Kepler drift outermost
      if (detect) {
        const double g = s.rp[0] * s.rv[0] + s.rp[1] * s.rv[1];
        crossing = g_negative && g >= 0.0 && s.rp[2] > 0.0;
        g_negative = g < 0.0;
        if (crossing) {
          const double left = rec.skip[self];
          if (left > 0.5) {
            rec.skip[self] = left - 1.0;
            crossing = false;
          }
        }
      }
    }
    if (__any_sync(0xffffffffu, crossing || rv_due)) event(s, code, crossing, rv_due);
  }

  // The system's Mvs state after this step (Bodies in the scheme's coordinates, Work), as the
  // thread-per-system kernel holds it, from the exchange.
  __device__ void rebuild(const MvsBodyStep<N>& s, Bodies<N, double>& b, typename S::Work& w) const {
    for (int k = 0; k < N; ++k) {
      partner_state(s.ex, k, b.pos[k], b.vel[k]);
      b.mass[k] = s.ex.mass[k];
    }
    w.pending = s.pending;
    S::set_kepler(b, s.p, w);
    for (int k = 0; k < N; ++k)
      for (int d = 0; d < 3; ++d) w.kick_acc[k][d] = sh.kick_acc[k][d];
  }

  // ObserverRecord::observe spread over the system's threads (out of line: the hot loop keeps its
  // registers). Every thread of the warp comes here, and passes its barriers.
  __device__ __noinline__ void event(const MvsBodyStep<N>& s, double& code, bool crossing, bool rv_due) {
    if (s.active) {
      for (int d = 0; d < 3; ++d) sh.kick_acc[self][d] = s.kick_acc[d];
      sh.event[self] = false;
    }
    __syncwarp();
    if (crossing || (rv_due && self == 0)) {
      Bodies<N, double> b;
      typename S::Work w;
      rebuild(s, b, w);
      if (crossing) {
        double delta, sky2;
        bool converged;
        transit_root<Mvs, N, double>(b, w, s.p, s.h, self, true, s.rp, s.rv, delta, converged, sky2);
        sh.event_time[self] = s.t_new + delta;
        sh.event_transit[self] = rec.is_transit(converged, sky2);
        sh.event[self] = true;
      }
      if (rv_due && self == 0) rec.template record_rv<Mvs>(b, w, s.p, s.t_new, true);
    }
    __syncwarp();
    if (s.active && self == 0) {
      for (int i = 1; i < N; ++i)
        if (sh.event[i]) rec.conjunction(0, i, sh.event_time[i], sh.event_transit[i]);
    }
    __syncwarp();
    if (s.active) {
      rv_next_time = rec.rv_next_time;
      if (code == 0.0) code = rec.status;  // a missed transit stops the system
    }
  }

  // LikelihoodObserver::finish: ln L written by the star's thread; the status to store.
  __device__ double finish(double status) {
    double code = status;
    if (member && self == 0) rec.finish(code);
    return code;
  }
};

template <>
struct BodyObservation<LikelihoodObservation> {
  static constexpr bool kExists = true;
  template <int N>
  using Observer = LikelihoodBodyObserver<N>;
};

}  // namespace SWARMFIT_KERNELS
}  // namespace swarmfit
