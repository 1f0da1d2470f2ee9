// The large-N engine's forces on the GPU. The bodies live in device memory (structures of arrays):
// with backend steps (the default) all of them, predicted and corrected there (steps_cuda.cu), so
// a block step sends only the active bodies' indices; otherwise the massive ones, of which only
// those corrected in a block step are sent again (as Sapporo and phi-GPU keep their
// j-particles). Each block step predicts the j bodies on the device, then sums the pairs of the
// active bodies i: a thread per i, the j bodies staged through shared memory a tile at a time, and
// the j range split over the grid's second dimension so that a block step with few active bodies
// still fills the device (the j-split of Sapporo, Gaburov et al. 2009, and HiGPUs). The splits'
// partial sums are added in split order by a second kernel: the same sums on any GPU, for any
// timing. Pair terms: hermite.hpp, the same function as the CPU backend's.
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "steps_cuda.hpp"
#include "swarmfit/nbody/force_backend.hpp"

namespace swarmfit::nbody {

namespace {

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string("CUDA (nbody ") + what + "): " + cudaGetErrorString(e));
}

constexpr int kThreads = 128;     // i bodies per block, j bodies per tile
constexpr int kStateFields = 18;  // x v a j s c
// Blocks a force launch aims at, the j range split into chunks of at least kMinChunk bodies to
// get there: constants, so that the sums never depend on the GPU (the choice: bench/RESULTS.md, B8).
// SWARMFIT_NBODY_BLOCKS overrides the target for benchmarks (results change in the last bits).
constexpr int kTargetBlocks = 8192;
constexpr long kMinChunk = 4 * kThreads;

// A growing buffer in device memory, or (Pinned) in page-locked host memory, whose copies to and
// from the device need no staging copy.
template <class V, bool Pinned = false>
struct DeviceArray {
  V* ptr = nullptr;
  std::size_t size = 0;
  void reserve(std::size_t n) {
    if (n <= size) return;
    release();
    size = std::max<std::size_t>(n, 1) + n / 2;
    if constexpr (Pinned)
      check(cudaMallocHost(&ptr, size * sizeof(V)), "cudaMallocHost");
    else
      check(cudaMalloc(&ptr, size * sizeof(V)), "cudaMalloc");
  }
  void release() {
    if (ptr) Pinned ? cudaFreeHost(ptr) : cudaFree(ptr);
    ptr = nullptr;
  }
  ~DeviceArray() { release(); }
};
template <class V>
using PinnedArray = DeviceArray<V, true>;

// The bodies: field f of body j at fields[f * n + j]; predicted x v a (j) at pred[f * n + j]. n is
// the massive bodies, or with backend steps every body (the j sums still read the massive ones).
struct JView {
  const double* fields;
  const double* time;
  const double* gm;
  double* pred;
  long n;
};

__global__ void scatter_kernel(JView jv, double* fields, double* time, const int* index, const double* packed,
                               int count) {
  const int k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k >= count) return;
  const long j = index[k];
  for (int f = 0; f < kStateFields; ++f) fields[f * jv.n + j] = packed[k * (kStateFields + 1) + f];
  time[j] = packed[k * (kStateFields + 1) + kStateFields];
}

__global__ void predict_kernel(JView jv, double t, long first, long last, bool jerk) {
  const long j = first + blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x;
  if (j >= last) return;
  const BodyState b = device::load_fields(jv.fields, jv.n, j);
  const double h = t - jv.time[j];
  double xp[3], vp[3], ap[3];
  predict(b, h, xp, vp, ap);
  for (int d = 0; d < 3; ++d) {
    jv.pred[(0 + d) * jv.n + j] = xp[d];
    jv.pred[(3 + d) * jv.n + j] = vp[d];
    jv.pred[(6 + d) * jv.n + j] = ap[d];
  }
  if (jerk) {
    double jp[3];
    predict_jerk(b, h, jp);
    for (int d = 0; d < 3; ++d) jv.pred[(9 + d) * jv.n + j] = jp[d];
  }
}

