#include "swarmfit/models/likelihood_packing.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <stdexcept>
#include <tuple>
#include <utility>

#include "swarmfit/integrators/registry.hpp"
#include "swarmfit/models/likelihood_kernels.hpp"

namespace swarmfit {

namespace {

// A request's run: the request of its problem's own launch, as a packed launch's per-target run.
SystemRun system_run(const LikelihoodProblem& problem) {
  const RunRequest r = problem.run_request();
  SystemRun run;
  run.step = r.step;
  run.step.adaptive = r.integrator->adaptive;  // as integrate_cpu_observed / launch_observed set it
  run.monitors = r.monitors;
  run.t_end = r.destination_time;
  return run;
}

void evaluate_group_cpu(const std::vector<const PackedRequest*>& group, int nb) {
  const std::size_t count = group.size();
  std::vector<long> first_slot(count);
  std::vector<int> target_of_chunk;
  for (std::size_t t = 0; t < count; ++t) {
    first_slot[t] = static_cast<long>(target_of_chunk.size()) * kChunk;
    target_of_chunk.insert(target_of_chunk.end(), (group[t]->num_systems + kChunk - 1) / kChunk, static_cast<int>(t));
  }
  const long chunks = static_cast<long>(target_of_chunk.size());
  Ensemble all(chunks * kChunk, nb);
  std::vector<ObservationTables> tables(count);
  std::vector<SystemRun> runs(count);
  std::vector<std::vector<double>> offsets(count), jitters(count), lnl(count);
  const std::size_t body_chunk = static_cast<std::size_t>(kBodyFields) * nb * kChunk;
  const std::size_t clock_chunk = static_cast<std::size_t>(kClockFields) * kChunk;
  for (std::size_t t = 0; t < count; ++t) {
    const PackedRequest& q = *group[t];
    const LikelihoodProblem& p = *q.problem;
    // The systems as the problem's own evaluate() sets them up, copied chunk by chunk.
    Ensemble own(q.num_systems, nb);
    std::vector<int> invalid;
    p.build_ensemble(q.params, q.num_systems, own, invalid);
    own.fill_padding();
    const long chunk = first_slot[t] / kChunk;
    std::memcpy(all.body_data().data() + chunk * body_chunk, own.body_data().data(),
                own.num_chunks() * body_chunk * sizeof(double));
    std::memcpy(all.clock_data().data() + chunk * clock_chunk, own.clock_data().data(),
                own.num_chunks() * clock_chunk * sizeof(double));
    p.offsets_and_jitters(q.params, q.num_systems, offsets[t], jitters[t]);
    lnl[t].assign(q.num_systems, -HUGE_VAL);
    tables[t] = p.tables();
    tables[t].offsets = offsets[t].data();
    tables[t].jitters = jitters[t].data();
    tables[t].log_likelihood = lnl[t].data();
    runs[t] = system_run(p);
  }
  PackedTables packed;
  packed.tables = tables.data();
  packed.runs = runs.data();
  packed.first_slot = first_slot.data();
  packed.target_of_chunk = target_of_chunk.data();
  integrate_packed_cpu(all, group[0]->problem->run_request(), packed);
  for (std::size_t t = 0; t < count; ++t) {
    const PackedRequest& q = *group[t];
    for (long s = 0; s < q.num_systems; ++s) {
      q.status[s] = all.status(first_slot[t] + s);
      q.log_likelihood[s] = q.status[s] == kStatusOk ? lnl[t][s] : -HUGE_VAL;
    }
  }
}

DeviceTiming evaluate_group_cuda(const std::vector<const PackedRequest*>& group, int nb) {
  std::vector<PackedTarget> targets(group.size());
  for (std::size_t t = 0; t < group.size(); ++t) {
    const PackedRequest& q = *group[t];
    const LikelihoodProblem& p = *q.problem;
    PackedTarget& g = targets[t];
    g.tables = p.tables();
    g.run = system_run(p);
    g.shape = p.model().shape();
    g.centres = p.rv_centres();
    g.params = q.params;
    g.num_systems = q.num_systems;
    g.log_likelihood = q.log_likelihood;
    g.status = q.status;
  }
  const DeviceTiming timing = integrate_packed_cuda(targets, nb, group[0]->problem->run_request());
  for (const PackedRequest* q : group)
    for (long s = 0; s < q->num_systems; ++s)
      if (q->status[s] != kStatusOk) q->log_likelihood[s] = -HUGE_VAL;
  return timing;
}

}  // namespace

DeviceTiming evaluate_packed(const std::vector<PackedRequest>& requests, PackingStats* stats) {
  const auto start = std::chrono::steady_clock::now();
  DeviceTiming timing;
  if (requests.empty()) return timing;
  const std::string backend = requests[0].problem->settings().backend;
  // Groups: same scheme, same body count (the kernel's template arguments); the CPU's thread count
  // is the first request's.
  std::map<std::pair<int, int>, std::vector<const PackedRequest*>> groups;
  for (const PackedRequest& q : requests) {
    const LikelihoodSettings& s = q.problem->settings();
    if (s.backend != backend) throw std::invalid_argument("evaluate_packed: requests of different backends");
    if (backend == "cuda" && s.reproducible) throw std::invalid_argument("evaluate_packed: reproducible CUDA runs");
    if (q.num_systems <= 0) continue;
    const RunRequest r = q.problem->run_request();
    groups[{static_cast<int>(r.integrator->scheme), q.problem->model().num_bodies()}].push_back(&q);
  }
  for (auto& [key, group] : groups) {
    if (backend == "cuda") {
      const DeviceTiming t = evaluate_group_cuda(group, key.second);
      timing.kernel_ms += t.kernel_ms;
      timing.total_ms += t.total_ms;
      timing.host_ms += t.host_ms;
      timing.setup_ms += t.setup_ms;
    } else {
      evaluate_group_cpu(group, key.second);
    }
  }
  if (stats) {
    stats->launches += static_cast<long>(groups.size());
    stats->rounds += 1;
    for (const PackedRequest& q : requests) {
      stats->batches += 1;
      stats->systems += q.num_systems;
    }
    stats->seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
  return timing;
}

LaunchPacker::Seat::Seat(LaunchPacker& packer) : packer_(packer) { packer_.seat(+1); }
LaunchPacker::Seat::~Seat() { packer_.seat(-1); }

void LaunchPacker::seat(int change) {
  const std::lock_guard<std::mutex> lock(mutex_);
  seats_ += change;
  if (round_due()) form_round();  // one seat fewer may complete a round
}

bool LaunchPacker::round_due() const {
  return !pending_.empty() && static_cast<long>(pending_.size()) + batches_running_ >= seats_;
}

PackingStats LaunchPacker::stats() const {
  const std::lock_guard<std::mutex> lock(mutex_);
  return stats_;
}

std::map<std::string, PackedTime> LaunchPacker::times() const {
  const std::lock_guard<std::mutex> lock(mutex_);
  return times_;
}

void LaunchPacker::form_round() {
  // Launches by scheme, body count and cost bin: log2 of (steps x bodies^2), the work of one
  // system, whose slowest member sets a launch's length.
  std::map<std::tuple<int, int, int>, std::shared_ptr<Launch>> launches;
  for (Pending* p : pending_) {
    const LikelihoodProblem& problem = *p->request.problem;
    const RunRequest r = problem.run_request();
    const int nb = problem.model().num_bodies();
    const double steps = r.step.time_step > 0 ? r.destination_time / r.step.time_step : 1.0;
    const int bin = static_cast<int>(std::floor(std::log2(std::max(1.0, steps * nb * nb))));
    std::shared_ptr<Launch>& launch = launches[{static_cast<int>(r.integrator->scheme), nb, bin}];
    if (!launch) launch = std::make_shared<Launch>();
    launch->members.push_back(p);
    p->launch = launch;
  }
  batches_running_ += static_cast<long>(pending_.size());
  pending_.clear();
  ++stats_.rounds;
  for (const auto& entry : launches) entry.second->members.front()->wake.notify_one();  // they run them
}

void LaunchPacker::run_launch(Launch& launch, std::unique_lock<std::mutex>& lock) {
  std::vector<PackedRequest> requests;
  for (Pending* p : launch.members) requests.push_back(p->request);
  PackingStats stats;
  std::exception_ptr error;
  DeviceTiming timing;
  lock.unlock();
  std::chrono::steady_clock::time_point started;
  try {
    std::unique_lock<std::mutex> serial(serial_, std::defer_lock);
    if (!concurrent_) serial.lock();
    started = std::chrono::steady_clock::now();
    timing = evaluate_packed(requests, &stats);
  } catch (...) {
    error = std::current_exception();
  }
  const auto ended = std::chrono::steady_clock::now();
  lock.lock();
  batches_running_ -= static_cast<long>(launch.members.size());
  stats_.launches += stats.launches;
  stats_.batches += stats.batches;
  stats_.systems += stats.systems;
  stats_.seconds += stats.seconds;
  for (Pending* p : launch.members) {
    p->error = error;
    p->timing = timing;
    p->started = started;
    p->ended = ended;
    p->done = true;
    p->wake.notify_one();
  }
}

void LaunchPacker::evaluate(const LikelihoodProblem& problem, const double* params, long n, double* log_likelihood,
                            int* status, DeviceTiming* timing) {
  Pending me;
  me.request = PackedRequest{&problem, params, n, log_likelihood, status};
  me.since = std::chrono::steady_clock::now();
  std::unique_lock<std::mutex> lock(mutex_);
  pending_.push_back(&me);
  const auto wait =
      std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(max_wait_));
  while (!me.done) {
    if (me.launch) {
      if (me.launch->members.front() == &me) {
        const std::shared_ptr<Launch> launch = me.launch;  // its members' pointers die with them
        run_launch(*launch, lock);
      } else {
        me.wake.wait(lock);  // in a launch another thread runs
      }
      continue;
    }
    const auto oldest = pending_.front()->since;
    const bool due = round_due();
    if (due || std::chrono::steady_clock::now() >= oldest + wait) {
      stats_.waited += !due;
      form_round();
      continue;
    }
    me.wake.wait_until(lock, oldest + wait);
  }
  if (!me.error) {
    PackedTime& t = times_[problem.settings().packing_label];
    ++t.batches;
    t.waiting += std::chrono::duration<double>(me.started - me.since).count();
    t.launched += std::chrono::duration<double>(me.ended - me.started).count();
    t.kernels += me.timing.kernel_ms / 1e3;
    t.host += me.timing.host_ms / 1e3;
    t.setup += me.timing.setup_ms / 1e3;
  }
  if (me.error) std::rethrow_exception(me.error);
  if (timing) *timing = me.timing;
}

}  // namespace swarmfit
