// Test particles integrated apart from the massive bodies, in the field the massive bodies' block
// steps recorded (a "tape"). A massless particle changes nothing about the massive bodies, so the
// engine can integrate those first over an interval, keeping every state their block steps
// produced, and then advance each particle on its own block steps through that interval, alone:
// a thread a particle on the GPU, with no host work per particle step. The physics is the block
// engine's (hermite.hpp): at the end tn of a particle's step, each massive body is predicted to tn
// from its last recorded state before tn, which is the state the block-step engine predicts it
// from at block time tn; the pair terms, corrector, step criterion and block quantisation are the
// same functions. So a particle follows the same orbit as in the combined integration, to
// round-off (the sums over the massive bodies run in another order): the long Kuiper-belt
// integrations of Levison & Duncan (1993) and White (2019) need 1e5 particles over 1e6 years,
// where the combined engine's host work per particle step would take hours.
#pragma once

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "swarmfit/nbody/engine.hpp"
#include "swarmfit/nbody/hermite.hpp"

namespace swarmfit::nbody {

// The recorded states, flattened: body m's entries are offset[m] .. offset[m + 1] - 1, in time
// order, consecutive entries one step of that body apart; entry e: time[e] and the 18 fields
// x v a j s c at state[18 e ..].
struct TapeView {
  const double* time;
  const double* state;
  const int* offset;
  const double* gm;  // G m of each massive body
  int num_massive;
};

// Why a particle stopped (it stays where it stopped): 0 still integrated; 1 beyond r_max of body 0
// (the Sun: escaped); 2 inside r_min of body 0; 3 its step fell below min_step (a close encounter
// with a massive body; without softening the orbit cannot be followed further).
enum ParticleStatus : int { kParticleAlive = 0, kParticleEscaped = 1, kParticleInside = 2, kParticleEncounter = 3 };

struct ParticleRules {
  double eta = 0.0, eps2 = 0.0, max_step = 0.125, min_step = 0x1p-50;
  double r_min = 0.0, r_max = HUGE_VAL;  // removal distances from body 0
};

// Advances one particle (state b at time t, block step dt) to t1 (a multiple of max_step) through
// the tape. cursor[m] is the particle's last entry of massive body m (start: offset[m]); times only
// grow, so each entry is passed once. Returns the status; steps counts the particle's steps.
template <int Order>
SWARMFIT_HD int advance_particle(BodyState& b, double& t, double& dt, double t1, const TapeView& tape,
                                 const ParticleRules& rules, int* cursor, double& steps) {
  while (t < t1) {
    const double h = dt, tn = t + h;
    double xp[3], vp[3], ap[3];
    predict(b, h, xp, vp, ap);
    double s[kPairSums] = {};
    double sun[3] = {0, 0, 0};
    for (int m = 0; m < tape.num_massive; ++m) {
      int e = cursor[m];
      while (e + 1 < tape.offset[m + 1] && tape.time[e + 1] < tn) ++e;
      cursor[m] = e;
      BodyState q;
      const double* f = tape.state + 18 * static_cast<long>(e);
      for (int d = 0; d < 3; ++d) {
        q.x[d] = f[d];
        q.v[d] = f[3 + d];
        q.a[d] = f[6 + d];
        q.j[d] = f[9 + d];
        q.s[d] = f[12 + d];
        q.c[d] = f[15 + d];
      }
      double xm[3], vm[3], am[3];
      predict(q, tn - tape.time[e], xm, vm, am);
      if (m == 0)
        for (int d = 0; d < 3; ++d) sun[d] = xm[d];
      accumulate_pair<Order, false>(xm[0] - xp[0], xm[1] - xp[1], xm[2] - xp[2], vm[0] - vp[0], vm[1] - vp[1],
                                    vm[2] - vp[2], am[0] - ap[0], am[1] - ap[1], am[2] - ap[2], tape.gm[m], rules.eps2,
                                    false, s);
    }
    double f[10];
    finish_pair_sums<Order>(s, f);
    const double wanted = correct<Order>(b, h, f, f + 3, f + 6, rules.eta);
    t = tn;
    dt = quantise_step(wanted, h, tn, rules.max_step);
    steps += 1;
    const double r2 = (b.x[0] - sun[0]) * (b.x[0] - sun[0]) + (b.x[1] - sun[1]) * (b.x[1] - sun[1]) +
                      (b.x[2] - sun[2]) * (b.x[2] - sun[2]);
    if (r2 > rules.r_max * rules.r_max) return kParticleEscaped;
    if (r2 < rules.r_min * rules.r_min) return kParticleInside;
    if (dt < rules.min_step || wanted != wanted) return kParticleEncounter;
  }
  return kParticleAlive;
}

// The massive bodies' states over one interval, recorded from the engine.
class ParticleTape {
 public:
  // The interval starts: every massive body of `engine` is at engine.time().
  void start(const BlockHermite& engine);
  // After each block step: the corrected massive bodies' new states.
  void record(const BlockHermite& engine);
  TapeView view() const;
  std::size_t entries() const { return time_.size(); }

 private:
  void flatten() const;
  std::vector<std::vector<double>> body_time_, body_state_;
  std::vector<double> gm_;
  mutable std::vector<double> time_, state_;
  mutable std::vector<int> offset_;
  mutable bool flat_ = false;
};

// The particles: their states at their own times, steps, status and step counts.
struct Particles {
  std::vector<BodyState> state;
  std::vector<double> time, step, steps;
  std::vector<int> status;
  std::vector<std::int64_t> id;
  long size() const { return static_cast<long>(state.size()); }
  // The test particles of `b` (bodies num_massive ..), with their forces and first steps set (an
  // initialised or resumed engine's bodies).
  static Particles from(const Bodies& b);
};

// Advances every particle still integrated to t1 through the tape: CPU threads (each particle
// alone, so any thread count gives the same bits) or the GPU (one thread a particle).
class ParticleBackend {
 public:
  virtual ~ParticleBackend() = default;
  virtual std::string name() const = 0;
  virtual void advance(Particles& p, const ParticleTape& tape, double t1, int order, const ParticleRules& rules) = 0;
};
std::unique_ptr<ParticleBackend> make_cpu_particles(int threads = 0);
std::unique_ptr<ParticleBackend> make_cuda_particles();  // throws without CUDA or a device

// The massive bodies of `b` alone (an initialised engine's: their steps kept), for an engine that
// resumes from them while its particles go through the tape.
Bodies massive_only(const Bodies& b);

// Where the time of advance_with_tape went.
struct TapeCounters {
  double massive_seconds = 0, particle_seconds = 0, tape_entries = 0;
};

// Advances `massive` (an engine of massive bodies, at a multiple of max_step) and the particles to
// t_end, `chunk` (a multiple of max_step) at a time: the massive bodies' block steps recorded,
// then the particles through them.
void advance_with_tape(BlockHermite& massive, Particles& p, ParticleBackend& backend, double t_end, double chunk,
                       const ParticleRules& rules, TapeCounters* counters = nullptr);

}  // namespace swarmfit::nbody