// The i bodies: x v a (j) at ibody[k * 12 + f], f = 0..11; index[k].
// Orders 4 and 6: the j bodies' fields staged in pairs (16-byte shared-memory loads, broadcast to
// the warp): (x y) (z gm) (vx vy) (vz ax) (ay az); order 4 reads the first four. A full tile runs
// a fixed trip count (unrolled without remainder tests). Order 8 (once, at the start) stages
// x v a j gm one field at a time and calls pair_terms<8>. (Two bodies i a thread, sharing the j
// loads, was slower: bench/RESULTS.md.)
template <int Order, bool Potential>
__device__ void sum_tile(const double2* pairs, int count, const double (&xi)[12], int self_q, double eps2,
                         double (&sum)[kPairSums]) {
  auto one = [&](int q) {
    const double2 p0 = pairs[0 * kThreads + q], p1 = pairs[1 * kThreads + q], p2 = pairs[2 * kThreads + q],
                  p3 = pairs[3 * kThreads + q];
    double2 p4 = make_double2(0.0, 0.0);
    if constexpr (Order == 6) p4 = pairs[4 * kThreads + q];
    accumulate_pair<Order, Potential>(p0.x - xi[0], p0.y - xi[1], p1.x - xi[2], p2.x - xi[3], p2.y - xi[4],
                                      p3.x - xi[5], p3.y - xi[6], p4.x - xi[7], p4.y - xi[8], p1.y, eps2, q == self_q,
                                      sum);
  };
  if (count == kThreads) {
#pragma unroll 8
    for (int q = 0; q < kThreads; ++q) one(q);
  } else {
#pragma unroll 4
    for (int q = 0; q < count; ++q) one(q);
  }
}

// Order 4 held to 64 registers, eight blocks an SM (it fits them without spilling; the other
// kernels measured no faster so bounded).
template <int Order, bool Potential>
__global__ void __launch_bounds__(kThreads, Order == 4 && !Potential ? 8 : 1)
    force_kernel(JView jv, int first, int chunk, int last, double eps2, const double* ibody, const int* index, int ni,
                 double* partial) {
  constexpr int kPairs = Order == 6 ? 5 : 4;
  constexpr int kJ = Order == 8 ? 13 : 2 * kPairs;
  __shared__ __align__(16) double tile[kJ][kThreads];  // order 8: field f at tile[f]; else pairs of rows
  const int k = blockIdx.x * kThreads + threadIdx.x;
  const int j_begin = first + blockIdx.y * chunk, j_end = min(last, j_begin + chunk);
  double xi[12] = {};
  int self = -1;
  if (k < ni) {
    for (int f = 0; f < (Order == 8 ? 12 : 9); ++f) xi[f] = ibody[k * 12 + f];
    self = index[k];
  }
  double sum[Order == 8 ? 13 : kPairSums] = {};
  double2* pairs = reinterpret_cast<double2*>(&tile[0][0]);  // pairs[p * kThreads + q]
  for (int base = j_begin; base < j_end; base += kThreads) {
    const int j = base + threadIdx.x;
    __syncthreads();
    if (j < j_end) {
      if constexpr (Order == 8) {
        for (int f = 0; f < 12; ++f) tile[f][threadIdx.x] = jv.pred[f * jv.n + j];
        tile[12][threadIdx.x] = jv.gm[j];
      } else {
        const double* p = jv.pred;
        const long n = jv.n;
        pairs[0 * kThreads + threadIdx.x] = make_double2(p[0 * n + j], p[1 * n + j]);
        pairs[1 * kThreads + threadIdx.x] = make_double2(p[2 * n + j], jv.gm[j]);
        pairs[2 * kThreads + threadIdx.x] = make_double2(p[3 * n + j], p[4 * n + j]);
        pairs[3 * kThreads + threadIdx.x] = make_double2(p[5 * n + j], Order == 6 ? p[6 * n + j] : 0.0);
        if constexpr (Order == 6) pairs[4 * kThreads + threadIdx.x] = make_double2(p[7 * n + j], p[8 * n + j]);
      }
    }
    __syncthreads();
    const int count = min(kThreads, j_end - base);
    if (k >= ni) continue;
    if constexpr (Order == 8) {
      for (int q = 0; q < count; ++q) {
        double t[13];
        double dj[3];
        for (int d = 0; d < 3; ++d) dj[d] = tile[9 + d][q] - xi[9 + d];
        pair_terms<8>(tile[0][q] - xi[0], tile[1][q] - xi[1], tile[2][q] - xi[2], tile[3][q] - xi[3],
                      tile[4][q] - xi[4], tile[5][q] - xi[5], tile[6][q] - xi[6], tile[7][q] - xi[7],
                      tile[8][q] - xi[8], tile[12][q], eps2, base + q == self, t, dj);
        for (int w = 0; w < 13; ++w) sum[w] += t[w];
      }
    } else {
      sum_tile<Order, Potential>(pairs, count, xi, self - base, eps2, sum);  // self - base: its tile row, if any
    }
  }
  if (k >= ni) return;
  // Partial sums of this split: [split][i][width], the width's layout as the CPU backend's.
  constexpr int W = packed_width(Order);
  double* out = partial + (static_cast<std::size_t>(blockIdx.y) * ni + k) * W;
  if constexpr (Order == 8) {
    for (int w = 0; w < W; ++w) out[w] = sum[w];
  } else {
    double packed[W];
    finish_pair_sums<Order>(sum, packed);
    for (int w = 0; w < W; ++w) out[w] = packed[w];
  }
}

