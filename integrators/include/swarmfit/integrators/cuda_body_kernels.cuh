// CUDA kernels with a thread per body (the schemes that have one, with monitors; no observers), for systems whose
// state does not fit the registers of one thread (bench/RESULTS.md run 11, B2 for each scheme). The bodies of a system
// are consecutive lanes of one warp (floor(32 / n) systems per warp, as Swarm-NG gives a system several threads, Dindar
// et al. 2013 sec. 3); each thread keeps its body in registers and, before every force evaluation, publishes it in
// shared memory, from which the others read it. The physics is the schemes' own per-body functions (hermite.hpp's
// predictor and corrector, rkck.hpp's stage state and update, leapfrog.hpp's kick and drift, mvs.hpp's jump, Jacobi
// sweeps and kick, the Kepler drift of one planet), gravity.hpp's per-body
// force loops (partners in the order the pair loop adds them) and driver.hpp's clock and monitor functions, and
// every O(n) sum is formed in the order the per-system code forms it, so a system comes out bitwise as from
// integrate_lanes() (tests/integrators/test_gpu.cpp).
#pragma once

#include <type_traits>

#include "swarmfit/integrators/cuda_common.cuh"

namespace swarmfit {
namespace SWARMFIT_KERNELS {

// Blocks per multiprocessor that each body kernel's registers must allow (__launch_bounds__): with
// the default (1) ptxas gives them up to 255 registers and 2 warps per scheduler, which leaves a
// body thread's latencies (shared-memory exchange, Kepler iterations) uncovered. The values are
// the fastest of 1, 4 and 6 in B2 on the H100 (bench/RESULTS.md run 12; HermiteAdaptive shares
// Hermite's); leapfrog, whose state is smallest, takes 6.
constexpr int kHermiteBodyMinBlocks = 4;
constexpr int kMvsBodyMinBlocks = 4;
constexpr int kRkckBodyMinBlocks = 4;
constexpr int kLeapfrogBodyMinBlocks = 6;

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

template <class Exchange>
__device__ __forceinline__ void publish(Exchange& ex, int self, const double (&x)[3], const double (&v)[3]) {
  ex.state[self][0] = make_double2(x[0], x[1]);
  ex.state[self][1] = make_double2(x[2], v[0]);
  ex.state[self][2] = make_double2(v[1], v[2]);
}

// Component d of body j's published velocity.
template <class Exchange>
__device__ __forceinline__ double partner_velocity(const Exchange& ex, int j, int d) {
  return d == 0 ? ex.state[j][1].y : (d == 1 ? ex.state[j][2].x : ex.state[j][2].y);
}

template <class Exchange>
__device__ __forceinline__ void partner_state(const Exchange& ex, int j, double (&x)[3], double (&v)[3]) {
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

// One body's thread's share of the monitors (driver.hpp's monitor_status, split by body): it
// publishes its star distance^2, tests its own body and its share of the pairs (PairSchedule), and
// returns the flags of the whole system. rp, rv: this body's star-relative state (0 for the
// star); partner_rp(j, rp_j): body j's star-relative position; own_flags: flags the scheme set
// (kFlagKeplerFailure). Every lane of the warp calls it.
constexpr unsigned kFlagKeplerFailure = 16u;
template <int N, class Exchange, class PartnerRp>
__device__ __forceinline__ unsigned body_monitor_flags(Exchange& ex, int self, bool active, const double (&rp)[3],
                                                       const double (&rv)[3], unsigned own_flags, const StepParams& p,
                                                       const MonitorParams& m, PartnerRp&& partner_rp) {
  double r2 = 0.0;
  if (self > 0) r2 = rp[0] * rp[0] + rp[1] * rp[1] + rp[2] * rp[2];
  if (active) ex.r2[self] = r2;
  __syncwarp();
  unsigned flags = own_flags;
  if (active) {
    const double m0 = ex.mass[0], m_self = ex.mass[self];
    if (self > 0) {
      if (!lane_isfinite(r2)) flags |= kFlagNonFinite;
      if (m.rmax > 0.0 && r2 > m.rmax * m.rmax) flags |= kFlagEjected;
      if (m.stop_on_unbound && unbound_outgoing(rp, rv, r2, m0, m_self, p.G)) flags |= kFlagEjected;
    }
    if (m.close_approach > 0.0 || m.collisions) {
      const double k2 = m.close_approach * m.close_approach;
      const double k6 = k2 * k2 * k2;
      const double nine_m0_squared = 9.0 * m0 * m0;
      for (int k = 1; k <= PairSchedule<N>::kRounds; ++k) {
        if (!PairSchedule<N>::has(self, k)) continue;
        const int j = PairSchedule<N>::partner(self, k);
        double rpj[3];
        partner_rp(j, rpj);
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
  unsigned all_flags = 0;
  if (active) {
#pragma unroll
    for (int k = 0; k < N; ++k) all_flags |= ex.flags[k];
  }
  return all_flags;
}

// The driver's status after the monitors (integrate_lanes: monitors, then a failed Kepler solve,
// then a stalled clock), then (settle_body_status) settle_status.
__device__ __forceinline__ double body_status_code(unsigned all_flags, bool stalled) {
  double code = status_from_flags(all_flags);
  if (all_flags & kFlagKeplerFailure) code = kStatusKeplerFailure;
  if (stalled) code = kStatusStepUnderflow;
  return code;
}
template <int N>
__device__ __forceinline__ void settle_body_status(LoopState<N, double>& ls, unsigned all_flags, bool stalled,
                                                   double t_end, const MonitorParams& m) {
  ls.code = body_status_code(all_flags, stalled);
  settle_status(ls, t_end, m);
}

// What the MVS, leapfrog and RKCK body threads exchange (one type for the three; leapfrog needs
// only BodyExchange's part, RKCK also `term`): BodyExchange's state and per-body values, and two
// more vectors per body (MVS Jacobi kick: inertial positions, then inertial accelerations; the
// monitors: star-relative positions).
template <int N>
struct VectorExchange {
  double2 state[N][3];
  double vec[N][3];
  double acc[N][3];
  double term[N];  // rkck: each body's error term
  double r2[N];
  double mass[N];
  double radius[N];
  unsigned flags[N];
};

template <int N>
__device__ __forceinline__ void publish_vector(double (&dst)[N][3], int self, const double (&x)[3]) {
  dst[self][0] = x[0];
  dst[self][1] = x[1];
  dst[self][2] = x[2];
}

// A thread's place: its system, its body (self), and whether it has one (member).
template <int N>
struct BodyThread {
  static constexpr int kGroups = 32 / N;
  static constexpr int kWarps = kCudaBlock / 32;
  int warp, group, self;
  long system, chunk;
  int slot;
  bool member;
  __device__ BodyThread(long num_slots) {
    warp = threadIdx.x / 32;
    const int lane = threadIdx.x % 32;
    group = lane / N < kGroups ? lane / N : kGroups - 1;
    self = lane - group * N;
    system = (static_cast<long>(blockIdx.x) * kWarps + warp) * kGroups + group;
    // Lanes past the last whole group, and groups past the last system, only keep the warp's
    // barriers company.
    member = lane < kGroups * N && system < num_slots;
    chunk = system / kChunk;
    slot = static_cast<int>(system % kChunk);
  }
  __device__ double body(const EnsembleView& view, int field, int k) const {
    return view.bodies[body_offset(chunk, field, k, slot, N)];
  }
  __device__ void load_clock(const EnsembleView& view, Clock<double>& c) const {
    c.time = view.clocks[clock_offset(chunk, kClockTime, slot)];
    c.time_step = view.clocks[clock_offset(chunk, kClockTimeStep, slot)];
    c.status = view.clocks[clock_offset(chunk, kClockStatus, slot)];
    c.steps = view.clocks[clock_offset(chunk, kClockSteps, slot)];
  }
  // Body self's state, its mass and radius (into the exchange, for the others), and the clock;
  // after the warp's barrier, G m_j of every body (the force loops' constants). Threads without
  // a body get harmless values (mass 1) and stay inactive.
  template <class Exchange>
  __device__ void load(const EnsembleView& view, Exchange& ex, const StepParams& p, double (&x)[3], double (&v)[3],
                       Clock<double>& c, double (&gm)[N]) const {
    c = Clock<double>{0.0, 0.0, 1.0, 0.0};
    if (member) {
      for (int d = 0; d < 3; ++d) {
        x[d] = body(view, kFieldX + d, self);
        v[d] = body(view, kFieldVx + d, self);
      }
      ex.mass[self] = body(view, kFieldMass, self);
      ex.radius[self] = body(view, kFieldRadius, self);
      load_clock(view, c);
    }
    __syncwarp();
#pragma unroll
    for (int j = 0; j < N; ++j) gm[j] = p.G * (member ? ex.mass[j] : 1.0);
  }
  // The status alone (body 0's thread), of a system that did not run but whose observer settled it.
  __device__ void store_status(const EnsembleView& view, double status) const {
    if (member && self == 0) view.clocks[clock_offset(chunk, kClockStatus, slot)] = status;
  }
  // Body self's state, and (body 0's thread) the clock, of a system that ran.
  __device__ void store(const EnsembleView& view, const double (&x)[3], const double (&v)[3],
                        const Clock<double>& c) const {
    for (int d = 0; d < 3; ++d) {
      view.bodies[body_offset(chunk, kFieldX + d, self, slot, N)] = x[d];
      view.bodies[body_offset(chunk, kFieldVx + d, self, slot, N)] = v[d];
    }
    if (self == 0) {
      view.clocks[clock_offset(chunk, kClockTime, slot)] = c.time;
      view.clocks[clock_offset(chunk, kClockTimeStep, slot)] = c.time_step;
      view.clocks[clock_offset(chunk, kClockStatus, slot)] = c.status;
      view.clocks[clock_offset(chunk, kClockSteps, slot)] = c.steps;
    }
  }
};

// What every thread-per-body kernel shares: the thread's place, its system's exchange in shared
// memory, the driver's loop state, and the exchange's steps between the warp's barriers.
template <int N, class Exchange>
struct BodyFrame {
  using Thread = BodyThread<N>;
  static constexpr unsigned kAll = 0xffffffffu;
  const Thread th;
  const int self;
  Exchange& ex;
  LoopState<N, double> ls;
  bool started = false;
  __device__ BodyFrame(Exchange (&exchange)[Thread::kWarps][Thread::kGroups], long num_slots)
      : th(num_slots), self(th.self), ex(exchange[th.warp][th.group]) {}
  // Body self's state, the clock and G m_j (BodyThread::load).
  __device__ void load(const EnsembleView& view, const StepParams& p, double (&x)[3], double (&v)[3], double (&gm)[N]) {
    th.load(view, ex, p, x, v, ls.clock, gm);
  }
  // The system runs while its status is 0 and its time short of t_end.
  __device__ void start(double t_end) {
    ls.time_carry = 0.0;
    ls.active = th.member && ls.clock.status == 0.0 && ls.clock.time < t_end;
    started = ls.active;
  }
  __device__ bool any_active() const { return __any_sync(kAll, ls.active); }
  // Publishes this body's pair of vectors (state, or a stage's) for the others, between barriers.
  __device__ void publish_pair(const double (&a)[3], const double (&b)[3]) {
    __syncwarp();
    if (ls.active) publish(ex, self, a, b);
    __syncwarp();
  }
  __device__ void partner_position(int j, double (&xj)[3]) const {
    double vj[3];
    partner_state(ex, j, xj, vj);
  }
  // Body self's state and the clock of a system that ran, with the step to store.
  __device__ void finish(const EnsembleView& view, double time_step, const double (&x)[3], const double (&v)[3]) {
    if (!started) return;
    ls.clock.time_step = time_step;
    th.store(view, x, v, ls.clock);
  }
};

// The monitors of a scheme that keeps inertial coordinates (Hermite, leapfrog, RKCK): publish the
// state reached, take the star-relative state from the star's published one, and return the
// system's flags (body_monitor_flags).
template <int N, class Exchange>
__device__ __forceinline__ unsigned inertial_monitor_flags(Exchange& ex, int self, bool active, const double (&x)[3],
                                                           const double (&v)[3], const StepParams& p,
                                                           const MonitorParams& m) {
  __syncwarp();
  if (active) publish(ex, self, x, v);
  __syncwarp();
  double rp[3], rv[3], star_x[3], star_v[3];
  partner_state(ex, 0, star_x, star_v);
  for (int d = 0; d < 3; ++d) {
    rp[d] = x[d] - star_x[d];
    rv[d] = v[d] - star_v[d];
  }
  return body_monitor_flags<N>(ex, self, active, rp, rv, 0u, p, m, [&](int j, double(&rpj)[3]) {
    double xj[3], vj[3];
    partner_state(ex, j, xj, vj);
    for (int d = 0; d < 3; ++d) rpj[d] = xj[d] - star_x[d];
  });
}

// One thread's body: position, velocity, acceleration, jerk and (HermiteAdaptive) the
// compensation terms of the position and velocity sums.
struct BodyState {
  double x[3], v[3], acc[3], jerk[3], comp_x[3], comp_v[3];
};

// kAdaptive: HermiteAdaptive (time-symmetrised step, compensated sums), else Hermite.
template <int N, bool kAdaptive>
__global__ void __launch_bounds__(kCudaBlock, kHermiteBodyMinBlocks)
    hermite_body_kernel(EnsembleView view, long num_slots, double t_end, StepParams p, MonitorParams m) {
  __shared__ BodyExchange<N> exchange[BodyThread<N>::kWarps][BodyThread<N>::kGroups];
  BodyFrame<N, BodyExchange<N>> f(exchange, num_slots);
  const int self = f.self;
  BodyExchange<N>& ex = f.ex;
  LoopState<N, double>& ls = f.ls;
  BodyState s = {};
  double gm[N];
  f.load(view, p, s.x, s.v, gm);
  f.start(t_end);
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

  while (f.any_active()) {
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
      f.publish_pair(s.x, s.v);
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

    // Monitors on the state reached, from every body's star-relative position.
    const unsigned all_flags = inertial_monitor_flags<N>(ex, self, ls.active, s.x, s.v, p, m);
    if (ls.active) settle_body_status(ls, all_flags, stalled, t_end, m);
  }
  f.finish(view, kAdaptive ? ls.h_next : p.time_step, s.x, s.v);
}

// What the MVS body kernel shows its observer after each step (every thread of the warp, at the
// same point: the observer may use the warp's barriers): the exchange with this step's state
// published (Jacobi vectors, the centre of mass in slot 0), this thread's body, whether its system
// is running, the body's Jacobi position and velocity, the acceleration of the step's kick, its
// state relative to the star, the pending Kepler drift (Mvs::Work::pending), the step and the time
// reached.
template <int N>
struct MvsBodyStep {
  const VectorExchange<N>& ex;
  int self;
  bool active;
  const double (&x)[3];
  const double (&v)[3];
  const double (&kick_acc)[3];
  const double (&rp)[3];
  const double (&rv)[3];
  double pending, h, t_new;
  const StepParams& p;
};

// A body kernel's observer, for each thread: constructed from the policy's Params and the
// thread's place (BodyThread); start(active, rp, rv) before the first step, with the body's
// star-relative state; after_step(MvsBodyStep, code) after each step's monitors, which may set the
// status `code` of a running system; finish(status) at the end, the status to store. None here.
struct NoBodyObserver {
  static constexpr bool kActive = false;
  struct Params {};
  template <int N>
  __device__ NoBodyObserver(const Params&, const BodyThread<N>&) {}
};

// An observation policy's thread-per-body observer, where it has one: a specialisation with
// kExists = true and Observer<N>, beside the policy's CUDA code (models/: the likelihood's), seen by
// the compilation units that instantiate its launches.
template <class Observation>
struct BodyObservation {
  static constexpr bool kExists = false;
};

// MVS with a thread per body (mvs.hpp, every splitting, democratic heliocentric or Jacobi
// coordinates, with or without correctors), for the systems whose state does not fit one thread.
// Each thread drifts its
// own planet on its Kepler orbit (kepler_drift: the result kepler_drift_bodies gives that planet),
// computes its own kick from the others' published positions (acceleration_of, in the pair loop's
// order), and forms the O(n) sums of the jump, of the Jacobi transforms and of the star-relative
// state from the published vectors with mvs.hpp's per-body functions (planet_sum, jumped,
// inner_centre, jacobi_kick, outer_centre, ...), in the order mvs.hpp adds them and with its
// explicit FMAs; so a system comes out bitwise as from integrate_lanes()
// (tests/integrators/test_gpu.cpp). begin() and end() (coordinate changes, correctors), once per
// launch, run the whole system's mvs.hpp functions in every thread.
//
// An observer (Obs: NoBodyObserver above says what one is) sees the state after every step.
template <int N, class Obs>
__device__ __forceinline__ void mvs_body_run(const EnsembleView& view, long num_slots, double t_end,
                                             const StepParams& p, const MonitorParams& m,
                                             const typename Obs::Params& params) {
  using S = Mvs<N, double>;
  __shared__ VectorExchange<N> exchange[BodyThread<N>::kWarps][BodyThread<N>::kGroups];
  BodyFrame<N, VectorExchange<N>> f(exchange, num_slots);
  const auto& th = f.th;
  const int self = f.self;
  VectorExchange<N>& ex = f.ex;
  LoopState<N, double>& ls = f.ls;
  const bool democratic = p.mvs_coordinates == MvsCoordinates::kDemocraticHeliocentric;

  // begin() below replaces x and v with the scheme's coordinates of this body.
  double x[3] = {0.0, 0.0, 0.0}, v[3] = {0.0, 0.0, 0.0}, gm[N];
  f.load(view, p, x, v, gm);
  // Loop invariants: the Jacobi fractions m_i / M_i (M_i = m_0 + ... + m_i) and this body's
  // 1 / M_{self-1}, M_self, as mvs.hpp forms them.
  double fraction[N];
  double msum = th.member ? ex.mass[0] : 1.0, m_inner = 1.0, m_through = 1.0;
  fraction[0] = 0.0;
#pragma unroll
  for (int j = 1; j < N; ++j) {
    const double inner = msum;
    msum = msum + (th.member ? ex.mass[j] : 1.0);
    fraction[j] = S::jacobi_fraction(th.member ? ex.mass[j] : 1.0, msum);
    if (j == self) {
      m_inner = inner;
      m_through = msum;
    }
  }
  const double inv_m_inner = 1.0 / m_inner;
  f.start(t_end);
  const bool started = f.started;

  // begin: the whole system's S::begin, in every thread of the system.
  double mu = 0.0, pending = 0.0;
  if (started) {
    Bodies<N, double> full;
    for (int k = 0; k < N; ++k) {
      for (int d = 0; d < 3; ++d) {
        full.pos[k][d] = th.body(view, kFieldX + d, k);
        full.vel[k][d] = th.body(view, kFieldVx + d, k);
      }
      full.mass[k] = ex.mass[k];
    }
    typename S::Work w;
    S::begin(full, w, p, ls.h_next);
    for (int d = 0; d < 3; ++d) {
      x[d] = full.pos[self][d];
      v[d] = full.vel[self][d];
    }
    mu = w.kepler_mu[self];
  }
  ls.step_limit = ls.clock.steps + m.max_steps;
  auto partner_x = [&](int j, double(&xj)[3]) { f.partner_position(j, xj); };
  auto publish_state = [&]() { f.publish_pair(x, v); };

  // The operators (Mvs::kepler, jump, kick), each on this thread's body.
  auto kepler = [&](double tau) {
    unsigned flags = 0;
    if (ls.active) {
      if (self > 0) {
        if (!kepler_drift(x, v, mu, tau)) flags = kFlagKeplerFailure;
      } else {
        for (int d = 0; d < 3; ++d) x[d] = S::advanced(x[d], tau, v[d]);  // centre of mass
      }
    }
    return flags;
  };
  auto jump = [&](double tau) {
    if (!democratic) return;  // Jacobi coordinates have no jump term
    publish_state();
    if (!ls.active) return;
    const double tau_m0 = S::jump_factor(tau, ex.mass[0]);
#pragma unroll
    for (int d = 0; d < 3; ++d) {
      const double mv = S::template planet_sum<true>(ex.mass, [&](int i) { return partner_velocity(ex, i, d); });
      if (self > 0) x[d] = S::jumped(x[d], tau_m0, mv);
    }
  };
  // kept: the acceleration of the kick (Mvs::Work::kick_acc, for the observers' dense outputs).
  auto kick = [&](double tau, double(&kept)[3]) {
    publish_state();
    double acc[3] = {0.0, 0.0, 0.0};
    if (democratic) {
      if (ls.active && self > 0) acceleration_of<N, 1>(self, x, gm, partner_x, acc);
    } else {
      // Mvs::perturbation: this body's inertial position (jacobi_to_inertial), its inertial
      // acceleration, then a_i - A_{i-1} + the Kepler term, with A_{i-1} from the inner bodies'.
      double xin[3], a[3];
      if (ls.active) {
        double rx[3], v0[3];
        partner_state(ex, 0, rx, v0);
#pragma unroll
        for (int i = N - 1; i >= 1; --i) {
          if (i < self) break;
          double xi[3], vi[3];
          partner_state(ex, i, xi, vi);
          for (int d = 0; d < 3; ++d) {
            rx[d] = S::inner_centre(rx[d], fraction[i], xi[d]);
            if (i == self) xin[d] = xi[d] + rx[d];
          }
        }
        if (self == 0)
          for (int d = 0; d < 3; ++d) xin[d] = rx[d];
        publish_vector(ex.vec, self, xin);
      }
      __syncwarp();
      if (ls.active) {
        acceleration_of<N>(
            self, xin, gm,
            [&](int j, double(&xj)[3]) {
              for (int d = 0; d < 3; ++d) xj[d] = ex.vec[j][d];
            },
            a);
        publish_vector(ex.acc, self, a);
      }
      __syncwarp();
      if (ls.active && self > 0) {
        double ca[3] = {ex.mass[0] * ex.acc[0][0], ex.mass[0] * ex.acc[0][1], ex.mass[0] * ex.acc[0][2]};
#pragma unroll
        for (int k = 1; k < N; ++k) {
          if (k >= self) break;
          for (int d = 0; d < 3; ++d) ca[d] = S::inner_moment(ca[d], ex.mass[k], ex.acc[k][d]);
        }
        const double kepler = S::kepler_term(double(p.G * ex.mass[0]), m_through, inv_m_inner, x);
        for (int d = 0; d < 3; ++d) acc[d] = S::jacobi_kick(a[d], ca[d], inv_m_inner, kepler, x[d]);
      }
    }
    if (ls.active && self > 0)
      for (int d = 0; d < 3; ++d) v[d] = S::advanced(v[d], tau, acc[d]);
    for (int d = 0; d < 3; ++d) kept[d] = acc[d];
  };
  // This body's state relative to the star (Mvs::star_relative) from the published state.
  auto star_relative_state = [&](double(&rp)[3], double(&rv)[3]) {
    for (int d = 0; d < 3; ++d) rp[d] = rv[d] = 0.0;
    if (!ls.active || self == 0) return;
    if (democratic) {
      const double inv_m0 = 1.0 / ex.mass[0];
      for (int d = 0; d < 3; ++d) {
        const double mv = S::template planet_sum<true>(ex.mass, [&](int i) { return partner_velocity(ex, i, d); });
        rp[d] = x[d];
        rv[d] = S::star_relative_velocity(v[d], mv, inv_m0);
      }
    } else {
      double sx[3] = {0.0, 0.0, 0.0}, sv[3] = {0.0, 0.0, 0.0};
#pragma unroll
      for (int i = 1; i < N; ++i) {
        if (i >= self) break;
        double xi[3], vi[3];
        partner_state(ex, i, xi, vi);
        for (int d = 0; d < 3; ++d) {
          sx[d] = S::outer_centre(sx[d], fraction[i], xi[d]);
          sv[d] = S::outer_centre(sv[d], fraction[i], vi[d]);
        }
      }
      for (int d = 0; d < 3; ++d) {
        rp[d] = x[d] + sx[d];
        rv[d] = v[d] + sv[d];
      }
    }
  };
  Obs observer(params, th);
  if constexpr (Obs::kActive) {
    publish_state();
    double rp[3], rv[3];
    star_relative_state(rp, rv);
    observer.start(ls.active, rp, rv);
  }
  double kick_acc[3] = {0.0, 0.0, 0.0}, scratch[3];

  while (f.any_active()) {
    bool last = false;
    double h = 0.0;
    if (ls.active) h = step_to_take(ls, t_end, last);
    const double half = 0.5 * h;
    const double opening = pending + half;
    unsigned flags = 0;
    switch (p.mvs_splitting) {  // Mvs::step
      case MvsSplitting::kKeplerJumpKick:
        flags = kepler(opening);
        jump(half);
        kick(h, kick_acc);
        jump(half);
        break;
      case MvsSplitting::kKickJumpKepler:
        kick(opening, scratch);
        jump(half);
        flags = kepler(h);
        jump(half);
        break;
      default:
        jump(opening);
        kick(half, scratch);
        flags = kepler(h);
        kick(half, scratch);
        break;
    }
    if (ls.active) pending = half;
    const bool stalled = ls.active && advance_clock(ls, h, last, true, t_end);

    // Monitors on Mvs::star_relative of the state reached.
    publish_state();
    double rp[3], rv[3];
    star_relative_state(rp, rv);
    if (ls.active) publish_vector(ex.vec, self, rp);
    __syncwarp();
    const unsigned all_flags =
        body_monitor_flags<N>(ex, self, ls.active, rp, rv, flags, p, m, [&](int j, double(&rpj)[3]) {
          for (int d = 0; d < 3; ++d) rpj[d] = ex.vec[j][d];
        });
    if (ls.active) ls.code = body_status_code(all_flags, stalled);
    if constexpr (Obs::kActive)
      observer.after_step(MvsBodyStep<N>{ex, self, ls.active, x, v, kick_acc, rp, rv, pending, h, ls.clock.time, p},
                          ls.code);
    if (ls.active) settle_status(ls, t_end, m);
  }

  // end: the pending operator on each body (Mvs::end), then the whole system's coordinate change
  // (correctors, back to inertial: Mvs::to_inertial) in every thread.
  ls.active = started;
  switch (p.mvs_splitting) {
    case MvsSplitting::kKeplerJumpKick: kepler(pending); break;
    case MvsSplitting::kKickJumpKepler: kick(pending, scratch); break;
    default: jump(pending); break;
  }
  __syncwarp();
  if (started) publish(ex, self, x, v);
  __syncwarp();
  if (started) {
    Bodies<N, double> full;
    for (int k = 0; k < N; ++k) {
      partner_state(ex, k, full.pos[k], full.vel[k]);
      full.mass[k] = ex.mass[k];
    }
    S::to_inertial(full, p);
    for (int d = 0; d < 3; ++d) {
      x[d] = full.pos[self][d];
      v[d] = full.vel[self][d];
    }
  }
  if constexpr (Obs::kActive) {
    ls.clock.status = observer.finish(ls.clock.status);
    if (!started) th.store_status(view, ls.clock.status);
  }
  f.finish(view, p.time_step, x, v);
}

template <int N>
__global__ void __launch_bounds__(kCudaBlock, kMvsBodyMinBlocks)
    mvs_body_kernel(EnsembleView view, long num_slots, double t_end, StepParams p, MonitorParams m) {
  mvs_body_run<N, NoBodyObserver>(view, num_slots, t_end, p, m, NoBodyObserver::Params{});
}

// The same with an observation policy's body observer (BodyObservation above).
template <int N, class Obs>
__global__ void __launch_bounds__(kCudaBlock, kMvsBodyMinBlocks)
    mvs_observed_body_kernel(EnsembleView view, long num_slots, double t_end, const __grid_constant__ StepParams p,
                             const __grid_constant__ MonitorParams m,
                             const __grid_constant__ typename Obs::Params params) {
  mvs_body_run<N, Obs>(view, num_slots, t_end, p, m, params);
}

// Leapfrog (leapfrog.hpp) with a thread per body: Leapfrog::kick_drift, this body's acceleration
// from the others' published positions (acceleration_of), Leapfrog::kick; monitors as the Hermite
// body kernel's.
template <int N>
__global__ void __launch_bounds__(kCudaBlock, kLeapfrogBodyMinBlocks)
    leapfrog_body_kernel(EnsembleView view, long num_slots, double t_end, StepParams p, MonitorParams m) {
  __shared__ VectorExchange<N> exchange[BodyThread<N>::kWarps][BodyThread<N>::kGroups];
  BodyFrame<N, VectorExchange<N>> f(exchange, num_slots);
  const int self = f.self;
  VectorExchange<N>& ex = f.ex;
  LoopState<N, double>& ls = f.ls;
  double x[3] = {0.0, 0.0, 0.0}, v[3] = {0.0, 0.0, 0.0}, acc[3] = {0.0, 0.0, 0.0}, gm[N];
  f.load(view, p, x, v, gm);
  f.start(t_end);
  auto partner_x = [&](int j, double(&xj)[3]) { f.partner_position(j, xj); };
  f.publish_pair(x, v);
  if (ls.active) acceleration_of<N>(self, x, gm, partner_x, acc);  // Leapfrog::begin
  ls.h_next = p.time_step;
  ls.step_limit = ls.clock.steps + m.max_steps;

  while (f.any_active()) {
    bool last = false;
    double h = 0.0;
    if (ls.active) {
      h = step_to_take(ls, t_end, last);
      Leapfrog<N, double>::kick_drift(x, v, acc, h, 0.5 * h);
    }
    f.publish_pair(x, v);
    if (ls.active) {
      acceleration_of<N>(self, x, gm, partner_x, acc);
      Leapfrog<N, double>::kick(v, acc, 0.5 * h);
    }
    const bool stalled = ls.active && advance_clock(ls, h, last, true, t_end);
    const unsigned all_flags = inertial_monitor_flags<N>(ex, self, ls.active, x, v, p, m);
    if (ls.active) settle_body_status(ls, all_flags, stalled, t_end, m);
  }
  f.finish(view, p.time_step, x, v);
}

// Runge-Kutta-Cash-Karp (rkck.hpp, fixed or adaptive step) with a thread per body: each stage's
// state of this body (Rkck::body_stage_state), its acceleration from the others' published stage
// positions, the compensated update and error term of this body (Rkck::body_update), the
// system's error as the max over its bodies in body order, then Rkck::control in every thread.
template <int N>
__global__ void __launch_bounds__(kCudaBlock, kRkckBodyMinBlocks)
    rkck_body_kernel(EnsembleView view, long num_slots, double t_end, StepParams p, MonitorParams m) {
  using R = Rkck<N, double>;
  __shared__ VectorExchange<N> exchange[BodyThread<N>::kWarps][BodyThread<N>::kGroups];
  BodyFrame<N, VectorExchange<N>> f(exchange, num_slots);
  const int self = f.self;
  VectorExchange<N>& ex = f.ex;
  LoopState<N, double>& ls = f.ls;
  double x[3] = {0.0, 0.0, 0.0}, v[3] = {0.0, 0.0, 0.0}, acc[3] = {0.0, 0.0, 0.0}, gm[N];
  double comp_x[3] = {0.0, 0.0, 0.0}, comp_v[3] = {0.0, 0.0, 0.0};
  f.load(view, p, x, v, gm);
  f.start(t_end);
  auto partner_x = [&](int j, double(&xj)[3]) { f.partner_position(j, xj); };
  auto publish_pair = [&](const double(&a)[3], const double(&b)[3]) { f.publish_pair(a, b); };
  publish_pair(x, v);
  if (ls.active) acceleration_of<N>(self, x, gm, partner_x, acc);  // Rkck::begin
  ls.h_next = p.time_step;
  if (p.adaptive && ls.clock.time_step > 0.0) ls.h_next = ls.clock.time_step;
  ls.step_limit = ls.clock.steps + m.max_steps;

  while (f.any_active()) {
    bool last = false;
    double h = 0.0;
    if (ls.active) h = step_to_take(ls, t_end, last);
    const typename R::Tableau t = R::tableau();
    double kx[6][3], kv[6][3];
    for (int d = 0; d < 3; ++d) {
      kx[0][d] = v[d];
      kv[0][d] = acc[d];
    }
    auto stage = [&](auto stage_index) {
      constexpr int S = decltype(stage_index)::value;
      double xs[3] = {0.0, 0.0, 0.0}, vs[3] = {0.0, 0.0, 0.0};
      if (ls.active) R::template body_stage_state<S>(x, v, kx, kv, t.row[S - 1], h, xs, vs);
      publish_pair(xs, vs);
      if (ls.active) acceleration_of<N>(self, xs, gm, partner_x, kv[S]);
      for (int d = 0; d < 3; ++d) kx[S][d] = vs[d];
    };
    stage(std::integral_constant<int, 1>{});
    stage(std::integral_constant<int, 2>{});
    stage(std::integral_constant<int, 3>{});
    stage(std::integral_constant<int, 4>{});
    stage(std::integral_constant<int, 5>{});
    double xn[3] = {0.0, 0.0, 0.0}, vn[3] = {0.0, 0.0, 0.0}, cx[3], cv[3];
    for (int d = 0; d < 3; ++d) {
      cx[d] = comp_x[d];
      cv[d] = comp_v[d];
    }
    if (ls.active) ex.term[self] = R::body_update(x, v, acc, kx, kv, h, xn, vn, cx, cv);
    __syncwarp();
    bool accepted = true;
    if (ls.active) {
      double err = 0.0;
#pragma unroll
      for (int k = 0; k < N; ++k) err = lane_max(err, ex.term[k]);
      R::control(err, h, p, ls.h_next, accepted);
    }
    publish_pair(xn, vn);
    if (ls.active) {
      double acc_new[3];
      acceleration_of<N>(self, xn, gm, partner_x, acc_new);
      if (accepted) {
        for (int d = 0; d < 3; ++d) {
          x[d] = xn[d];
          v[d] = vn[d];
          comp_x[d] = cx[d];
          comp_v[d] = cv[d];
          acc[d] = acc_new[d];
        }
      }
    }
    const bool stalled = ls.active && advance_clock(ls, h, last, accepted, t_end);
    const unsigned all_flags = inertial_monitor_flags<N>(ex, self, ls.active, x, v, p, m);
    if (ls.active) settle_body_status(ls, all_flags, stalled, t_end, m);
  }
  f.finish(view, p.adaptive ? ls.h_next : p.time_step, x, v);
}

// Whether a launch with an observer runs the MVS body kernel (for a policy with a body observer):
// the coordinates and splitting its dense outputs need (Jacobi, Kepler drift outermost:
// Mvs::dense_states) and layout = body. The policy's host code resolves auto before it launches
// (models: likelihood_cuda.cu, from the batch's size); here auto is a thread per system.
inline bool observed_body_layout(const RunRequest& r) {
  return r.step.mvs_coordinates == MvsCoordinates::kJacobi && r.step.mvs_splitting == MvsSplitting::kKeplerJumpKick &&
         r.cuda_layout == CudaLayout::kThreadPerBody;
}

// Launch geometry of the thread-per-body kernels: floor(32 / n) systems per warp.
template <int N>
unsigned body_kernel_grid(const EnsembleView& view) {
  constexpr int per_block = (kCudaBlock / 32) * (32 / N);
  const long slots = view.num_chunks * kChunk;
  return static_cast<unsigned>((slots + per_block - 1) / per_block);
}

using BodyKernel = void (*)(EnsembleView, long, double, StepParams, MonitorParams);

// The thread-per-body kernel of a scheme for N bodies (nullptr: the scheme has none).
template <template <int, class> class Scheme, int N>
constexpr BodyKernel body_kernel() {
  using S = Scheme<N, double>;
  if constexpr (std::is_same_v<S, Hermite<N, double>>) return hermite_body_kernel<N, false>;
  if constexpr (std::is_same_v<S, HermiteAdaptive<N, double>>) return hermite_body_kernel<N, true>;
  if constexpr (std::is_same_v<S, Mvs<N, double>>) return mvs_body_kernel<N>;
  if constexpr (std::is_same_v<S, Rkck<N, double>>) return rkck_body_kernel<N>;
  if constexpr (std::is_same_v<S, Leapfrog<N, double>>) return leapfrog_body_kernel<N>;
  return nullptr;
}

// Which schemes have a thread-per-body kernel, and from how many bodies kAuto takes it: where B2
// measured it faster than a thread per system (bench/RESULTS.md run 11, each layout and scheme on
// the H100), from 9 bodies, and from 6 for rkck (six stages' derivatives). A scheme without one
// always runs a thread per system.
template <template <int, class> class Scheme>
struct BodyKernels {
  static constexpr bool kExists = body_kernel<Scheme, 2>() != nullptr;
  static constexpr int kFrom = std::is_same_v<Scheme<2, double>, Rkck<2, double>> ? 6 : 9;
  static bool chosen(int num_bodies, CudaLayout layout) {
    if (!kExists || layout == CudaLayout::kThreadPerSystem) return false;
    return layout == CudaLayout::kThreadPerBody || num_bodies >= kFrom;
  }
  static void launch(EnsembleView view, const RunRequest& r) {
    dispatch_bodies(view.num_bodies, [&](auto n) {
      constexpr int N = decltype(n)::value;
      constexpr BodyKernel kernel = body_kernel<Scheme, N>();
      if constexpr (kernel != nullptr)
        kernel<<<body_kernel_grid<N>(view), kCudaBlock, 0, static_cast<cudaStream_t>(r.cuda_stream)>>>(
            view, view.num_chunks * kChunk, r.destination_time, r.step, r.monitors);
    });
    SWARMFIT_CUDA_CHECK(cudaGetLastError());
  }
};

}  // namespace SWARMFIT_KERNELS
}  // namespace swarmfit
