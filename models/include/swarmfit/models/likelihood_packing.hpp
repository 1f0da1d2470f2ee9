// Packing: the likelihood batches of many problems (a catalog's targets, each fitted by its own
// sampler) integrated in shared launches. One fit of a few dozen walkers fills a few percent of a
// GPU, and a launch lasts as long as its slowest system; so targets fitted one after another
// leave the card idle, while the batches of a hundred targets in one launch cost about what one
// does. A launch holds the systems of every target of the same scheme and body count (targets
// with different planet counts go to separate launches: grouped, not padded), each with its own
// tables, instruments, step and end time (PackedLikelihoodObservation, likelihood_observer.hpp).
// A system's ln L and status are bitwise those of its problem's own evaluate(), so a packed
// target's chain is the chain it gives alone.
#pragma once

#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "swarmfit/models/likelihood.hpp"

namespace swarmfit {

// One problem's batch.
struct PackedRequest {
  const LikelihoodProblem* problem = nullptr;
  const double* params = nullptr;  // num_systems x problem->model().num_parameters()
  long num_systems = 0;
  double* log_likelihood = nullptr;  // out: ln L or -inf
  int* status = nullptr;             // out
};

struct PackingStats {
  long launches = 0;  // kernel launches (one per scheme and body count of a round)
  long rounds = 0;    // rounds formed (LaunchPacker) or evaluate_packed calls
  long waited = 0;    // of the rounds, those formed after max_wait (a seated thread busy elsewhere)
  long batches = 0;   // problems' batches served
  long systems = 0;
  double seconds = 0;  // inside evaluate_packed
};

// One problem's share of a packer's time (LaunchPacker::times): its batches, the seconds they
// waited from their arrival to their launch's start (a round to form, the launching thread to
// wake), and the seconds their launches ran, each lasting as long as the launch's slowest system.
// Where a slow target spends its time in a packed catalog, which bounds the catalog's.
struct PackedTime {
  long batches = 0;
  double waiting = 0, launched = 0;
  // Of `launched` (CUDA; zeros on the CPU): the integration kernels' device time; the host's part
  // before the launch's first upload (staging) and after its integration (the copies back, their
  // wait, collecting); and, on the device, the uploads and set-up kernels before the integration
  // (events). The rest: the enqueueing, the work queued behind other work on the device, and the
  // host thread's wake-up when the integration ends.
  double kernels = 0, host = 0, setup = 0;
};

// Every request at once, grouped by scheme and body count, one launch per group, on the backend
// of the requests' settings (cpu, or cuda not reproducible; all the same). Returns the launches'
// device time (CUDA; zeros on the CPU).
DeviceTiming evaluate_packed(const std::vector<PackedRequest>& requests, PackingStats* stats = nullptr);

// Collects the batches of problems evaluated on several threads (LikelihoodSettings::packer) and
// runs them together. A round forms when every seated thread has its batch waiting or in a
// launch still running, or when the oldest waiting batch has waited max_wait (a thread busy
// elsewhere, e.g. writing its run file, holds the others back no longer). A round's batches are
// cut into launches by scheme, body count and cost (integration steps x bodies^2, in factors of
// 2), and each launch releases its batches as soon as it is done: a GPU launch lasts as long as
// its slowest system, so the fast targets go on in launches of their own beside the slow ones
// instead of waiting for them. Each launch is run by the thread of its first batch; on the GPU
// the launches of a round run at once, each on its own stream (concurrent = true), on the CPU
// one after another. Which batches share a launch changes nothing in the results.
class LaunchPacker {
 public:
  explicit LaunchPacker(double max_wait_seconds = 0.05, bool concurrent = false)
      : max_wait_(max_wait_seconds), concurrent_(concurrent) {}

  // A thread that will send batches: while it holds a seat, a round waits for its batch.
  class Seat {
   public:
    explicit Seat(LaunchPacker& packer);
    ~Seat();
    Seat(const Seat&) = delete;
    Seat& operator=(const Seat&) = delete;

   private:
    LaunchPacker& packer_;
  };

  // Queues the batch and returns once its launch is done (rethrows the launch's error); timing
  // (optional): the launch's device time, shared with the other batches of the launch.
  void evaluate(const LikelihoodProblem& problem, const double* params, long n, double* log_likelihood, int* status,
                DeviceTiming* timing = nullptr);

  PackingStats stats() const;
  // Per LikelihoodSettings::packing_label of the problems served.
  std::map<std::string, PackedTime> times() const;
  double max_wait() const { return max_wait_; }

 private:
  struct Launch;
  struct Pending {
    // Its own: a catalog has hundreds of threads, and one variable for all woke every one of them
    // at every batch and launch (they then queued on mutex_, one by one).
    std::condition_variable wake;
    PackedRequest request;
    std::chrono::steady_clock::time_point since, started, ended;  // arrival; its launch's start and end
    std::shared_ptr<Launch> launch;                               // set when its round forms
    bool done = false;
    std::exception_ptr error;
    DeviceTiming timing;
  };
  struct Launch {
    std::vector<Pending*> members;  // members[0]'s thread runs it
  };
  void seat(int change);
  bool round_due() const;  // with mutex_ held: every seat's batch waiting or in a launch
  void form_round();       // with mutex_ held: the waiting batches into launches, their first members woken
  void run_launch(Launch& launch, std::unique_lock<std::mutex>& lock);

  const double max_wait_;
  const bool concurrent_;
  mutable std::mutex mutex_;
  std::mutex serial_;  // concurrent_ = false: one launch at a time
  std::vector<Pending*> pending_;
  int seats_ = 0;
  long batches_running_ = 0;
  PackingStats stats_;
  std::map<std::string, PackedTime> times_;
};

}  // namespace swarmfit
