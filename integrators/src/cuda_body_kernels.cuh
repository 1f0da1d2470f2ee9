// CUDA kernels with a thread per body (Hermite and HermiteAdaptive, monitors; no observers), for systems whose state
// does not fit the registers of one thread: one thread per system spills from n = 8 bodies and, with the body loops
// rolled beyond 8, runs at ~2% of the FP64 peak from n = 10 (bench/RESULTS.md). The bodies of a system are consecutive
// lanes of one warp (floor(32 / n) systems per warp, as Swarm-NG gives a system several threads, Dindar et al. 2013
// sec. 3); each thread keeps its body in registers and, before every force evaluation, publishes it in shared memory,
// from which the others read it. The physics is hermite.hpp's per-body predictor and corrector, gravity.hpp's per-body
// force loop (partners in the order the pair loop adds them) and driver.hpp's clock and monitor functions, so a system
// comes out bitwise as from integrate_lanes() (tests/integrators/test_gpu.cpp).
#pragma once

#include "cuda_kernels.cuh"

namespace swarmfit {

// One system's published state: positions and velocities as (x, y), (z, vx), (vy, vz) pairs
// (16-byte loads), then per body the step term, star distance^2 and monitor flags of the last
// reduction, and the constants (mass, radius).
template <int N>
struct BodyExchange {
  double2 state[N][3];
  double term[N];
  double r2[N];
  double mass[N];
  double radius[N];
  unsigned flags[N];
};

template <int N>
__device__ __forceinline__ void publish(BodyExchange<N>& ex, int self, const double (&x)[3], const double (&v)[3]) {
  ex.state[self][0] = make_double2(x[0], x[1]);
  ex.state[self][1] = make_double2(x[2], v[0]);
  ex.state[self][2] = make_double2(v[1], v[2]);
}

template <int N>
__device__ __forceinline__ void partner_state(const BodyExchange<N>& ex, int j, double (&x)[3], double (&v)[3]) {
  const double2 a = ex.state[j][0], b = ex.state[j][1], c = ex.state[j][2];
  x[0] = a.x;
  x[1] = a.y;
  x[2] = b.x;
  v[0] = b.y;
  v[1] = c.x;
  v[2] = c.y;
}

// Every unordered pair of the n bodies once, spread evenly over the n threads (a circulant
// schedule): thread i takes (i, i + k mod n) for k = 1 .. (n - 1) / 2, and for even n also
// k = n / 2 when i < n / 2. Returns the number of pairs of thread i; partner(i, k) the k-th.
template <int N>
struct PairSchedule {
  static constexpr int kRounds = N / 2;  // k = 1 .. N/2
  __device__ static bool has(int self, int k) { return 2 * k < N || self < N / 2; }
  __device__ static int partner(int self, int k) { return self + k < N ? self + k : self + k - N; }
};

// One thread's body: position, velocity, acceleration, jerk and (HermiteAdaptive) the
// compensation terms of the position and velocity sums.
struct BodyState {
  double x[3], v[3], acc[3], jerk[3], comp_x[3], comp_v[3];
};

// kAdaptive: HermiteAdaptive (time-symmetrised step, compensated sums), else Hermite.
template <int N, bool kAdaptive>
__global__ void __launch_bounds__(kCudaBlock)
    hermite_body_kernel(EnsembleView view, long num_slots, double t_end, StepParams p, MonitorParams m) {
  constexpr int kGroups = 32 / N;
  constexpr int kWarps = kCudaBlock / 32;
  constexpr unsigned kAll = 0xffffffffu;
  __shared__ BodyExchange<N> exchange[kWarps][kGroups];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int group = lane / N < kGroups ? lane / N : kGroups - 1;
  const int self = lane - group * N;
  const long system = (static_cast<long>(blockIdx.x) * kWarps + warp) * kGroups + group;
  // Lanes past the last whole group, and groups past the last system, only keep the warp's
  // barriers company.
  const bool member = lane < kGroups * N && system < num_slots;
  BodyExchange<N>& ex = exchange[warp][group];
  const long chunk = system / kChunk;
  const int slot = static_cast<int>(system % kChunk);

  BodyState s = {};
  double gm[N];
  LoopState<N, double> ls;
  ls.clock = Clock<double>{0.0, 0.0, 1.0, 0.0};
  if (member) {
    for (int d = 0; d < 3; ++d) {
      s.x[d] = view.bodies[body_offset(chunk, kFieldX + d, self, slot, N)];
      s.v[d] = view.bodies[body_offset(chunk, kFieldVx + d, self, slot, N)];
    }
    ex.mass[self] = view.bodies[body_offset(chunk, kFieldMass, self, slot, N)];
    ex.radius[self] = view.bodies[body_offset(chunk, kFieldRadius, self, slot, N)];
    ls.clock.time = view.clocks[clock_offset(chunk, kClockTime, slot)];
    ls.clock.time_step = view.clocks[clock_offset(chunk, kClockTimeStep, slot)];
    ls.clock.status = view.clocks[clock_offset(chunk, kClockStatus, slot)];
    ls.clock.steps = view.clocks[clock_offset(chunk, kClockSteps, slot)];
  }
  __syncwarp();
#pragma unroll
  for (int j = 0; j < N; ++j) gm[j] = p.G * (member ? ex.mass[j] : 1.0);
  const double m0 = member ? ex.mass[0] : 1.0, m_self = member ? ex.mass[self] : 1.0;
  ls.active = member && ls.clock.status == 0.0 && ls.clock.time < t_end;
  const bool started = ls.active;
  auto partner = [&](int j, double(&xj)[3], double(&vj)[3]) { partner_state(ex, j, xj, vj); };

  // The adaptive step criterion: the sum over the bodies, in body order, of their terms.
  auto criterion = [&]() {
    __syncwarp();
    if (ls.active) ex.term[self] = hermite_step_term(s.acc, s.jerk);
    __syncwarp();
    double sum = 0.0;
#pragma unroll
    for (int k = 0; k < N; ++k) sum += ex.term[k];
    return hermite_step_from_terms(sum, p);
  };

  // begin (Hermite::begin, HermiteAdaptive::begin; the driver's stored step)
  if (ls.active) publish(ex, self, s.x, s.v);
  __syncwarp();
  if (ls.active) acceleration_and_jerk_of<N>(self, s.x, s.v, gm, partner, s.acc, s.jerk);
  double tau = 0.0;
  ls.h_next = p.time_step;
  if constexpr (kAdaptive) {
    tau = criterion();
    ls.h_next = ls.clock.time_step > 0.0 ? ls.clock.time_step : tau;
  }
  ls.step_limit = ls.clock.steps + m.max_steps;
  const double rmax2 = m.rmax * m.rmax;
  const double k2 = m.close_approach * m.close_approach;
  const double k6 = k2 * k2 * k2;
  const double nine_m0_squared = 9.0 * m0 * m0;

  while (__any_sync(kAll, ls.active)) {
    bool last = false;
    double h = 0.0, h2 = 0.0, h6 = 0.0;
    const BodyState s0 = s;  // the step's start
    if (ls.active) {
      h = step_to_take(ls, t_end, last);
      h2 = 0.5 * h;
      h6 = h * (1.0 / 6.0);
      hermite_predict(s0.x, s0.v, s0.acc, s0.jerk, h, h2, h * (1.0 / 3.0), s.x, s.v);
    }
    for (int iteration = 0; iteration < 2; ++iteration) {
      __syncwarp();
      if (ls.active) publish(ex, self, s.x, s.v);
      __syncwarp();
      if (ls.active) {
        acceleration_and_jerk_of<N>(self, s.x, s.v, gm, partner, s.acc, s.jerk);
        if constexpr (kAdaptive)
          hermite_correct_compensated(s0.x, s0.v, s0.acc, s0.jerk, s.acc, s.jerk, h2, h6, s0.comp_x, s0.comp_v, s.x,
                                      s.v, s.comp_x, s.comp_v);
        else
          hermite_correct(s0.x, s0.v, s0.acc, s0.jerk, s.acc, s.jerk, h2, h6, s.x, s.v);
      }
    }
    bool accepted = true;
    if constexpr (kAdaptive) {
      const double tau1 = criterion();
      if (ls.active) {
        accepted = hermite_symmetric_step(h, ls.h_next, tau, tau1, p, ls.h_next);
        if (accepted)
          tau = tau1;
        else
          s = s0;  // taken again from the same state
      }
    }
    const bool stalled = ls.active && advance_clock(ls, h, last, accepted, t_end);

    // Monitors on the state reached: every body's star-relative position and distance^2, then
    // each thread tests its own body and its share of the pairs, and the flags are combined.
    __syncwarp();
    if (ls.active) publish(ex, self, s.x, s.v);
    __syncwarp();
    double rp[3], rv[3], r2 = 0.0;
    double star_x[3], star_v[3];
    partner_state(ex, 0, star_x, star_v);
    for (int d = 0; d < 3; ++d) {
      rp[d] = s.x[d] - star_x[d];
      rv[d] = s.v[d] - star_v[d];
    }
    if (self > 0) r2 = rp[0] * rp[0] + rp[1] * rp[1] + rp[2] * rp[2];
    if (ls.active) ex.r2[self] = r2;
    __syncwarp();
    unsigned flags = 0;
    if (ls.active) {
      if (self > 0) {
        if (!lane_isfinite(r2)) flags |= kFlagNonFinite;
        if (m.rmax > 0.0 && r2 > rmax2) flags |= kFlagEjected;
        if (m.stop_on_unbound && unbound_outgoing(rp, rv, r2, m0, m_self, p.G)) flags |= kFlagEjected;
      }
      if (m.close_approach > 0.0 || m.collisions) {
        for (int k = 1; k <= PairSchedule<N>::kRounds; ++k) {
          if (!PairSchedule<N>::has(self, k)) continue;
          const int j = PairSchedule<N>::partner(self, k);
          double xj[3], vj[3], rpj[3];
          partner_state(ex, j, xj, vj);
          for (int d = 0; d < 3; ++d) rpj[d] = xj[d] - star_x[d];
          const double d2 = distance2(rp, rpj);
          if (m.close_approach > 0.0 && self > 0 && j > 0 &&
              within_hill(d2, r2, ex.r2[j], m_self, ex.mass[j], nine_m0_squared, k6))
            flags |= kFlagCloseEncounter;
          if (m.collisions && touching(d2, ex.radius[self], ex.radius[j])) flags |= kFlagCollision;
        }
      }
      ex.flags[self] = flags;
    }
    __syncwarp();
    if (ls.active) {
      unsigned all_flags = 0;
#pragma unroll
      for (int k = 0; k < N; ++k) all_flags |= ex.flags[k];
      ls.code = status_from_flags(all_flags);
      if (stalled) ls.code = kStatusStepUnderflow;
      settle_status(ls, t_end, m);
    }
  }
  if (member) {
    for (int d = 0; d < 3; ++d) {
      view.bodies[body_offset(chunk, kFieldX + d, self, slot, N)] = s.x[d];
      view.bodies[body_offset(chunk, kFieldVx + d, self, slot, N)] = s.v[d];
    }
    if (self == 0 && started) {
      ls.clock.time_step = kAdaptive ? ls.h_next : p.time_step;
      view.clocks[clock_offset(chunk, kClockTime, slot)] = ls.clock.time;
      view.clocks[clock_offset(chunk, kClockTimeStep, slot)] = ls.clock.time_step;
      view.clocks[clock_offset(chunk, kClockStatus, slot)] = ls.clock.status;
      view.clocks[clock_offset(chunk, kClockSteps, slot)] = ls.clock.steps;
    }
  }
}

template <bool kAdaptive>
void launch_hermite_bodies(EnsembleView view, const RunRequest& request) {
  dispatch_bodies(view.num_bodies, [&](auto n) {
    constexpr int N = decltype(n)::value;
    constexpr int per_block = (kCudaBlock / 32) * (32 / N);
    const long slots = view.num_chunks * kChunk;
    const unsigned grid = static_cast<unsigned>((slots + per_block - 1) / per_block);
    hermite_body_kernel<N, kAdaptive><<<grid, kCudaBlock, 0, static_cast<cudaStream_t>(request.cuda_stream)>>>(
        view, slots, request.destination_time, request.step, request.monitors);
  });
  SWARMFIT_CUDA_CHECK(cudaGetLastError());
}

}  // namespace swarmfit
