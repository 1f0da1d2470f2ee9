// The large-N direct-summation engine: one system of up to millions of bodies, integrated with
// the Hermite scheme of 4th or 6th order (hermite.hpp) on individual block time steps (powers of
// two: Makino 1991, PASJ 43, 859; Aarseth 2003 sec. 2.5): each block step predicts every body to
// the block time, computes the forces on the active bodies (those whose step ends then) from all
// massive bodies, and corrects the active ones. Forces come from a ForceBackend (CPU threads, the
// GPU; force_backend.hpp), which may sum only a slice of the massive bodies: with MPI each rank
// holds all bodies and sums its slice, and the partial forces are added by `reduce` (the
// decomposition of HiGPUs, Capuzzo-Dolcetta, Spera & Punzo 2013). Bodies past `num_massive` are
// massless test particles: they feel the massive bodies and pull on nothing (N_t x N_m work).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "swarmfit/nbody/force_backend.hpp"
#include "swarmfit/nbody/hermite.hpp"

namespace swarmfit::nbody {

struct NbodySettings {
  int order = 4;  // 4 or 6
  // Accuracy of the step criterion; 0: the order's usual value (order 4: Aarseth's eta 0.01;
  // order 6: Nitadori & Makino's 0.5), and of the first step (0: 0.1; hermite.hpp, initial_step).
  double eta = 0.0;
  double eta_start = 0.0;
  double softening = 0.0;     // Plummer softening length eps
  double G = 1.0;             // gravitational constant in the units of the bodies (Henon units: 1)
  double max_step = 0.125;    // the longest block step (a power of two)
  double min_step = 0x1p-50;  // a step below this stops the run (a close encounter without softening)
  bool shared_steps = false;  // every body on the smallest step (the reference for block steps)
  // With a backend that can (both can): every body kept by the force backend, the active ones
  // predicted and corrected there (on the GPU: on the device; force_backend.hpp, backend_steps);
  // the same bits as the host's steps.
  bool backend_steps = true;
};

// The bodies: massive ones first, test particles (mass 0) after. State at each body's own time.
struct Bodies {
  std::vector<double> mass;
  std::vector<BodyState> state;
  std::vector<double> time, step;  // each body's time and current block step
  std::vector<std::int64_t> id;
  long num_massive = 0;
  long size() const { return static_cast<long>(mass.size()); }
  void resize(long n);
};

struct Energy {
  double kinetic = 0, potential = 0;
  double total() const { return kinetic + potential; }
  double virial_ratio() const { return potential != 0 ? -kinetic / potential : 0; }  // Q = T / |W|
};

struct NbodyCounters {
  long block_steps = 0;
  double body_steps = 0;      // sum of the active bodies over block steps
  double interactions = 0;    // pairs computed (active x massive)
  double force_seconds = 0;   // wall time in the force backend and the ranks' reduction
  double reduce_seconds = 0;  // of which the reduction (MPI)
  double step_seconds = 0;    // wall time of the block steps, forces included
  // The block steps' host work, which every rank repeats (of step_seconds, outside forces):
  double predict_seconds = 0;  // the active bodies predicted to the block time
  double correct_seconds = 0;  // their correctors, new steps and levels
  double update_seconds = 0;   // the force backend's copy of them (the GPU's: pack, upload, scatter)
  // With backend steps the predictor is in force_seconds and the corrector in correct_seconds.
};

// Adds the partial force sums of the ranks, in place, identically on every rank (MPI_Allreduce).
using Reduce = std::function<void(double* values, std::size_t count)>;

class BlockHermite {
 public:
  // `slice`: the massive bodies this process sums (all of them without MPI).
  BlockHermite(Bodies bodies, const NbodySettings& settings, std::unique_ptr<ForceBackend> backend, JSlice slice = {},
               Reduce reduce = nullptr);
  // Forces at the start and every body's first step (all bodies at time()).
  void initialise();
  // Continues from bodies whose derivatives and steps were saved (a snapshot): no force pass.
  void resume();
  double time() const { return time_; }
  // One block step. Throws StepUnderflow when a body needs a step below min_step.
  void step();
  // Block steps until every body is at t_end, which must be a multiple of max_step.
  void run_until(double t_end, const std::function<void()>& after_step = nullptr);
  // Kinetic and potential energy now (every body must be at time(): after run_until).
  Energy energy();
  // (With backend steps: copied from the backend when they changed since the last call.)
  const Bodies& bodies() const {
    sync_host();
    return bodies_;
  }
  const NbodyCounters& counters() const { return counters_; }
  const NbodySettings& settings() const { return settings_; }
  // The bodies the last block step corrected (index order; their new states are in bodies()).
  const std::vector<int>& last_active() const { return active_; }

 private:
  template <int Order>
  void step_order();
  void forces(double t, const std::vector<int>& active, int order, ForceResult& out, bool potential = false);
  void rebuild_levels();
  // Backend steps from here on, where the settings and the backend allow (after the start).
  void start_backend_steps();
  void sync_host() const;
  // Adds the sorted `more` to the sorted `sorted`, keeping it sorted (a merge through scratch_).
  void merge_into(std::vector<int>& sorted, const std::vector<int>& more);

  // The block levels: the bodies of each step size (keyed by its binary exponent). All bodies of
  // a level share their next time (the next multiple of the step after the system time), so a
  // block step takes whole levels and touches only the active bodies, never all N.
  std::map<int, std::vector<int>> levels_;
  // mutable: with backend steps the states are the backend's, copied here on demand (sync_host).
  mutable Bodies bodies_;
  mutable bool host_stale_ = false;
  bool backend_steps_ = false;
  NbodySettings settings_;
  std::unique_ptr<ForceBackend> backend_;
  JSlice slice_;
  Reduce reduce_;
  double time_ = 0;
  NbodyCounters counters_;
  std::vector<int> active_;
  std::map<int, std::vector<int>> arriving_;      // the active bodies by their new level (reused)
  std::vector<std::vector<int>*> arriving_slot_;  // arriving_'s lists by exponent + 1074
  std::vector<int> scratch_;                      // merge_into's buffer (reused)
  std::vector<double> wanted_;                    // the correctors' next steps, per active body
  std::vector<double> next_step_;                 // and (backend steps) the backend's quantised ones
  IBatch batch_;
  ForceResult result_;
};

struct StepUnderflow : std::runtime_error {
  using std::runtime_error::runtime_error;
};

}  // namespace swarmfit::nbody
