// Multigrid V-cycles on the GPU (Briggs, Henson & McCormick 2000, "A Multigrid Tutorial", ch. 3),
// the CPU's solver (multigrid.cpp) kernel for kernel: red-black Gauss-Seidel smoothing as Aubert,
// Amini & David 2009 ran it on the GPU (a kernel a colour, each cell's update reading only cells of
// the other colour, so a half-sweep has no races), the residual, restriction, prolongation, the
// coarsest level relaxed with kMultigridCoarsestSweeps, the mean removed, and the same stopping
// rule. Each cell's arithmetic is multigrid.hpp's (gauss_seidel, laplacian_at, restricted,
// prolonged, mg_cell), shared with the CPU, and this file is compiled with -fmad=false
// (integrators/CMakeLists.txt) so that it rounds as the CPU's, which is built without contraction.
//
// What still differs from the CPU is the order of the sums: the density's deposit (atomic adds),
// the mean and the norms (a fixed-order two-pass reduction here, a serial loop there). The results
// then agree to round-off, and the cycle count differs from the CPU's only when a cycle's residual
// lands within round-off of the tolerance (one side here, the other there).
#include <cuda_runtime.h>

#include <cmath>
#include <stdexcept>
#include <string>

#include "multigrid_cuda.hpp"

namespace swarmfit::pm {

namespace {

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess)
    throw std::runtime_error(std::string("CUDA (pm multigrid ") + what + "): " + cudaGetErrorString(e));
}
void launched(const char* what) { check(cudaGetLastError(), what); }

constexpr int kThreads = 256;
// The reduction's blocks: fixed, so that its order (and its bits) does not depend on the device.
constexpr int kReduceBlocks = 256;
static_assert(kReduceBlocks <= kThreads, "the second pass sums the partial sums in one block");

unsigned blocks(long count) { return static_cast<unsigned>((count + kThreads - 1) / kThreads); }

__device__ long thread_index() { return static_cast<long>(blockIdx.x) * blockDim.x + threadIdx.x; }

// Cell t of an n^3 mesh as (i, j, k), row-major (mg_cell's order).
__device__ void cell_of(long t, int n, int& i, int& j, int& k) {
  k = static_cast<int>(t % n);
  j = static_cast<int>((t / n) % n);
  i = static_cast<int>(t / (static_cast<long>(n) * n));
}

// A half-sweep: the cells (i + j + k) & 1 == colour, the CPU's smooth() loop with a thread a cell.
__global__ void smooth_kernel(int n, double h2, const double* f, double* phi, int colour) {
  const long t = thread_index();
  const int half = n / 2;
  if (t >= static_cast<long>(n) * n * half) return;
  const int i = static_cast<int>(t / (static_cast<long>(half) * n)), j = static_cast<int>((t / half) % n);
  const int k = 2 * static_cast<int>(t % half) + ((i + j + colour) & 1);
  phi[mg_cell(n, i, j, k)] = gauss_seidel(phi, f, n, h2, i, j, k);
}

// r = f - lap(phi).
__global__ void residual_kernel(int n, double inv_h2, const double* f, const double* phi, double* r) {
  const long t = thread_index();
  if (t >= static_cast<long>(n) * n * n) return;
  int i, j, k;
  cell_of(t, n, i, j, k);
  const long c = mg_cell(n, i, j, k);
  r[c] = f[c] - laplacian_at(phi, n, inv_h2, i, j, k);
}

// The residual of the n^3 mesh restricted to the source of the n/2 one.
__global__ void restrict_kernel(int n, const double* r, double* fc) {
  const int nc = n / 2;
  const long t = thread_index();
  if (t >= static_cast<long>(nc) * nc * nc) return;
  int I, J, K;
  cell_of(t, nc, I, J, K);
  fc[mg_cell(nc, I, J, K)] = restricted(r, n, I, J, K);
}

// The coarse correction (n/2 mesh) prolonged and added to the n^3 mesh's solution.
__global__ void prolong_kernel(int n, const double* ec, double* phi) {
  const long t = thread_index();
  if (t >= static_cast<long>(n) * n * n) return;
  int i, j, k;
  cell_of(t, n, i, j, k);
  phi[mg_cell(n, i, j, k)] += prolonged(ec, n / 2, i, j, k);
}