__global__ void reduce_kernel(const double* partial, int splits, int ni, int w, double* out) {
  const long e = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x;
  if (e >= static_cast<long>(ni) * w) return;
  double s = 0;
  for (int q = 0; q < splits; ++q) s += partial[static_cast<std::size_t>(q) * ni * w + e];
  out[e] = s;
}

class CudaBackend final : public ForceBackend {
 public:
  CudaBackend() {
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0)
      throw std::runtime_error("backend=cuda: no CUDA device is available");
    if (const char* e = std::getenv("SWARMFIT_NBODY_BLOCKS")) target_blocks_ = std::max(1, std::atoi(e));
  }
  std::string name() const override { return "cuda"; }

  void load(const std::vector<BodyState>& state, const std::vector<double>& time,
            const std::vector<double>& gm) override {
    load_bodies(state, time, gm, static_cast<long>(gm.size()));
  }

  void load_all(const std::vector<BodyState>& state, const std::vector<double>& time,
                const std::vector<double>& gm) override {
    load_bodies(state, time, gm, static_cast<long>(state.size()));
  }

  void active_forces(double t, int order, double eps2, const JSlice& slice, const std::vector<int>& active,
                     ForceResult& out) override {
    if (order != 4 && order != 6) throw std::logic_error("active_forces: order 4 or 6");
    const long first = slice.first, last = slice.last < 0 ? massive_ : slice.last;
    active_count_ = static_cast<int>(active.size());
    if (active_count_ == 0) return;
    staging_.reserve((active.size() + 1) / 2);
    std::copy(active.begin(), active.end(), reinterpret_cast<int*>(staging_.ptr));
    active_index_.reserve(active.size());
    check(cudaMemcpyAsync(active_index_.ptr, staging_.ptr, active.size() * sizeof(int), cudaMemcpyHostToDevice),
          "active");
    ibody_.reserve(static_cast<std::size_t>(active_count_) * 12);
    if (last > first) predict_j(t, first, last, false);
    device::predict_active(fields_.ptr, time_.ptr, n_, active_index_.ptr, active_count_, t, ibody_.ptr);
    sum(order, eps2, first, last, active_count_, active_index_.ptr, false, out);
  }

  void correct_active(double t, int order, double eta, double max_step, const ForceResult* summed,
                      std::vector<double>& wanted, std::vector<double>& next_step) override {
    const int ni = active_count_;
    wanted.resize(ni);
    next_step.resize(ni);
    if (ni == 0) return;
    const std::size_t elements = static_cast<std::size_t>(ni) * packed_width(order);
    if (summed) {  // the ranks' sums (this rank's own are in result_)
      staging_.reserve(elements);
      std::copy(summed->packed.begin(), summed->packed.begin() + elements, staging_.ptr);
      check(cudaMemcpyAsync(result_.ptr, staging_.ptr, elements * sizeof(double), cudaMemcpyHostToDevice), "sums");
    }
    wanted_.reserve(2 * static_cast<std::size_t>(ni));  // wanted, then the next steps
    device::correct_active(order, fields_.ptr, time_.ptr, n_, active_index_.ptr, ni, t, result_.ptr, eta, max_step,
                           wanted_.ptr, wanted_.ptr + ni);
    download_.reserve(2 * static_cast<std::size_t>(ni));
    check(cudaMemcpyAsync(download_.ptr, wanted_.ptr, 2 * ni * sizeof(double), cudaMemcpyDeviceToHost), "wanted");
    check(cudaStreamSynchronize(0), "wanted");
    std::copy(download_.ptr, download_.ptr + ni, wanted.begin());
    std::copy(download_.ptr + ni, download_.ptr + 2 * ni, next_step.begin());
  }

  void download(std::vector<BodyState>& state) override {
    std::vector<double> f(kStateFields * n_);
    check(cudaMemcpy(f.data(), fields_.ptr, f.size() * sizeof(double), cudaMemcpyDeviceToHost), "download");
    state.resize(n_);
    for (long j = 0; j < n_; ++j) state[j] = device::load_fields(f.data(), n_, j);
  }

  void update(const std::vector<int>& index, const std::vector<BodyState>& state,
              const std::vector<double>& time) override {
    const int count = static_cast<int>(index.size());
    if (count == 0) return;
    // One upload: the bodies' fields and times, then their indices.
    const std::size_t values = static_cast<std::size_t>(count) * (kStateFields + 1);
    staging_.reserve(values + (count + 1) / 2);
    double* packed = staging_.ptr;
    // Host loops over many bodies run on the rank's threads: every rank repeats them.
    const int pack_threads = host_threads(count, 20);
#pragma omp parallel for schedule(static) num_threads(pack_threads) if (pack_threads > 1)
    for (int k = 0; k < count; ++k) {
      const BodyState& b = state[index[k]];
      double* p = packed + static_cast<std::size_t>(k) * (kStateFields + 1);
      for (int d = 0; d < 3; ++d) {
        p[d] = b.x[d];
        p[3 + d] = b.v[d];
        p[6 + d] = b.a[d];
        p[9 + d] = b.j[d];
        p[12 + d] = b.s[d];
        p[15 + d] = b.c[d];
      }
      p[kStateFields] = time[index[k]];
    }
    std::copy(index.begin(), index.end(), reinterpret_cast<int*>(packed + values));
    update_packed_.reserve(values + (count + 1) / 2);
    check(cudaMemcpyAsync(update_packed_.ptr, packed, (values + (count + 1) / 2) * sizeof(double),
                          cudaMemcpyHostToDevice),
          "update");
    // The staging buffer is reused by the next call: wait for this copy (pinned copies are async).
    check(cudaStreamSynchronize(0), "update");
    const int* update_index = reinterpret_cast<const int*>(update_packed_.ptr + values);
    scatter_kernel<<<(count + 255) / 256, 256>>>(view(), fields_.ptr, time_.ptr, update_index, update_packed_.ptr,
                                                 count);
    check(cudaGetLastError(), "scatter");
  }

  void forces(double t, int order, double eps2, const JSlice& slice, const IBatch& batch, ForceResult& out) override {
    const long first = slice.first, last = slice.last < 0 ? massive_ : slice.last;
    const int ni = batch.size();
    const long nj = last - first;
    if (ni == 0 || nj <= 0) return;
    predict_j(t, first, last, order == 8);
    // One upload: the i bodies (12 fields each) then their indices.
    staging_.reserve(static_cast<std::size_t>(ni) * 12 + (ni + 1) / 2);
    double* ib = staging_.ptr;
    const int pack_threads = host_threads(ni, 10);
#pragma omp parallel for schedule(static) num_threads(pack_threads) if (pack_threads > 1)
    for (int k = 0; k < ni; ++k)
      for (int d = 0; d < 3; ++d) {
        ib[k * 12 + d] = batch.x[3 * k + d];
        ib[k * 12 + 3 + d] = batch.v[3 * k + d];
        ib[k * 12 + 6 + d] = batch.a[3 * k + d];
        ib[k * 12 + 9 + d] = order == 8 ? batch.j[3 * k + d] : 0.0;
      }
    std::copy(batch.index.begin(), batch.index.end(), reinterpret_cast<int*>(ib + static_cast<std::size_t>(ni) * 12));
    ibody_.reserve(static_cast<std::size_t>(ni) * 12 + (ni + 1) / 2);
    check(cudaMemcpyAsync(ibody_.ptr, ib, (static_cast<std::size_t>(ni) * 12 + (ni + 1) / 2) * sizeof(double),
                          cudaMemcpyHostToDevice),
          "i bodies");
    const int* index = reinterpret_cast<const int*>(ibody_.ptr + static_cast<std::size_t>(ni) * 12);
    sum(order, eps2, first, last, ni, index, batch.potential, out);
  }

 private:
  void load_bodies(const std::vector<BodyState>& state, const std::vector<double>& time, const std::vector<double>& gm,
                   long n) {
    n_ = n;
    massive_ = static_cast<long>(gm.size());
    fields_.reserve(kStateFields * n_);
    pred_.reserve(12 * n_);
    time_.reserve(n_);
    gm_.reserve(massive_);
    std::vector<double> f(kStateFields * n_);
    for (long j = 0; j < n_; ++j) device::store_fields(f.data(), n_, j, state[j]);
    check(cudaMemcpy(fields_.ptr, f.data(), f.size() * sizeof(double), cudaMemcpyHostToDevice), "load");
    check(cudaMemcpy(time_.ptr, time.data(), n_ * sizeof(double), cudaMemcpyHostToDevice), "load");
    check(cudaMemcpy(gm_.ptr, gm.data(), massive_ * sizeof(double), cudaMemcpyHostToDevice), "load");
  }

  void predict_j(double t, long first, long last, bool jerk) {
    predict_kernel<<<static_cast<unsigned>((last - first + 255) / 256), 256>>>(view(), t, first, last, jerk);
    check(cudaGetLastError(), "predict");
  }

  // The sums over j in [first, last) for the ni bodies of ibody_ (index: their global indices, on
  // the device), into result_ and added into out's rows.
  void sum(int order, double eps2, long first, long last, int ni, const int* index, bool potential, ForceResult& out) {
    const long nj = last - first;
    if (nj <= 0) {  // no j body: zero sums (the corrector reads result_)
      const std::size_t elements = static_cast<std::size_t>(ni) * packed_width(order);
      result_.reserve(elements);
      check(cudaMemsetAsync(result_.ptr, 0, elements * sizeof(double)), "zero");
      // The uploads from staging_ done before it is reused (the other path waits for its download).
      check(cudaStreamSynchronize(0), "zero");
      return;
    }
    const int iblocks = (ni + kThreads - 1) / kThreads;
    const long max_splits = (nj + kMinChunk - 1) / kMinChunk;
    const long splits = std::max(1L, std::min(max_splits, static_cast<long>((target_blocks_ + iblocks - 1) / iblocks)));
    const long chunk = ((nj + splits - 1) / splits + kThreads - 1) / kThreads * kThreads;
    const long used = (nj + chunk - 1) / chunk;
    const int w = packed_width(order);
    partial_.reserve(static_cast<std::size_t>(used) * ni * w);
    result_.reserve(static_cast<std::size_t>(ni) * w);
    const dim3 grid(iblocks, static_cast<unsigned>(used));
    const int j0 = static_cast<int>(first), jc = static_cast<int>(chunk), j1 = static_cast<int>(last);
    const auto launch = [&](auto kernel) {
      kernel<<<grid, kThreads>>>(view(), j0, jc, j1, eps2, ibody_.ptr, index, ni, partial_.ptr);
    };
    if (order == 8)
      launch(force_kernel<8, true>);
    else if (order == 6)
      potential ? launch(force_kernel<6, true>) : launch(force_kernel<6, false>);
    else
      potential ? launch(force_kernel<4, true>) : launch(force_kernel<4, false>);
    check(cudaGetLastError(), "force");
    const long elements = static_cast<long>(ni) * w;
    reduce_kernel<<<static_cast<unsigned>((elements + 255) / 256), 256>>>(partial_.ptr, static_cast<int>(used), ni, w,
                                                                          result_.ptr);
    check(cudaGetLastError(), "reduce");
    download_.reserve(static_cast<std::size_t>(elements));
    check(cudaMemcpyAsync(download_.ptr, result_.ptr, elements * sizeof(double), cudaMemcpyDeviceToHost), "result");
    check(cudaStreamSynchronize(0), "result");
    double* sums = out.packed.data();
    const double* got = download_.ptr;
    const int add_threads = host_threads(elements, 1);
#pragma omp parallel for schedule(static) num_threads(add_threads) if (add_threads > 1)
    for (long e = 0; e < elements; ++e) sums[e] += got[e];
  }

  JView view() { return JView{fields_.ptr, time_.ptr, gm_.ptr, pred_.ptr, n_}; }

  long n_ = 0, massive_ = 0;
  int target_blocks_ = kTargetBlocks;
  int active_count_ = 0;  // the bodies of the last active_forces
  DeviceArray<double> fields_, pred_, time_, gm_, ibody_, partial_, result_, update_packed_, wanted_;
  DeviceArray<int> active_index_;
  PinnedArray<double> staging_, download_;
};

}  // namespace

std::unique_ptr<ForceBackend> make_cuda_backend() { return std::make_unique<CudaBackend>(); }
bool nbody_cuda_built() { return true; }

}  // namespace swarmfit::nbody
