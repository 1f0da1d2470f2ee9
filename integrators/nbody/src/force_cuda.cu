// The large-N engine's forces on the GPU. The massive bodies live in device memory (structures of
// arrays) and only the bodies corrected in a block step are sent again (as Sapporo and phi-GPU keep
// their j-particles); each block step predicts them all on the device, then sums the pairs of the
// active bodies i: a thread per i, the j bodies staged through shared memory a tile at a time, and
// the j range split over the grid's second dimension so that a block step with few active bodies
// still fills the device (the j-split of Sapporo, Gaburov et al. 2009, and HiGPUs). The splits'
// partial sums are added in split order by a second kernel: the same sums on any GPU, for any
// timing. Pair terms: hermite.hpp, the same function as the CPU backend's.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "swarmfit/nbody/force_backend.hpp"

namespace swarmfit::nbody {

namespace {

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string("CUDA (nbody ") + what + "): " + cudaGetErrorString(e));
}

constexpr int kThreads = 128;       // i bodies per block, j bodies per tile
constexpr int kStateFields = 18;    // x v a j s c
constexpr int kTargetBlocks = 512;  // blocks a force launch aims at (a constant: the sums must not depend on the GPU)

template <class V>
struct DeviceArray {
  V* ptr = nullptr;
  std::size_t size = 0;
  void reserve(std::size_t n) {
    if (n <= size) return;
    if (ptr) cudaFree(ptr);
    size = std::max<std::size_t>(n, 1) + n / 2;
    check(cudaMalloc(&ptr, size * sizeof(V)), "cudaMalloc");
  }
  ~DeviceArray() {
    if (ptr) cudaFree(ptr);
  }
};