// Fixed-order sums (or sums of squares) in FP64: each of kReduceBlocks blocks strides over the
// array in a fixed order and halves its threads' sums in shared memory; a second launch of one
// block does the same with the blocks' sums. No atomics: the same bits on every run.
template <class T>
__global__ void reduce_kernel(const T* v, long size, bool squares, double* out) {
  __shared__ double part[kThreads];
  double s = 0;
  for (long c = thread_index(); c < size; c += static_cast<long>(gridDim.x) * kThreads) {
    const double x = static_cast<double>(v[c]);
    s += squares ? x * x : x;
  }
  part[threadIdx.x] = s;
  __syncthreads();
  for (int w = kThreads / 2; w > 0; w /= 2) {
    if (threadIdx.x < w) part[threadIdx.x] += part[threadIdx.x + w];
    __syncthreads();
  }
  if (threadIdx.x == 0) out[blockIdx.x] = part[0];
}

// v -= sum / size (remove_mean's second loop; the sum stays on the device).
__global__ void subtract_mean_kernel(long size, const double* sum, double* v) {
  const long t = thread_index();
  if (t >= size) return;
  const double mean = *sum / static_cast<double>(size);
  v[t] -= mean;
}

// The source of the CPU backend's multigrid solve, f = 4 pi G (rho - mean rho), in FP64.
template <class Real>
__global__ void source_kernel(long size, const Real* rho, const double* sum, double four_pi_G, double* f) {
  const long t = thread_index();
  if (t >= size) return;
  const double mean = *sum / static_cast<double>(size);
  f[t] = four_pi_G * (static_cast<double>(rho[t]) - mean);
}

// The solution back into the mesh in the particles' precision (what the gradient reads).
template <class Real>
__global__ void store_kernel(long size, const double* phi, Real* mesh) {
  const long t = thread_index();
  if (t < size) mesh[t] = static_cast<Real>(phi[t]);
}

double* device_doubles(long count) {
  double* p = nullptr;
  check(cudaMalloc(&p, static_cast<std::size_t>(count) * sizeof(double)), "cudaMalloc");
  return p;
}

}  // namespace

CudaMultigrid::CudaMultigrid(const PmSettings& s)
    : four_pi_G_(4.0 * M_PI * s.G),  // (the CPU's 4.0 * M_PI * G, the same product in the same order)
      tolerance_(s.multigrid_tolerance),
      max_cycles_(s.multigrid_max_cycles) {
  s.check();  // (a power of two >= 8)
  if (s.boundary != Boundary::periodic) throw std::invalid_argument("solver = multigrid needs periodic boundaries");
  try {
    // The CPU's recursion: a level of n cells a side and spacing h, then n/2 and 2h, until the
    // coarsest (n <= kMultigridCoarsest), which needs no residual.
    for (int n = s.mesh;; n /= 2) {
      Level a;
      a.n = n;
      a.h = levels_.empty() ? s.cell() : 2 * levels_.back().h;
      levels_.push_back(a);  // (pushed first: release() frees whatever was allocated)
      levels_.back().f = device_doubles(a.cells());
      levels_.back().phi = device_doubles(a.cells());
      if (n <= kMultigridCoarsest) break;
      levels_.back().r = device_doubles(a.cells());
    }
    partial_ = device_doubles(kReduceBlocks);
    total_ = device_doubles(1);
  } catch (...) {
    release();
    throw;
  }
}

CudaMultigrid::~CudaMultigrid() { release(); }

void CudaMultigrid::release() {
  for (Level& a : levels_)
    for (double** p : {&a.f, &a.phi, &a.r})
      if (*p) {
        cudaFree(*p);
        *p = nullptr;
      }
  levels_.clear();
  for (double** p : {&partial_, &total_})
    if (*p) {
      cudaFree(*p);
      *p = nullptr;
    }
}

