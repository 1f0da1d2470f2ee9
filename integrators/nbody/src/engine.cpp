#include "swarmfit/nbody/engine.hpp"

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <sstream>

namespace swarmfit::nbody {

void Bodies::resize(long n) {
  mass.resize(n);
  state.resize(n);
  time.resize(n);
  step.resize(n);
  id.resize(n);
}

void ForceResult::resize(int n, int order_) {
  order = order_;
  width = packed_width(order);
  packed.assign(static_cast<std::size_t>(n) * width, 0.0);
}

int host_threads(long count, double ns_per_item) {
  const double threads = static_cast<double>(count) * ns_per_item / 50e3;
  return static_cast<int>(std::clamp(threads, 1.0, static_cast<double>(omp_get_max_threads())));
}

namespace {

bool power_of_two(double x) {
  int e = 0;
  return x > 0 && std::frexp(x, &e) == 0.5;
}

// The largest power of two not above x (x > 0).
double floor_power_of_two(double x) {
  int e = 0;
  std::frexp(x, &e);  // x = f 2^e, f in [0.5, 1)
  return std::ldexp(1.0, e - 1);
}

}  // namespace

BlockHermite::BlockHermite(Bodies bodies, const NbodySettings& settings, std::unique_ptr<ForceBackend> backend,
                           JSlice slice, Reduce reduce)
    : bodies_(std::move(bodies)),
      settings_(settings),
      backend_(std::move(backend)),
      slice_(slice),
      reduce_(std::move(reduce)) {
  if (settings_.order != 4 && settings_.order != 6) throw std::invalid_argument("order must be 4 or 6");
  if (!power_of_two(settings_.max_step)) throw std::invalid_argument("max_step must be a power of two");
  if (settings_.eta == 0) settings_.eta = settings_.order == 6 ? 0.5 : 0.01;
  if (settings_.eta_start == 0) settings_.eta_start = 0.1;
  if (!(settings_.eta > 0) || !(settings_.eta_start > 0)) throw std::invalid_argument("eta must be > 0");
  if (!(settings_.softening >= 0)) throw std::invalid_argument("softening must be >= 0");
  if (bodies_.num_massive < 1 || bodies_.num_massive > bodies_.size())
    throw std::invalid_argument("at least one massive body");
  if (slice_.last < 0) slice_.last = bodies_.num_massive;
  time_ = bodies_.size() ? bodies_.time[0] : 0.0;
  std::vector<double> gm(bodies_.num_massive);
  for (long j = 0; j < bodies_.num_massive; ++j) gm[j] = settings_.G * bodies_.mass[j];
  backend_->load(std::vector<BodyState>(bodies_.state.begin(), bodies_.state.begin() + bodies_.num_massive),
                 std::vector<double>(bodies_.time.begin(), bodies_.time.begin() + bodies_.num_massive), gm);
}

void BlockHermite::forces(double t, const std::vector<int>& active, int order, ForceResult& out, bool potential) {
  const int n = static_cast<int>(active.size());
  batch_.index = active;
  batch_.potential = potential;
  batch_.x.resize(3 * static_cast<std::size_t>(n));
  batch_.v.resize(3 * static_cast<std::size_t>(n));
  batch_.a.resize(3 * static_cast<std::size_t>(n));
  batch_.j.resize(order == 8 ? 3 * static_cast<std::size_t>(n) : 0);
  // Per body, independent: threads for large active sets (the results do not depend on them).
  const auto predict_start = std::chrono::steady_clock::now();
  const int predict_threads = host_threads(n, 50);
#pragma omp parallel for schedule(static) num_threads(predict_threads) if (predict_threads > 1)
  for (int k = 0; k < n; ++k) {
    const int i = active[k];
    const double h = t - bodies_.time[i];
    predict(bodies_.state[i], h, &batch_.x[3 * k], &batch_.v[3 * k], &batch_.a[3 * k]);
    if (order == 8) predict_jerk(bodies_.state[i], h, &batch_.j[3 * k]);
  }
  out.resize(n, order);
  const auto start = std::chrono::steady_clock::now();
  counters_.predict_seconds += std::chrono::duration<double>(start - predict_start).count();
  backend_->forces(t, order, settings_.softening * settings_.softening, slice_, batch_, out);
  if (reduce_) {
    const auto reduce_start = std::chrono::steady_clock::now();
    reduce_(out.packed.data(), out.packed.size());
    counters_.reduce_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - reduce_start).count();
  }
  counters_.interactions += static_cast<double>(n) * static_cast<double>(bodies_.num_massive);
  counters_.force_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

namespace {
// frexp's exponent (step = f 2^e, f in [0.5, 1)), read from the bits of a normal number: the
// bookkeeping of millions of body steps calls it once a body step.
int step_exponent(double step) {
  std::uint64_t bits;
  std::memcpy(&bits, &step, sizeof bits);
  const int biased = static_cast<int>((bits >> 52) & 0x7ff);
  if (biased != 0 && biased != 0x7ff) return biased - 1022;
  int e = 0;
  std::frexp(step, &e);
  return e;
}
constexpr int kExponentOffset = 1074;  // frexp's exponents of positive doubles: -1073 .. 1024
}  // namespace

void BlockHermite::merge_into(std::vector<int>& sorted, const std::vector<int>& more) {
  if (sorted.empty() || more.empty() || sorted.back() < more.front()) {
    sorted.insert(sorted.end(), more.begin(), more.end());
    return;
  }
  scratch_.resize(sorted.size() + more.size());
  std::merge(sorted.begin(), sorted.end(), more.begin(), more.end(), scratch_.begin());
  sorted.swap(scratch_);
}

void BlockHermite::rebuild_levels() {  // in index order: every level sorted
  levels_.clear();
  for (long i = 0; i < bodies_.size(); ++i) levels_[step_exponent(bodies_.step[i])].push_back(static_cast<int>(i));
}

void BlockHermite::initialise() {
  sync_host();  // (backend steps: the states are the backend's)
  const long n = bodies_.size();
  std::vector<int> all(n);
  for (long i = 0; i < n; ++i) all[i] = static_cast<int>(i);
  for (long i = 0; i < n; ++i) {
    if (bodies_.time[i] != time_) throw std::invalid_argument("initialise: every body must start at the same time");
    BodyState& b = bodies_.state[i];
    for (int d = 0; d < 3; ++d) b.a[d] = b.j[d] = b.s[d] = b.c[d] = 0.0;
  }
  // Two passes: acceleration and jerk first; then, with every body's a and j known, the snap and
  // crackle too (the pair terms of order 8), so that the first step's predictor is as complete as
  // every later one's (a first step predicted without them lost the 6th order its accuracy).
  std::vector<int> massive(bodies_.num_massive);
  for (long j = 0; j < bodies_.num_massive; ++j) massive[j] = static_cast<int>(j);
  for (int pass = 0; pass < 2; ++pass) {
    forces(time_, all, pass == 0 ? 4 : 8, result_);
    for (long i = 0; i < n; ++i) {
      BodyState& b = bodies_.state[i];
      for (int d = 0; d < 3; ++d) {
        b.a[d] = result_.acc(static_cast<int>(i))[d];
        b.j[d] = result_.jerk(static_cast<int>(i))[d];
        if (pass == 1) {
          b.s[d] = result_.snap(static_cast<int>(i))[d];
          b.c[d] = result_.crackle(static_cast<int>(i))[d];
        }
      }
    }
    backend_->update(massive, bodies_.state, bodies_.time);
  }
  double shared = settings_.max_step;
  for (long i = 0; i < n; ++i) {
    BodyState& b = bodies_.state[i];
    const double wanted = initial_step(b, settings_.eta_start);
    double dt = wanted > 0 && std::isfinite(wanted) ? std::min(settings_.max_step, floor_power_of_two(wanted))
                                                    : settings_.max_step;
    if (!(wanted > 0)) dt = 0.0;  // zero or NaN: refused below
    // The first step must divide the start time (a resumed or shifted start).
    while (dt > 0 && std::fmod(time_, dt) != 0.0) dt *= 0.5;
    if (dt < settings_.min_step) {
      std::ostringstream m;
      m << "body " << bodies_.id[i] << " needs a first step of " << wanted << " (below min_step " << settings_.min_step
        << "): bodies too close; add softening";
      throw StepUnderflow(m.str());
    }
    bodies_.step[i] = dt;
    shared = std::min(shared, dt);
  }
  if (settings_.shared_steps)
    for (long i = 0; i < n; ++i) bodies_.step[i] = shared;
  rebuild_levels();
  counters_ = NbodyCounters{};  // the counters are the block steps'
  start_backend_steps();
}

void BlockHermite::start_backend_steps() {
  backend_steps_ = settings_.backend_steps;
  if (!backend_steps_) return;
  std::vector<double> gm(bodies_.num_massive);
  for (long j = 0; j < bodies_.num_massive; ++j) gm[j] = settings_.G * bodies_.mass[j];
  backend_->load_all(bodies_.state, bodies_.time, gm);
  host_stale_ = false;
}

void BlockHermite::sync_host() const {
  if (!host_stale_) return;
  backend_->download(bodies_.state);
  host_stale_ = false;
}

void BlockHermite::resume() {
  sync_host();
  // The block time is the latest body time (the bodies of the last block step are there).
  time_ = *std::max_element(bodies_.time.begin(), bodies_.time.end());
  for (long i = 0; i < bodies_.size(); ++i)
    if (!(bodies_.step[i] > 0) || !power_of_two(bodies_.step[i]) || std::fmod(bodies_.time[i], bodies_.step[i]) != 0)
      throw std::invalid_argument("resume: body " + std::to_string(bodies_.id[i]) + " has no valid block step");
  rebuild_levels();
  start_backend_steps();
}

void BlockHermite::step() {
  if (settings_.order == 6)
    step_order<6>();
  else
    step_order<4>();
}

template <int Order>
void BlockHermite::step_order() {
  const auto start = std::chrono::steady_clock::now();
  const long n = bodies_.size();
  double t_next = HUGE_VAL;
  for (const auto& [exponent, members] : levels_)
    if (!members.empty()) t_next = std::min(t_next, bodies_.time[members[0]] + bodies_.step[members[0]]);
  // The active bodies in index order (the sums do not depend on the levels): every level is kept
  // sorted, so the active ones are merged, not sorted (a sort of millions of indices a block step
  // is serial work that every rank repeats).
  // (Into buffers kept from step to step: a system of few bodies takes millions of block steps,
  // and allocations there would cost more than the physics.)
  active_.clear();
  for (auto& [exponent, members] : levels_)
    if (!members.empty() && bodies_.time[members[0]] + bodies_.step[members[0]] == t_next) {
      merge_into(active_, members);
      members.clear();
    }
  const int na = static_cast<int>(active_.size());
  auto correct_start = std::chrono::steady_clock::now();
  if (backend_steps_) {
    // The backend (on the GPU: the device) predicts the active bodies, sums their forces and
    // corrects them; under MPI each rank corrects every active body with the ranks' sums, so that
    // every rank's backend holds every body.
    const auto start_forces = std::chrono::steady_clock::now();
    result_.resize(na, Order);
    backend_->active_forces(t_next, Order, settings_.softening * settings_.softening, slice_, active_, result_);
    if (reduce_) {
      const auto reduce_start = std::chrono::steady_clock::now();
      reduce_(result_.packed.data(), result_.packed.size());
      counters_.reduce_seconds +=
          std::chrono::duration<double>(std::chrono::steady_clock::now() - reduce_start).count();
    }
    correct_start = std::chrono::steady_clock::now();
    counters_.interactions += static_cast<double>(na) * static_cast<double>(bodies_.num_massive);
    counters_.force_seconds += std::chrono::duration<double>(correct_start - start_forces).count();
    backend_->correct_active(t_next, Order, settings_.eta, settings_.max_step, reduce_ ? &result_ : nullptr, wanted_,
                             next_step_);
    for (int i : active_) bodies_.time[i] = t_next;  // (before a refusal below: the backend corrected them all)
    host_stale_ = true;
  } else {
    forces(t_next, active_, Order, result_);
    correct_start = std::chrono::steady_clock::now();
    // The correctors, per body and independent: threads for large active sets; then, in order,
    // the new steps (a refusal names the first body in index order, whatever the threads).
    wanted_.resize(na);
    const int correct_threads = host_threads(na, 200);
#pragma omp parallel for schedule(static) num_threads(correct_threads) if (correct_threads > 1)
    for (int k = 0; k < na; ++k) {
      const int i = active_[k];
      const double* s1 = Order == 6 ? result_.snap(k) : nullptr;
      wanted_[k] =
          correct<Order>(bodies_.state[i], bodies_.step[i], result_.acc(k), result_.jerk(k), s1, settings_.eta);
      bodies_.time[i] = t_next;
    }
  }
  double shared = settings_.max_step;
  for (int k = 0; k < na; ++k) {
    const int i = active_[k];
    const double wanted = wanted_[k];
    // (Backend steps: the backend quantised the step.)
    const double dt =
        backend_steps_ ? next_step_[k] : quantise_step(wanted, bodies_.step[i], t_next, settings_.max_step);
    if (dt < settings_.min_step || std::isnan(wanted)) {  // inf: nothing limits the step
      std::ostringstream m;
      m << "body " << bodies_.id[i] << " at t = " << t_next << " needs a step of " << wanted << " (below min_step "
        << settings_.min_step << "): a close encounter; add softening";
      throw StepUnderflow(m.str());
    }
    bodies_.step[i] = dt;
    shared = std::min(shared, dt);
  }
  if (settings_.shared_steps) {
    // Every body is active each step; the next step is the smallest wanted, kept commensurate.
    for (long i = 0; i < n; ++i) bodies_.step[i] = shared;
    rebuild_levels();
  } else {
    // Back into their levels, each kept sorted: the active bodies come in index order, so each
    // level's new members do too, and a level that already holds bodies (of another block time)
    // takes them by a merge.
    // (Each level's list found through a table by exponent, not a map lookup a body.)
    for (auto& [exponent, members] : arriving_) members.clear();
    if (arriving_slot_.empty()) arriving_slot_.assign(kExponentOffset + 1025, nullptr);
    for (int i : active_) {
      const int e = step_exponent(bodies_.step[i]);
      std::vector<int>*& slot = arriving_slot_[e + kExponentOffset];
      if (!slot) slot = &arriving_[e];  // (map nodes stay put)
      slot->push_back(i);
    }
    for (auto& [exponent, members] : arriving_)
      if (!members.empty()) merge_into(levels_[exponent], members);
  }
  // The backend's copy of the massive active bodies.
  const auto update_start = std::chrono::steady_clock::now();
  counters_.correct_seconds += std::chrono::duration<double>(update_start - correct_start).count();
  // Only those of this process's slice: the backend predicts and sums no other j body, so under
  // MPI each rank's copy of the others would be work (and a GPU upload) that R ranks repeat.
  // (Backend steps: the backend corrected its own copy.)
  const auto slice_begin = std::lower_bound(active_.begin(), active_.end(), static_cast<int>(slice_.first));
  const auto slice_end = std::lower_bound(slice_begin, active_.end(), static_cast<int>(slice_.last));
  if (!backend_steps_ && slice_end != slice_begin)
    backend_->update(std::vector<int>(slice_begin, slice_end), bodies_.state, bodies_.time);
  const auto step_end = std::chrono::steady_clock::now();
  counters_.update_seconds += std::chrono::duration<double>(step_end - update_start).count();
  time_ = t_next;
  counters_.block_steps += 1;
  counters_.body_steps += static_cast<double>(active_.size());
  counters_.step_seconds += std::chrono::duration<double>(step_end - start).count();
}

void BlockHermite::run_until(double t_end, const std::function<void()>& after_step) {
  if (std::fmod(t_end, settings_.max_step) != 0.0)
    throw std::invalid_argument("run_until: the end time must be a multiple of max_step");
  // No body steps over a multiple of max_step (its step divides max_step and its time is a multiple
  // of its step), so when the block time reaches t_end every body is there.
  while (time_ < t_end) {
    step();
    if (after_step) after_step();
  }
}

Energy BlockHermite::energy() {
  sync_host();
  const long n = bodies_.size();
  for (long i = 0; i < n; ++i)
    if (bodies_.time[i] != time_) throw std::logic_error("energy: the bodies are not at one time");
  Energy e;
  for (long i = 0; i < bodies_.num_massive; ++i) {
    const double* v = bodies_.state[i].v;
    e.kinetic += 0.5 * bodies_.mass[i] * (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
  }
  std::vector<int> massive(bodies_.num_massive);
  for (long j = 0; j < bodies_.num_massive; ++j) massive[j] = static_cast<int>(j);
  ForceResult r;
  const NbodyCounters kept = counters_;
  forces(time_, massive, 4, r, true);
  counters_ = kept;  // diagnostics are not integration work
  for (long i = 0; i < bodies_.num_massive; ++i) e.potential -= 0.5 * bodies_.mass[i] * r.pot(static_cast<int>(i));
  return e;
}

}  // namespace swarmfit::nbody