// The massive bodies: field f of body j at fields[f * n + j]; predicted x v a (j) at pred[f * n + j].
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
  BodyState b;
  for (int d = 0; d < 3; ++d) {
    b.x[d] = jv.fields[(0 + d) * jv.n + j];
    b.v[d] = jv.fields[(3 + d) * jv.n + j];
    b.a[d] = jv.fields[(6 + d) * jv.n + j];
    b.j[d] = jv.fields[(9 + d) * jv.n + j];
    b.s[d] = jv.fields[(12 + d) * jv.n + j];
    b.c[d] = jv.fields[(15 + d) * jv.n + j];
  }
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
template <int Order>
__global__ void __launch_bounds__(kThreads)
    force_kernel(JView jv, long first, long chunk, long last, double eps2, const double* ibody, const int* index,
                 int ni, double* partial) {
  constexpr int kJ = Order == 8 ? 13 : Order == 6 ? 10 : 7;  // staged fields: x v (a) (j) gm
  __shared__ double tile[kJ][kThreads];
  const int k = blockIdx.x * kThreads + threadIdx.x;
  const long j_begin = first + blockIdx.y * chunk, j_end = min(last, j_begin + chunk);
  double xi[12] = {};
  int self = -1;
  if (k < ni) {
    for (int f = 0; f < 12; ++f) xi[f] = ibody[k * 12 + f];
    self = index[k];
  }
  double sum[13] = {};
  for (long base = j_begin; base < j_end; base += kThreads) {
    const long j = base + threadIdx.x;
    __syncthreads();
    if (j < j_end) {
      for (int f = 0; f < 6; ++f) tile[f][threadIdx.x] = jv.pred[f * jv.n + j];
      if (Order >= 6)
        for (int f = 6; f < 9; ++f) tile[f][threadIdx.x] = jv.pred[f * jv.n + j];
      if (Order == 8)
        for (int f = 9; f < 12; ++f) tile[f][threadIdx.x] = jv.pred[f * jv.n + j];
      tile[kJ - 1][threadIdx.x] = jv.gm[j];
    }
    __syncthreads();
    const int count = static_cast<int>(min(static_cast<long>(kThreads), j_end - base));
    if (k < ni) {
#pragma unroll 4
      for (int q = 0; q < count; ++q) {
        double t[13];
        const double dax = Order >= 6 ? tile[6][q] - xi[6] : 0.0, day = Order >= 6 ? tile[7][q] - xi[7] : 0.0,
                     daz = Order >= 6 ? tile[8][q] - xi[8] : 0.0;
        double dj[3] = {0, 0, 0};
        if (Order == 8)
          for (int d = 0; d < 3; ++d) dj[d] = tile[9 + d][q] - xi[9 + d];
        pair_terms<Order>(tile[0][q] - xi[0], tile[1][q] - xi[1], tile[2][q] - xi[2], tile[3][q] - xi[3],
                          tile[4][q] - xi[4], tile[5][q] - xi[5], dax, day, daz, tile[kJ - 1][q], eps2,
                          base + q == self, t, dj);
        for (int w = 0; w < 6; ++w) sum[w] += t[w];
        if (Order >= 6)
          for (int w = 6; w < 9; ++w) sum[w] += t[w];
        sum[9] += t[9];
        if (Order == 8)
          for (int w = 10; w < 13; ++w) sum[w] += t[w];
      }
    }
  }
  if (k >= ni) return;
  // Partial sums of this split: [split][i][width], the width's layout as the CPU backend's.
  constexpr int W = packed_width(Order);
  double* out = partial + (static_cast<std::size_t>(blockIdx.y) * ni + k) * W;
  for (int w = 0; w < 6; ++w) out[w] = sum[w];
  if (Order == 4) {
    out[6] = sum[9];
  } else {
    for (int w = 6; w < 10; ++w) out[w] = sum[w];
    if (Order == 8)
      for (int w = 10; w < 13; ++w) out[w] = sum[w];
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
  }
  std::string name() const override { return "cuda"; }

  void load(const std::vector<BodyState>& state, const std::vector<double>& time,
            const std::vector<double>& gm) override {
    n_ = static_cast<long>(gm.size());
    fields_.reserve(kStateFields * n_);
    pred_.reserve(12 * n_);
    time_.reserve(n_);
    gm_.reserve(n_);
    std::vector<double> f(kStateFields * n_);
    for (long j = 0; j < n_; ++j) pack_fields(state[j], f.data(), j, n_);
    check(cudaMemcpy(fields_.ptr, f.data(), f.size() * sizeof(double), cudaMemcpyHostToDevice), "load");
    check(cudaMemcpy(time_.ptr, time.data(), n_ * sizeof(double), cudaMemcpyHostToDevice), "load");
    check(cudaMemcpy(gm_.ptr, gm.data(), n_ * sizeof(double), cudaMemcpyHostToDevice), "load");
  }

  void update(const std::vector<int>& index, const std::vector<BodyState>& state,
              const std::vector<double>& time) override {
    const int count = static_cast<int>(index.size());
    if (count == 0) return;
    std::vector<double> packed(static_cast<std::size_t>(count) * (kStateFields + 1));
    for (int k = 0; k < count; ++k) {
      const BodyState& b = state[index[k]];
      double* p = &packed[static_cast<std::size_t>(k) * (kStateFields + 1)];
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
    update_index_.reserve(count);
    update_packed_.reserve(packed.size());
    check(cudaMemcpy(update_index_.ptr, index.data(), count * sizeof(int), cudaMemcpyHostToDevice), "update");
    check(cudaMemcpy(update_packed_.ptr, packed.data(), packed.size() * sizeof(double), cudaMemcpyHostToDevice),
          "update");
    scatter_kernel<<<(count + 255) / 256, 256>>>(view(), fields_.ptr, time_.ptr, update_index_.ptr, update_packed_.ptr,
                                                 count);
    check(cudaGetLastError(), "scatter");
  }

  void forces(double t, int order, double eps2, const JSlice& slice, const IBatch& batch, ForceResult& out) override {
    const long first = slice.first, last = slice.last < 0 ? n_ : slice.last;
    const int ni = batch.size();
    const long nj = last - first;
    if (ni == 0 || nj <= 0) return;
    predict_kernel<<<static_cast<unsigned>((nj + 255) / 256), 256>>>(view(), t, first, last, order == 8);
    check(cudaGetLastError(), "predict");
    std::vector<double> ib(static_cast<std::size_t>(ni) * 12, 0.0);
    for (int k = 0; k < ni; ++k)
      for (int d = 0; d < 3; ++d) {
        ib[k * 12 + d] = batch.x[3 * k + d];
        ib[k * 12 + 3 + d] = batch.v[3 * k + d];
        ib[k * 12 + 6 + d] = batch.a[3 * k + d];
        if (order == 8) ib[k * 12 + 9 + d] = batch.j[3 * k + d];
      }
    ibody_.reserve(ib.size());
    index_.reserve(ni);
    check(cudaMemcpy(ibody_.ptr, ib.data(), ib.size() * sizeof(double), cudaMemcpyHostToDevice), "i bodies");
    check(cudaMemcpy(index_.ptr, batch.index.data(), ni * sizeof(int), cudaMemcpyHostToDevice), "i bodies");
    const int iblocks = (ni + kThreads - 1) / kThreads;
    const long max_splits = (nj + kThreads - 1) / kThreads;
    const long splits = std::max(1L, std::min(max_splits, static_cast<long>((kTargetBlocks + iblocks - 1) / iblocks)));
    const long chunk = ((nj + splits - 1) / splits + kThreads - 1) / kThreads * kThreads;
    const long used = (nj + chunk - 1) / chunk;
    const int w = packed_width(order);
    partial_.reserve(static_cast<std::size_t>(used) * ni * w);
    result_.reserve(static_cast<std::size_t>(ni) * w);
    const dim3 grid(iblocks, static_cast<unsigned>(used));
    if (order == 8)
      force_kernel<8><<<grid, kThreads>>>(view(), first, chunk, last, eps2, ibody_.ptr, index_.ptr, ni, partial_.ptr);
    else if (order == 6)
      force_kernel<6><<<grid, kThreads>>>(view(), first, chunk, last, eps2, ibody_.ptr, index_.ptr, ni, partial_.ptr);
    else
      force_kernel<4><<<grid, kThreads>>>(view(), first, chunk, last, eps2, ibody_.ptr, index_.ptr, ni, partial_.ptr);
    check(cudaGetLastError(), "force");
    const long elements = static_cast<long>(ni) * w;
    reduce_kernel<<<static_cast<unsigned>((elements + 255) / 256), 256>>>(partial_.ptr, static_cast<int>(used), ni, w,
                                                                          result_.ptr);
    check(cudaGetLastError(), "reduce");
    std::vector<double> r(static_cast<std::size_t>(elements));
    check(cudaMemcpy(r.data(), result_.ptr, r.size() * sizeof(double), cudaMemcpyDeviceToHost), "result");
    for (int k = 0; k < ni; ++k) out.add_packed(k, order, &r[static_cast<std::size_t>(k) * w]);
  }

 private:
  static void pack_fields(const BodyState& b, double* f, long j, long n) {
    for (int d = 0; d < 3; ++d) {
      f[(0 + d) * n + j] = b.x[d];
      f[(3 + d) * n + j] = b.v[d];
      f[(6 + d) * n + j] = b.a[d];
      f[(9 + d) * n + j] = b.j[d];
      f[(12 + d) * n + j] = b.s[d];
      f[(15 + d) * n + j] = b.c[d];
    }
  }
  JView view() { return JView{fields_.ptr, time_.ptr, gm_.ptr, pred_.ptr, n_}; }

  long n_ = 0;
  DeviceArray<double> fields_, pred_, time_, gm_, ibody_, partial_, result_, update_packed_;
  DeviceArray<int> index_, update_index_;
};

}  // namespace

std::unique_ptr<ForceBackend> make_cuda_backend() { return std::make_unique<CudaBackend>(); }
bool nbody_cuda_built() { return true; }

}  // namespace swarmfit::nbody