template <class T>
void CudaMultigrid::sum(const T* v, long size, bool squares) {
  reduce_kernel<T><<<kReduceBlocks, kThreads>>>(v, size, squares, partial_);
  reduce_kernel<double><<<1, kThreads>>>(partial_, kReduceBlocks, false, total_);
  launched("reduction");
}

void CudaMultigrid::remove_mean(double* v, long size) {
  sum(v, size, false);
  subtract_mean_kernel<<<blocks(size), kThreads>>>(size, total_, v);
  launched("remove mean");
}

double CudaMultigrid::norm(const double* v, long size) {
  sum(v, size, true);
  double squares = 0;
  check(cudaMemcpy(&squares, total_, sizeof(double), cudaMemcpyDeviceToHost), "norm");
  return std::sqrt(squares);
}

// Red-black Gauss-Seidel: for each sweep, colour 0 then colour 1 (the CPU's order).
void CudaMultigrid::smooth(const Level& a, int sweeps) {
  const double h2 = a.h * a.h;
  const long half_cells = a.cells() / 2;
  for (int s = 0; s < sweeps; ++s)
    for (int colour = 0; colour < 2; ++colour)
      smooth_kernel<<<blocks(half_cells), kThreads>>>(a.n, h2, a.f, a.phi, colour);
  launched("smoothing");
}

void CudaMultigrid::residual(const Level& a) {
  residual_kernel<<<blocks(a.cells()), kThreads>>>(a.n, 1.0 / (a.h * a.h), a.f, a.phi, a.r);
  launched("residual");
}

// One V-cycle on a level (multigrid.cpp's v_cycle): pre-smoothing, the residual restricted to the
// next level's source, a V-cycle there from zero, its correction prolonged and added,
// post-smoothing; the coarsest level relaxed with kMultigridCoarsestSweeps and its mean removed.
void CudaMultigrid::v_cycle(std::size_t level) {
  const Level& a = levels_[level];
  if (a.n <= kMultigridCoarsest) {
    smooth(a, kMultigridCoarsestSweeps);
    remove_mean(a.phi, a.cells());
    return;
  }
  smooth(a, kMultigridSweeps);
  residual(a);
  const Level& b = levels_[level + 1];
  restrict_kernel<<<blocks(b.cells()), kThreads>>>(a.n, a.r, b.f);
  launched("restriction");
  check(cudaMemsetAsync(b.phi, 0, b.cells() * sizeof(double)), "memset");
  v_cycle(level + 1);
  prolong_kernel<<<blocks(a.cells()), kThreads>>>(a.n, b.phi, a.phi);
  launched("prolongation");
  smooth(a, kMultigridSweeps);
}

// multigrid_solve (multigrid.cpp) as pm_cpu.cpp's solve() calls it: the source from the density,
// the solution from zero every time as on the CPU (not from the last solve's: a solve then depends
// on its density alone), V-cycles with the mean removed after each, until the residual's norm over
// the source's is below the tolerance or max_cycles.
template <class Real>
MultigridResult CudaMultigrid::solve(Real* mesh) {
  const Level& top = levels_.front();
  const long size = top.cells();
  sum(mesh, size, false);
  source_kernel<<<blocks(size), kThreads>>>(size, mesh, total_, four_pi_G_, top.f);
  launched("source");
  check(cudaMemsetAsync(top.phi, 0, size * sizeof(double)), "memset");
  MultigridResult result;
  const double source = norm(top.f, size);
  if (source != 0) {
    for (result.cycles = 1; result.cycles <= max_cycles_; ++result.cycles) {
      v_cycle(0);
      remove_mean(top.phi, size);
      residual(top);
      result.residual = norm(top.r, size) / source;
      if (result.residual < tolerance_) break;
    }
    if (result.cycles > max_cycles_) result.cycles = max_cycles_;
  }
  store_kernel<<<blocks(size), kThreads>>>(size, top.phi, mesh);
  launched("store");
  return result;
}

template MultigridResult CudaMultigrid::solve(float*);
template MultigridResult CudaMultigrid::solve(double*);

}  // namespace swarmfit::pm
