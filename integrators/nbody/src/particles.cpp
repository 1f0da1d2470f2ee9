// Test particles through a recorded field (particles.hpp): the tape and the CPU backend.
#include "swarmfit/nbody/particles.hpp"

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <stdexcept>

namespace swarmfit::nbody {

namespace {
void append_state(std::vector<double>& out, const BodyState& b) {
  for (const double* f : {b.x, b.v, b.a, b.j, b.s, b.c}) out.insert(out.end(), f, f + 3);
}
}  // namespace

void ParticleTape::start(const BlockHermite& engine) {
  const Bodies& b = engine.bodies();
  const long m = b.num_massive;
  body_time_.assign(m, {});
  body_state_.assign(m, {});
  gm_.resize(m);
  for (long k = 0; k < m; ++k) {
    if (b.time[k] != engine.time()) throw std::logic_error("ParticleTape::start: the massive bodies are not together");
    gm_[k] = engine.settings().G * b.mass[k];
    body_time_[k].push_back(b.time[k]);
    append_state(body_state_[k], b.state[k]);
  }
  flat_ = false;
}

void ParticleTape::record(const BlockHermite& engine) {
  const Bodies& b = engine.bodies();
  for (int i : engine.last_active()) {
    if (i >= b.num_massive) break;  // index order: the massive bodies come first
    body_time_[i].push_back(b.time[i]);
    append_state(body_state_[i], b.state[i]);
  }
  flat_ = false;
}

void ParticleTape::flatten() const {
  if (flat_) return;
  time_.clear();
  state_.clear();
  offset_.assign(1, 0);
  for (std::size_t k = 0; k < body_time_.size(); ++k) {
    time_.insert(time_.end(), body_time_[k].begin(), body_time_[k].end());
    state_.insert(state_.end(), body_state_[k].begin(), body_state_[k].end());
    offset_.push_back(static_cast<int>(time_.size()));
  }
  flat_ = true;
}

TapeView ParticleTape::view() const {
  flatten();
  return TapeView{time_.data(), state_.data(), offset_.data(), gm_.data(), static_cast<int>(gm_.size())};
}

Particles Particles::from(const Bodies& b) {
  Particles p;
  for (long i = b.num_massive; i < b.size(); ++i) {
    if (!(b.step[i] > 0)) throw std::invalid_argument("Particles::from: the bodies have no steps (initialise first)");
    p.state.push_back(b.state[i]);
    p.time.push_back(b.time[i]);
    p.step.push_back(b.step[i]);
    p.id.push_back(b.id[i]);
  }
  p.steps.assign(p.state.size(), 0.0);
  p.status.assign(p.state.size(), kParticleAlive);
  return p;
}

Bodies massive_only(const Bodies& b) {
  Bodies m;
  m.resize(b.num_massive);
  m.num_massive = b.num_massive;
  std::copy(b.mass.begin(), b.mass.begin() + b.num_massive, m.mass.begin());
  std::copy(b.state.begin(), b.state.begin() + b.num_massive, m.state.begin());
  std::copy(b.time.begin(), b.time.begin() + b.num_massive, m.time.begin());
  std::copy(b.step.begin(), b.step.begin() + b.num_massive, m.step.begin());
  std::copy(b.id.begin(), b.id.begin() + b.num_massive, m.id.begin());
  return m;
}

void advance_with_tape(BlockHermite& massive, Particles& p, ParticleBackend& backend, double t_end, double chunk,
                       const ParticleRules& rules, TapeCounters* counters) {
  using clock = std::chrono::steady_clock;
  ParticleTape tape;
  while (massive.time() < t_end) {
    const double t1 = std::min(t_end, massive.time() + chunk);
    const auto c0 = clock::now();
    tape.start(massive);
    massive.run_until(t1, [&] { tape.record(massive); });
    const auto c1 = clock::now();
    backend.advance(p, tape, t1, massive.settings().order, rules);
    if (counters) {
      counters->massive_seconds += std::chrono::duration<double>(c1 - c0).count();
      counters->particle_seconds += std::chrono::duration<double>(clock::now() - c1).count();
      counters->tape_entries += static_cast<double>(tape.entries());
    }
  }
}

namespace {

class CpuParticles final : public ParticleBackend {
 public:
  explicit CpuParticles(int threads) : threads_(threads > 0 ? threads : omp_get_max_threads()) {}
  std::string name() const override { return "cpu"; }
  void advance(Particles& p, const ParticleTape& tape, double t1, int order, const ParticleRules& rules) override {
    const TapeView v = tape.view();
    const long n = p.size();
#pragma omp parallel num_threads(threads_)
    {
      std::vector<int> cursor(v.num_massive);
#pragma omp for schedule(dynamic, 64)
      for (long i = 0; i < n; ++i) {
        if (p.status[i] != kParticleAlive) continue;
        for (int m = 0; m < v.num_massive; ++m) cursor[m] = v.offset[m];
        p.status[i] =
            order == 6 ? advance_particle<6>(p.state[i], p.time[i], p.step[i], t1, v, rules, cursor.data(), p.steps[i])
                       : advance_particle<4>(p.state[i], p.time[i], p.step[i], t1, v, rules, cursor.data(), p.steps[i]);
      }
    }
  }

 private:
  int threads_;
};

}  // namespace

std::unique_ptr<ParticleBackend> make_cpu_particles(int threads) { return std::make_unique<CpuParticles>(threads); }

}  // namespace swarmfit::nbody
