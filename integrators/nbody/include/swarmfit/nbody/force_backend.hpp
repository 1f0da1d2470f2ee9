// Where the large-N engine's forces are summed: the pair loop over active bodies i and massive
// bodies j, on CPU threads or the GPU. A backend keeps its own copy of the bodies' states (on the
// GPU: device memory, as Sapporo and phi-GPU keep their j-particles) and predicts them to each
// block time itself: with backend steps every body, which it also corrects (below); otherwise the
// massive ones, updated with the bodies the engine corrected.
#pragma once

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "swarmfit/nbody/hermite.hpp"

namespace swarmfit::nbody {

// The massive bodies [first, last) a process sums over (last < 0: to the end).
struct JSlice {
  long first = 0, last = -1;
};

// The active bodies of one block step, predicted to the block time: global index (a body does not
// pull on itself), position, velocity, acceleration (order 6's snap needs it) and jerk (order 8,
// the start's crackle).
struct IBatch {
  std::vector<int> index;
  std::vector<double> x, v, a, j;  // [i][3]
  bool potential = false;          // also sum G m_j / r (the energy; orders 4 and 6 skip it otherwise)
  int size() const { return static_cast<int>(index.size()); }
};

// Per active body: sums over the slice of G m_j times the pair terms (hermite.hpp), packed as
// the backends produce them (a row of packed_width(order) values per body: acc 0-2, jerk 3-5,
// then for order 4 the potential at 6; for orders 6 and 8 the snap at 6-8, the potential at 9
// and (8) the crackle at 10-12), so that the ranks' partial sums are added in place by one
// reduction with no copy.
constexpr int packed_width(int order) { return order == 8 ? 13 : order == 6 ? 10 : 7; }
struct ForceResult {
  int order = 4, width = 7;
  std::vector<double> packed;     // [i][width]
  void resize(int n, int order);  // n zeroed rows
  double* row(int k) { return &packed[static_cast<std::size_t>(k) * width]; }
  const double* acc(int k) const { return &packed[static_cast<std::size_t>(k) * width]; }
  const double* jerk(int k) const { return acc(k) + 3; }
  const double* snap(int k) const { return acc(k) + 6; }          // orders 6 and 8
  const double* crackle(int k) const { return acc(k) + 10; }      // order 8
  double pot(int k) const { return acc(k)[order == 4 ? 6 : 9]; }  // sum of G m_j / r_ij
};

// Threads for a host loop over `count` items of about `ns_per_item` nanoseconds each: enough to
// give each thread some 50 microseconds of work, at most the OpenMP threads. Why: waking all of a
// host's threads for a block step of a few thousand bodies costs more than the loop saves, and
// every rank repeats these loops (bench/RESULTS.md, B8).
int host_threads(long count, double ns_per_item);

class ForceBackend {
 public:
  virtual ~ForceBackend() = default;
  virtual std::string name() const = 0;
  // The massive bodies' states, times and G m (gm), all of them (indices 0 .. n-1).
  virtual void load(const std::vector<BodyState>& state, const std::vector<double>& time,
                    const std::vector<double>& gm) = 0;
  // The massive bodies of `index` (sorted) changed: their new states and times. After the start
  // the engine passes only those of its slice, the only j bodies `forces` reads.
  virtual void update(const std::vector<int>& index, const std::vector<BodyState>& state,
                      const std::vector<double>& time) = 0;
  // Sums over j in `slice` (massive bodies predicted to t) for every body of `batch`. Order 4:
  // acc, jerk; 6: and snap; 8 (once, at the start): and crackle.
  virtual void forces(double t, int order, double eps2, const JSlice& slice, const IBatch& batch, ForceResult& out) = 0;

  // Backend steps: the backend holds every body, test particles too, and predicts and corrects
  // the active ones itself, so a block step sends it their indices and reads back their wanted
  // steps. On the GPU no state then crosses the bus (phi-GPU and HiGPUs predict on the device
  // likewise; the host's predictor and corrector were the work every rank repeated:
  // bench/RESULTS.md, B8). The same hermite.hpp functions, the GPU's compiled without
  // contraction: the same bits as the engine's host steps (order 6's criterion up to its cube root's
  // last bit, steps_cuda.cu).
  // Every body (massive first: gm holds theirs) at its own time; replaces load()'s copy.
  virtual void load_all(const std::vector<BodyState>& state, const std::vector<double>& time,
                        const std::vector<double>& gm) = 0;
  // Forces (orders 4 and 6) on the bodies of `active` (sorted), predicted to t by the backend,
  // from the slice; added into out's rows (zeroed by the caller) as forces() adds them.
  virtual void active_forces(double t, int order, double eps2, const JSlice& slice, const std::vector<int>& active,
                             ForceResult& out) = 0;
  // Corrects the bodies of the last active_forces call to t with their forces: `summed`, the
  // ranks' sums of its result (MPI), or nullptr for its own. Each body's wanted next step
  // (hermite.hpp, correct) into `wanted` and its next block step (quantise_step, up to max_step)
  // into `next_step`.
  virtual void correct_active(double t, int order, double eta, double max_step, const ForceResult* summed,
                              std::vector<double>& wanted, std::vector<double>& next_step) = 0;
  // Every body's state (x v a j s c) into `state` (resized to all bodies).
  virtual void download(std::vector<BodyState>& state) = 0;
};

// OpenMP threads and SIMD. Each active body's j sum is cut into chunks whose size depends on the
// numbers of active and massive bodies only, never on the threads: results are bitwise the same
// for any thread count.
std::unique_ptr<ForceBackend> make_cpu_backend(int threads = 0);
// The GPU (CUDA); throws std::runtime_error in a build without CUDA or with no device.
std::unique_ptr<ForceBackend> make_cuda_backend();
bool nbody_cuda_built();

}  // namespace swarmfit::nbody
