// The particle-mesh forces on the GPU (Aubert, Amini & David 2009: assignment, FFT Poisson solve,
// finite differences and interpolation on the device): the particles uploaded, their masses added
// to the mesh with atomic adds, the potential by cuFFT with the host's Green's function
// (green.hpp, the CPU backend's numbers), minus its gradient, and the accelerations interpolated
// back, with the stencils and differences of kernels.hpp (the CPU backend's functions). The
// atomic adds make the last bits of a GPU run depend on the order the threads land: GPU runs agree
// with the CPU to round-off, not bitwise with themselves.
//
// Memory traffic is what a step costs here, so the pipeline moves each mesh as few times as it
// can: the masses go straight into the FFT's input (for an isolated mesh into its octant of the
// doubled mesh), the potential comes back into the same buffer and stays there for snapshots, and
// one pass over it writes a cell's three acceleration components side by side (for the
// interpolation, whose loads of a node then share their sectors). The density of a
// snapshot is deposited again on request from the same positions. Phases are timed with CUDA
// events, so the device runs a step without waiting for the host.
//
// The deposit's global atomic adds bound it (the L2's atomic units), so a resident run keeps its
// particles ordered by bricks of 8^3 cells and by cell inside each brick (a radix sort by brick
// and cell, undone for the host's copies) and deposits brick by brick: each brick's particles into
// a tile of the brick's nodes in shared memory, then one global add a node (Aubert et al. 2009
// likewise assign by histogramming particles sorted with CUDPP rather than by atomic adds; Hockney
// & Eastwood's charge assignment is unchanged).
// A particle that has drifted about kMargin cells out of its brick since the sort adds straight
// into the mesh; the device counts
// those strays, and the particles are sorted again once they are more than 1/kStrayShare of them
// (or kMaxSortInterval steps have passed). Bricks pay where the mesh holds half a particle a cell
// or more (their tiles' set-up costs more than it saves on sparser meshes).
#include <cuda_runtime.h>
#include <cufft.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cub/device/device_radix_sort.cuh>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "multigrid_cuda.hpp"
#include "swarmfit/pm/green.hpp"
#include "swarmfit/pm/pm.hpp"

namespace swarmfit::pm {

namespace {

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string("CUDA (pm ") + what + "): " + cudaGetErrorString(e));
}
void check(cufftResult r, const char* what) {
  if (r != CUFFT_SUCCESS) throw std::runtime_error(std::string("cuFFT (pm ") + what + "): error " + std::to_string(r));
}
void launched(const char* what) { check(cudaGetLastError(), what); }

template <class T>
struct Buffer {
  T* ptr = nullptr;
  std::size_t size = 0;
  void resize(std::size_t n) {
    if (n <= size) return;
    if (ptr) cudaFree(ptr);
    check(cudaMalloc(&ptr, std::max<std::size_t>(n, 1) * sizeof(T)), "cudaMalloc");
    size = n;
  }
  ~Buffer() {
    if (ptr) cudaFree(ptr);
  }
};
template <class T>
void swap_buffers(Buffer<T>& a, Buffer<T>& b) {
  std::swap(a.ptr, b.ptr);
  std::swap(a.size, b.size);
}

// cuFFT's single and double precision interfaces under one name.
template <class Real>
struct Cufft;
template <>
struct Cufft<float> {
  using Complex = cufftComplex;
  static constexpr cufftType kForward = CUFFT_R2C, kBackward = CUFFT_C2R;
  static cufftResult forward(cufftHandle p, float* in, Complex* out) { return cufftExecR2C(p, in, out); }
  static cufftResult backward(cufftHandle p, Complex* in, float* out) { return cufftExecC2R(p, in, out); }
};
template <>
struct Cufft<double> {
  using Complex = cufftDoubleComplex;
  static constexpr cufftType kForward = CUFFT_D2Z, kBackward = CUFFT_Z2D;
  static cufftResult forward(cufftHandle p, double* in, Complex* out) { return cufftExecD2Z(p, in, out); }
  static cufftResult backward(cufftHandle p, Complex* in, double* out) { return cufftExecZ2D(p, in, out); }
};

// A cell's minus-gradient of the potential along x, y and z, side by side (a warp's loads of a
// node's three components fall in the same sectors).
template <class Real>
struct Field {
  Real a[3];
};
// FP32: padded to 16 bytes, so that a node is one vector load in the particles' pass.
template <>
struct alignas(16) Field<float> {
  float a[4];
};

// A mesh of n cells a side stored in an array whose rows are `side` long (n, or the doubled FFT
// mesh of an isolated solve, whose first octant is the mesh).
struct MeshView {
  int n, side;
  double h, inv_h, origin[3];
  bool periodic;
  double lower, upper;  // the usable region, cells
  __device__ int wrap(int i) const { return i & (n - 1); }
  __device__ std::size_t index(int i, int j, int k) const {
    return (static_cast<std::size_t>(i) * side + j) * side + k;
  }
};

template <class Real>
struct Particles {
  const Real* x[3];
  const Real* mass;
  int* status;
  long count;
};

// The quotient (x - origin) / h as the CPU backend's division rounds it: the product with the
// reciprocal corrected by its fused residual (Markstein's correction step), three FP64 operations
// instead of a division's longer sequence, three a particle in every deposit and interpolation.
template <class Real>
__device__ Real cell_units(const MeshView& m, const Real* x, long i, int d) {
  const double a = static_cast<double>(x[i]) - m.origin[d];
  const double q = a * m.inv_h;
  return static_cast<Real>(fma(fma(-q, m.h, a), m.inv_h, q));
}

// A particle's stencil (first cells and weights) and its mass over the cell volume; false (and
// status 1) for a particle that left an isolated mesh's usable region.
template <Assignment A, class Real>
__device__ bool deposit_stencil(const MeshView& m, const Particles<Real>& p, long i, int c[3], Real w[3][3],
                                Real& density) {
  bool inside = true;
  for (int d = 0; d < 3; ++d) {
    const Real s = cell_units(m, p.x[d], i, d);
    if (!m.periodic && !(s >= m.lower && s < m.upper)) inside = false;
    stencil<A>(s, c[d], w[d]);
  }
  if (!inside) {  // left an isolated mesh's usable region: no mass, no force from now on
    p.status[i] = 1;
    return false;
  }
  density = static_cast<Real>(p.mass[i] * (m.inv_h * m.inv_h * m.inv_h));
  return true;
}

template <Assignment A, class Real>
__global__ void deposit_kernel(MeshView m, Particles<Real> p, Real* rho) {
  constexpr int W = stencil_width(A);
  const long i = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x;
  if (i >= p.count || p.status[i] != 0) return;
  int c[3];
  Real w[3][3], mass;
  if (!deposit_stencil<A>(m, p, i, c, w, mass)) return;
  for (int a = 0; a < W; ++a)
    for (int b = 0; b < W; ++b)
      for (int e = 0; e < W; ++e)
        atomicAdd(&rho[m.index(m.wrap(c[0] + a), m.wrap(c[1] + b), m.wrap(c[2] + e))],
                  mass * w[0][a] * w[1][b] * w[2][e]);
}

constexpr int kBrick = 8;                        // cells a side of a brick
constexpr int kMargin = 1;                       // cells a particle may drift out of its brick into its tile
constexpr int kTile = kBrick + 2 + 2 * kMargin;  // nodes a side of a brick's tile (stencils reach a cell out)
constexpr int kStrayShare = 32;                  // sort again once 1/32 of the particles are strays
constexpr int kMaxSortInterval = 64;             // and at least this often (the gather's order)

// The sort key of each particle: its brick (bricks^3 of them, row-major; `bricks^3` for a particle
// off the mesh) above its cell's place in the brick (row-major, `shift` = 9 bits; 0 where the key
// would not fit 32 bits), so that the brick's particles are in cell order: a warp's neighbours in
// the particles' pass and the deposit then share nodes and cache lines. And its index, the sort's
// payload.
template <class Real>
__global__ void brick_key_kernel(MeshView m, Particles<Real> p, int bricks, int shift, unsigned* key, unsigned* index) {
  const long i = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x;
  if (i >= p.count) return;
  unsigned b = static_cast<unsigned>(bricks) * bricks * bricks, cell = 0;
  if (p.status[i] == 0) {
    int c[3];
    for (int d = 0; d < 3; ++d) {
      const Real s = cell_units(m, p.x[d], i, d);
      c[d] = min(max(static_cast<int>(floor(s)), 0), m.n - 1);
    }
    b = (static_cast<unsigned>(c[0] / kBrick) * bricks + c[1] / kBrick) * bricks + c[2] / kBrick;
    cell = (static_cast<unsigned>(c[0] % kBrick) * kBrick + c[1] % kBrick) * kBrick + c[2] % kBrick;
  }
  key[i] = shift > 0 ? (b << shift) | cell : b;
  index[i] = static_cast<unsigned>(i);
}

// The first sorted particle of each brick (and of the off-mesh bin after the last): a binary search.
__global__ void brick_start_kernel(const unsigned* key, long count, unsigned bins, int shift, unsigned* start) {
  const unsigned b = blockIdx.x * blockDim.x + threadIdx.x;
  if (b > bins) return;
  long lo = 0, hi = count;
  while (lo < hi) {
    const long mid = (lo + hi) / 2;
    if ((key[mid] >> shift) < b)
      lo = mid + 1;
    else
      hi = mid;
  }
  start[b] = static_cast<unsigned>(lo);
}

// to[s] = from[index[s]] (sorting), or to[index[s]] = from[s] (undoing it).
template <class T>
__global__ void permute_kernel(const T* from, T* to, const unsigned* index, long count, bool scatter) {
  const long s = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x;
  if (s >= count) return;
  if (scatter)
    to[index[s]] = from[s];
  else
    to[s] = from[index[s]];
}

__global__ void identity_kernel(unsigned* index, long count) {
  const long s = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x;
  if (s < count) index[s] = static_cast<unsigned>(s);
}

// One brick's particles (sorted by brick) into its tile of nodes in shared memory, then the tile's
// non-zero nodes into the mesh. The same sums as deposit_kernel, grouped by brick.
template <Assignment A, class Real, int MinBlocks>
__global__ void __launch_bounds__(256, MinBlocks)
    brick_deposit_kernel(MeshView m, Particles<Real> p, const unsigned* start, int bricks, Real* rho,
                         unsigned long long* strays) {
  constexpr int W = stencil_width(A), kNodes = kTile * kTile * kTile;
  __shared__ Real tile[kNodes];
  __shared__ unsigned block_strays;  // (one global add a block: a hot gas may stray whole)
  const int b = blockIdx.x;
  const unsigned first = start[b], last = start[b + 1];
  if (first == last) return;  // (the whole block: an empty brick)
  const int lo[3] = {(b / (bricks * bricks)) * kBrick - 1 - kMargin, ((b / bricks) % bricks) * kBrick - 1 - kMargin,
                     (b % bricks) * kBrick - 1 - kMargin};
  for (int t = threadIdx.x; t < kNodes; t += blockDim.x) tile[t] = 0;
  if (threadIdx.x == 0) block_strays = 0;
  __syncthreads();
  for (long s = first + threadIdx.x; s < last; s += blockDim.x) {
    if (p.status[s] != 0) continue;
    int c[3];
    Real w[3][3], mass;
    if (!deposit_stencil<A>(m, p, s, c, w, mass)) continue;
    int t[3];
    bool in_tile = true;
    for (int d = 0; d < 3; ++d) {
      t[d] = c[d] - lo[d];
      in_tile = in_tile && t[d] >= 0 && t[d] + W <= kTile;
    }
    if (!in_tile) atomicAdd(&block_strays, 1u);
    for (int x = 0; x < W; ++x)
      for (int y = 0; y < W; ++y)
        for (int z = 0; z < W; ++z) {
          const Real v = mass * w[0][x] * w[1][y] * w[2][z];
          if (in_tile)
            atomicAdd(&tile[((t[0] + x) * kTile + t[1] + y) * kTile + t[2] + z], v);
          else
            atomicAdd(&rho[m.index(m.wrap(c[0] + x), m.wrap(c[1] + y), m.wrap(c[2] + z))], v);
        }
  }
  __syncthreads();
  if (threadIdx.x == 0 && block_strays > 0) atomicAdd(strays, static_cast<unsigned long long>(block_strays));
  for (int t = threadIdx.x; t < kNodes; t += blockDim.x) {
    const Real v = tile[t];
    if (v == Real(0)) continue;
    const int x = t / (kTile * kTile), y = (t / kTile) % kTile, z = t % kTile;
    atomicAdd(&rho[m.index(m.wrap(lo[0] + x), m.wrap(lo[1] + y), m.wrap(lo[2] + z))], v);
  }
}

// Minus the gradient of the potential (`phi`, in the view's array) for the mesh's n^3 cells, a
// cell's components side by side. A thread a cell along z: i = blockIdx.z, j = blockIdx.y.
template <int Order, class Real>
__global__ void gradient_kernel(MeshView m, const Real* phi, Field<Real>* out) {
  const int n = m.n, k = blockIdx.x * blockDim.x + threadIdx.x, j = blockIdx.y, i = blockIdx.z;
  if (k >= n) return;
  const int reach = Order / 2, lo = m.periodic ? 0 : reach, hi = m.periodic ? n : n - reach;
  const bool inside = i >= lo && i < hi && j >= lo && j < hi && k >= lo && k < hi;
  // (a 64-bit product a load: a row's offset fits 32 bits)
  const std::size_t plane = static_cast<std::size_t>(m.side) * m.side;
  auto at = [&](int a, int b, int e) {
    return static_cast<double>(phi[m.wrap(a) * plane + static_cast<unsigned>(m.wrap(b) * m.side + m.wrap(e))]);
  };
  Field<Real> f{};
  for (int d = 0; d < 3; ++d)
    f.a[d] = inside ? static_cast<Real>(minus_gradient<Order>(at, i, j, k, d, m.inv_h)) : Real(0);
  out[(static_cast<std::size_t>(i) * n + j) * n + k] = f;
}

// The mesh's n^3 cells of the view's array into a plain n^3 array (to = nullptr) or into one
// component of the fields (the force kernels' solves).
template <class Real>
__global__ void cells_kernel(MeshView m, const Real* from, Real* to, Field<Real>* fields, int component) {
  const int n = m.n, k = blockIdx.x * blockDim.x + threadIdx.x, j = blockIdx.y, i = blockIdx.z;
  if (k >= n) return;
  const std::size_t c = (static_cast<std::size_t>(i) * n + j) * n + k;
  const Real v = from[m.index(i, j, k)];
  if (to)
    to[c] = v;
  else
    fields[c].a[component] = v;
}

// Potential: the spectrum times the (real) multiplier; force kernels: times i g (imaginary).
template <class Complex, class Real>
__global__ void multiply_kernel(Complex* spectrum, const Complex* source, const Real* g, std::size_t size,
                                bool imaginary) {
  const std::size_t k = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (k >= size) return;
  const Complex s = source[k];
  if (imaginary) {
    spectrum[k].x = -s.y * g[k];
    spectrum[k].y = s.x * g[k];
  } else {
    spectrum[k].x = s.x * g[k];
    spectrum[k].y = s.y * g[k];
  }
}

// The accelerations at particle i from the mesh's fields and, with `phi` (addressed by `pm`), the
// potential, with its assignment stencil; zero for a particle off the mesh.
template <Assignment A, class Real>
__device__ void gather_at(const MeshView& m, const Particles<Real>& p, long i, const Field<Real>* fields,
                          const MeshView& pm, const Real* phi, Real a[3], Real& u) {
  constexpr int W = stencil_width(A);
  a[0] = a[1] = a[2] = u = 0;
  if (p.status[i] != 0) return;
  int c[3];
  Real w[3][3];
  for (int d = 0; d < 3; ++d) stencil<A>(cell_units(m, p.x[d], i, d), c[d], w[d]);
  for (int x = 0; x < W; ++x)
    for (int y = 0; y < W; ++y)
      for (int z = 0; z < W; ++z) {
        const Real wxyz = w[0][x] * w[1][y] * w[2][z];
        const int cx = m.wrap(c[0] + x), cy = m.wrap(c[1] + y), cz = m.wrap(c[2] + z);
        const Field<Real> f = fields[m.index(cx, cy, cz)];
        a[0] += wxyz * f.a[0];
        a[1] += wxyz * f.a[1];
        a[2] += wxyz * f.a[2];
        if (phi) u += wxyz * phi[pm.index(cx, cy, cz)];
      }
}

template <Assignment A, class Real>
__global__ void gather_kernel(MeshView m, Particles<Real> p, const Field<Real>* fields, MeshView pm, const Real* phi,
                              Real* acc, Real* pot) {
  const long i = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x;
  if (i >= p.count) return;
  Real a[3], u;
  gather_at<A>(m, p, i, fields, pm, pot ? phi : nullptr, a, u);
  for (int d = 0; d < 3; ++d) acc[d * p.count + i] = a[d];
  if (pot) pot[i] = u;
}

// The leapfrog's kicks fused with the interpolation (kernels.hpp's kick and drift): the
// accelerations at the particles' positions, the last step's closing half kick (`owed`, deferred
// to here so that the accelerations never leave the registers), then with `open` the next step's
// opening half kick and its drift, with the periodic wrap. One pass over the particles a step
// instead of three (gather, kick and drift, kick).
template <Assignment A, class Real>
__global__ void gather_kick_drift_kernel(MeshView m, Particles<Real> p, const Field<Real>* fields, Real* x0, Real* x1,
                                         Real* x2, Real* v0, Real* v1, Real* v2, bool kick_owed, Real owed, bool open,
                                         Real half, Real full, double box) {
  const long i = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x;
  if (i >= p.count) return;
  Real a[3], u;
  gather_at<A>(m, p, i, fields, m, static_cast<const Real*>(nullptr), a, u);
  Real* x[3] = {x0, x1, x2};
  Real* v[3] = {v0, v1, v2};
  for (int d = 0; d < 3; ++d) {
    Real vd = v[d][i];
    if (kick_owed) kick(vd, a[d], owed);
    if (open) {
      kick(vd, a[d], half);
      Real xd = x[d][i];
      drift(xd, vd, full);
      if (m.periodic) xd = static_cast<Real>(periodic_wrap(static_cast<double>(xd), m.origin[d], box));
      x[d][i] = xd;
    }
    v[d][i] = vd;
  }
}

unsigned blocks(long n, int threads = 256) { return static_cast<unsigned>((n + threads - 1) / threads); }

// A launch over a mesh's n^3 cells, a thread a cell along z (gradient_kernel, cells_kernel).
struct CellLaunch {
  dim3 grid, block;
  explicit CellLaunch(int n) : block(std::min(n, 256)) { grid = dim3((n + block.x - 1) / block.x, n, n); }
};

// The device's phases timed by CUDA events recorded on the stream: each lap() attributes the time
// since the previous event to a phase; settle() waits for the last one and sums the laps.
class PhaseClock {
 public:
  enum Phase { sort, assign, solve, gradient, particles, count };
  ~PhaseClock() {
    for (cudaEvent_t e : pool_) cudaEventDestroy(e);
  }
  void start() {  // (also after a throw left an unsettled lap behind)
    used_ = 0;
    phases_.clear();
    record(count);
  }
  void lap(Phase phase) { record(phase); }
  // Seconds per phase since start(), summed over laps; waits for the device.
  std::vector<double> settle() {
    std::vector<double> seconds(count + 1, 0.0);
    if (used_ == 0) return seconds;
    check(cudaEventSynchronize(pool_[used_ - 1]), "event");
    for (int k = 1; k < used_; ++k) {
      if (phases_[k] == count) continue;
      float ms = 0;
      check(cudaEventElapsedTime(&ms, pool_[k - 1], pool_[k]), "event time");
      seconds[phases_[k]] += 1e-3 * ms;
    }
    used_ = 0;
    phases_.clear();
    return seconds;
  }

 private:
  void record(int phase) {
    if (used_ == static_cast<int>(pool_.size())) {
      cudaEvent_t e;
      check(cudaEventCreate(&e), "event");
      pool_.push_back(e);
    }
    check(cudaEventRecord(pool_[used_]), "event");
    phases_.push_back(phase);
    ++used_;
  }
  std::vector<cudaEvent_t> pool_;
  std::vector<int> phases_;
  int used_ = 0;
};

template <class Real>
class CudaMeshForces final : public MeshForces<Real> {
  using C = Cufft<Real>;
  using Complex = typename C::Complex;

 public:
  explicit CudaMeshForces(const PmSettings& s) : s_(s) {
    s_.check();
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
      cudaGetLastError();
      throw std::runtime_error("backend=cuda: no CUDA device is available");
    }
    n_ = s_.mesh;
    m_ = fft_side(s_);
    cells_ = static_cast<std::size_t>(n_) * n_ * n_;
    fft_real_ = static_cast<std::size_t>(m_) * m_ * m_;
    fft_complex_ = static_cast<std::size_t>(m_) * m_ * (m_ / 2 + 1);
    fields_.resize(cells_);
    work_.resize(fft_real_);
    spectrum_.resize(fft_complex_);
    upload(green_, green_multiplier(s_));
    if (s_.difference_order == 0) {
      rho_hat_.resize(fft_complex_);
      phi_.resize(cells_);
      const auto g = force_kernel_multipliers(s_);
      for (int d = 0; d < 3; ++d) upload(force_green_[d], g[d]);
    }
    check(cufftPlan3d(&forward_, m_, m_, m_, C::kForward), "plan");
    check(cufftPlan3d(&backward_, m_, m_, m_, C::kBackward), "plan");
    const UsableRegion region = usable_region(s_);
    mesh_ = MeshView{n_,
                     n_,
                     s_.cell(),
                     1.0 / s_.cell(),
                     {s_.origin[0], s_.origin[1], s_.origin[2]},
                     s_.boundary == Boundary::periodic,
                     region.lower,
                     region.upper};
    fft_ = mesh_;
    fft_.side = m_;
    bricks_ = n_ / kBrick;
    bins_ = static_cast<unsigned>(bricks_) * bricks_ * bricks_;
    // SWARMFIT_PM_BRICKS=0: the plain deposit, to measure what the bricks give (pm_bench)
    const char* bricks = std::getenv("SWARMFIT_PM_BRICKS");
    use_bricks_ = !(bricks && std::string(bricks) == "0");
    // SWARMFIT_PM_CELL_ORDER=0: a brick's particles in their earlier order, not by cell (pm_bench)
    const char* cell_order = std::getenv("SWARMFIT_PM_CELL_ORDER");
    cell_order_ = !(cell_order && std::string(cell_order) == "0");
    strays_.resize(1);
    unsigned long long* pinned = nullptr;
    check(cudaMallocHost(&pinned, sizeof(unsigned long long)), "cudaMallocHost");
    host_strays_.reset(pinned);
    *host_strays_ = 0;
    // (a potential asked for before any solve: zeros, not whatever the allocation held)
    check(cudaMemset(work_.ptr, 0, fft_real_ * sizeof(Real)), "memset");
    if (phi_.ptr) check(cudaMemset(phi_.ptr, 0, cells_ * sizeof(Real)), "memset");
    if (s_.solver == Solver::multigrid) multigrid_ = std::make_unique<CudaMultigrid>(s_);  // (multigrid_cuda.cu)
  }
  ~CudaMeshForces() override {
    cufftDestroy(forward_);
    cufftDestroy(backward_);
  }
  std::string name() const override { return "cuda"; }

  void accelerations(ParticleSet<Real>& p, std::vector<Real>* acc, std::vector<Real>* potential) override {
    const long np = p.size();
    settle();      // (a resident run's velocities completed before its positions are replaced)
    unsort(true);  // (the velocities back in the host's order: the rest is uploaded again)
    auto t = std::chrono::steady_clock::now();
    upload_particles(p);
    const double uploads = seconds_since(t);
    clock_.start();
    mesh_forces();
    gather(potential != nullptr);
    const std::vector<double> laps = clock_.settle();
    record(laps);
    this->timings_.interpolate = laps[PhaseClock::particles];
    t = std::chrono::steady_clock::now();
    if (acc) {
      acc->resize(3 * static_cast<std::size_t>(np));
      check(cudaMemcpy(acc->data(), out_.ptr, 3 * np * sizeof(Real), cudaMemcpyDeviceToHost), "download");
    }
    if (potential) {
      potential->resize(np);
      check(cudaMemcpy(potential->data(), pot_.ptr, np * sizeof(Real), cudaMemcpyDeviceToHost), "download");
    }
    check(cudaMemcpy(p.status.data(), status_.ptr, np * sizeof(int), cudaMemcpyDeviceToHost), "download");
    this->timings_.sort = uploads + seconds_since(t);  // the host's copies (there is no sort here)
    mesh_ready_ = true;                                // the mesh's fields are the device's (now these) positions'
  }

  bool resident() const override { return true; }
  void load(const ParticleSet<Real>& p) override {
    upload_particles(p);
    for (int d = 0; d < 3; ++d) {
      v_[d].resize(p.size());
      check(cudaMemcpy(v_[d].ptr, p.v[d].data(), p.size() * sizeof(Real), cudaMemcpyHostToDevice), "upload");
    }
    mesh_ready_ = owed_ = false;
  }
  // Kick-drift-kick with the closing half kick deferred to the next step's pass (or to settle()):
  // the mesh's fields at the new positions stay on the device until then. The host waits once.
  void kdk(double dt) override {
    const Real half = static_cast<Real>(0.5 * dt), full = static_cast<Real>(dt);
    clock_.start();
    if (!mesh_ready_) {
      sort_when_due();
      mesh_forces();
    }
    pass(owed_, owed_half_, true, half, full);
    sort_when_due();
    mesh_forces();
    ++since_sort_;
    const std::vector<double> laps = clock_.settle();
    strays_last_ = sorted_ ? *host_strays_ : 0;  // (copied behind the deposit; the settle waited for it)
    record(laps);
    this->timings_.sort = laps[PhaseClock::sort];
    this->kdk_force_seconds =
        laps[PhaseClock::sort] + laps[PhaseClock::assign] + laps[PhaseClock::solve] + laps[PhaseClock::gradient];
    this->kdk_update_seconds = laps[PhaseClock::particles];
    mesh_ready_ = owed_ = true;
    owed_half_ = half;
  }
  void store(ParticleSet<Real>& p) override {
    settle();
    unsort();
    for (int d = 0; d < 3; ++d) {
      check(cudaMemcpy(p.x[d].data(), x_[d].ptr, count_ * sizeof(Real), cudaMemcpyDeviceToHost), "download");
      check(cudaMemcpy(p.v[d].data(), v_[d].ptr, count_ * sizeof(Real), cudaMemcpyDeviceToHost), "download");
    }
    check(cudaMemcpy(p.status.data(), status_.ptr, count_ * sizeof(int), cudaMemcpyDeviceToHost), "download");
  }

  // The density at the device's positions, deposited again into a mesh of its own: after a solve
  // (the positions do not move between a solve and the next step's pass) the solve's density.
  std::vector<double> density() const override {
    rho_.resize(cells_);
    check(cudaMemset(rho_.ptr, 0, cells_ * sizeof(Real)), "memset");
    if (count_ > 0) deposit(mesh_, rho_.ptr);
    return download(rho_);
  }
  // The potential of the last solve: still in the FFT buffer (or, with force kernels, in phi_).
  std::vector<double> potential() const override {
    const Real* from = s_.difference_order == 0 ? phi_.ptr : work_.ptr;
    const MeshView& view = s_.difference_order == 0 ? mesh_ : fft_;
    rho_.resize(cells_);
    const CellLaunch cells(n_);
    cells_kernel<<<cells.grid, cells.block>>>(view, from, rho_.ptr, static_cast<Field<Real>*>(nullptr), 0);
    launched("potential");
    return download(rho_);
  }

 private:
  static double seconds_since(std::chrono::steady_clock::time_point t) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
  }
  void record(const std::vector<double>& laps) {
    this->timings_.assign = laps[PhaseClock::assign];
    this->timings_.solve = laps[PhaseClock::solve];
    this->timings_.gradient = laps[PhaseClock::gradient];
  }

  void upload_particles(const ParticleSet<Real>& p) {
    count_ = p.size();
    for (int d = 0; d < 3; ++d) {
      x_[d].resize(count_);
      check(cudaMemcpy(x_[d].ptr, p.x[d].data(), count_ * sizeof(Real), cudaMemcpyHostToDevice), "upload");
    }
    mass_.resize(count_);
    status_.resize(count_);
    check(cudaMemcpy(mass_.ptr, p.mass.data(), count_ * sizeof(Real), cudaMemcpyHostToDevice), "upload");
    check(cudaMemcpy(status_.ptr, p.status.data(), count_ * sizeof(int), cudaMemcpyHostToDevice), "upload");
    out_.resize(3 * count_);
    pot_.resize(count_);
    permuted_ = sorted_ = false;  // (the host's order)
  }

  Particles<Real> particles() const { return {{x_[0].ptr, x_[1].ptr, x_[2].ptr}, mass_.ptr, status_.ptr, count_}; }

  // The particles' masses added to `mesh` (addressed by `view`).
  void deposit(const MeshView& view, Real* mesh) const {
    const long np = count_;
    if (np == 0) return;
    const Particles<Real> parts = particles();
    switch (s_.assignment) {
      case Assignment::ngp: deposit_kernel<Assignment::ngp><<<blocks(np), 256>>>(view, parts, mesh); break;
      case Assignment::cic: deposit_kernel<Assignment::cic><<<blocks(np), 256>>>(view, parts, mesh); break;
      case Assignment::tsc: deposit_kernel<Assignment::tsc><<<blocks(np), 256>>>(view, parts, mesh); break;
    }
    launched("deposit");
  }
  std::vector<double> download(const Buffer<Real>& from) const {
    std::vector<Real> v(cells_);
    check(cudaMemcpy(v.data(), from.ptr, cells_ * sizeof(Real), cudaMemcpyDeviceToHost), "download");
    return std::vector<double>(v.begin(), v.end());
  }

  // The particles ordered by brick and cell (a stable radix sort of brick_key_kernel's keys), every
  // array permuted alike; perm_ keeps each slot's place in the host's order.
  void sort_when_due() {
    const bool dense = 2 * static_cast<double>(count_) >= static_cast<double>(cells_);
    const bool due = !sorted_ || since_sort_ >= kMaxSortInterval ||
                     strays_last_ * kStrayShare > static_cast<unsigned long long>(count_);
    if (use_bricks_ && dense && count_ > 0 && count_ < (1L << 31) && due) {
      const long np = count_;
      for (auto* b : {&key_[0], &key_[1], &index_[0], &index_[1], &perm_}) b->resize(np);
      start_.resize(bins_ + 1);
      if (!permuted_) identity_kernel<<<blocks(np), 256>>>(perm_.ptr, np);
      int bits = 0;  // (of the brick's index, the off-mesh bin included)
      while (bits < 32 && (1ull << bits) <= bins_) ++bits;
      constexpr int kCellBits = 9;  // (a cell's place in its 8^3 brick)
      static_assert(kBrick * kBrick * kBrick == 1 << kCellBits, "a brick's cells fill the key's low bits");
      const int shift = bits + kCellBits <= 32 && cell_order_ ? kCellBits : 0;
      bits += shift;
      brick_key_kernel<<<blocks(np), 256>>>(mesh_, particles(), bricks_, shift, key_[0].ptr, index_[0].ptr);
      launched("brick keys");
      std::size_t bytes = 0;
      check(cub::DeviceRadixSort::SortPairs(nullptr, bytes, key_[0].ptr, key_[1].ptr, index_[0].ptr, index_[1].ptr, np,
                                            0, bits),
            "sort");
      sort_temp_.resize(bytes);
      check(cub::DeviceRadixSort::SortPairs(sort_temp_.ptr, bytes, key_[0].ptr, key_[1].ptr, index_[0].ptr,
                                            index_[1].ptr, np, 0, bits),
            "sort");
      brick_start_kernel<<<blocks(bins_ + 1), 256>>>(key_[1].ptr, np, bins_, shift, start_.ptr);
      launched("brick starts");
      reorder(index_[1].ptr, false);
      sorted_ = permuted_ = true;
      since_sort_ = 0;
      ++this->timings_.brick_sorts;
      strays_last_ = 0;
    }
    clock_.lap(PhaseClock::sort);
  }
  // The device's particles back in the host's order (only their velocities with `velocities_only`,
  // for a caller that uploads the rest).
  void unsort(bool velocities_only = false) {
    if (!permuted_) return;
    if (velocities_only) {
      for (int d = 0; d < 3; ++d)
        if (v_[d].size >= static_cast<std::size_t>(count_)) permute(v_[d], real_scratch_, perm_.ptr, true);
    } else {
      reorder(perm_.ptr, true);
    }
    permuted_ = sorted_ = false;
  }
  // Every particle array permuted by `index` (gathered, or scattered back); and perm_ with them.
  void reorder(const unsigned* index, bool scatter) {
    for (int d = 0; d < 3; ++d) {
      permute(x_[d], real_scratch_, index, scatter);
      if (v_[d].size >= static_cast<std::size_t>(count_)) permute(v_[d], real_scratch_, index, scatter);
    }
    permute(mass_, real_scratch_, index, scatter);
    permute(status_, int_scratch_, index, scatter);
    if (!scatter) permute(perm_, key_[0], index, false);  // (key_[0] is free after the sort)
  }
  template <class T>
  void permute(Buffer<T>& a, Buffer<T>& scratch, const unsigned* index, bool scatter) {
    scratch.resize(count_);
    permute_kernel<<<blocks(count_), 256>>>(a.ptr, scratch.ptr, index, count_, scatter);
    launched("permute");
    swap_buffers(a, scratch);
  }
  // (the strays counted into strays_ and copied to the host behind the deposit)
  void brick_deposit(const MeshView& view, Real* mesh) {
    check(cudaMemsetAsync(strays_.ptr, 0, sizeof(unsigned long long)), "memset");
    const Particles<Real> parts = particles();
    // FP32 only: held to 32 registers so that 8 blocks share an SM, more warps to hide the adds'
    // latency (bench/RESULTS.md, B9).
    constexpr int kMinBlocks = sizeof(Real) == 4 ? 8 : 1;
    switch (s_.assignment) {
      case Assignment::ngp:
        brick_deposit_kernel<Assignment::ngp, Real, kMinBlocks>
            <<<bins_, 256>>>(view, parts, start_.ptr, bricks_, mesh, strays_.ptr);
        break;
      case Assignment::cic:
        brick_deposit_kernel<Assignment::cic, Real, kMinBlocks>
            <<<bins_, 256>>>(view, parts, start_.ptr, bricks_, mesh, strays_.ptr);
        break;
      case Assignment::tsc:
        brick_deposit_kernel<Assignment::tsc, Real, kMinBlocks>
            <<<bins_, 256>>>(view, parts, start_.ptr, bricks_, mesh, strays_.ptr);
        break;
    }
    launched("brick deposit");
    check(cudaMemcpyAsync(host_strays_.get(), strays_.ptr, sizeof(unsigned long long), cudaMemcpyDeviceToHost),
          "strays");
  }

  // The particles' pass of a resident step (gather_kick_drift_kernel).
  void pass(bool kick_owed, Real owed, bool open, Real half, Real full) {
    const long np = count_;
    if (np == 0) {
      clock_.lap(PhaseClock::particles);
      return;
    }
    const Particles<Real> parts = particles();
    const Field<Real>* f = fields_.ptr;
    Real *x0 = x_[0].ptr, *x1 = x_[1].ptr, *x2 = x_[2].ptr, *v0 = v_[0].ptr, *v1 = v_[1].ptr, *v2 = v_[2].ptr;
    switch (s_.assignment) {
      case Assignment::ngp:
        gather_kick_drift_kernel<Assignment::ngp>
            <<<blocks(np), 256>>>(mesh_, parts, f, x0, x1, x2, v0, v1, v2, kick_owed, owed, open, half, full, s_.box);
        break;
      case Assignment::cic:
        gather_kick_drift_kernel<Assignment::cic>
            <<<blocks(np), 256>>>(mesh_, parts, f, x0, x1, x2, v0, v1, v2, kick_owed, owed, open, half, full, s_.box);
        break;
      case Assignment::tsc:
        gather_kick_drift_kernel<Assignment::tsc>
            <<<blocks(np), 256>>>(mesh_, parts, f, x0, x1, x2, v0, v1, v2, kick_owed, owed, open, half, full, s_.box);
        break;
    }
    launched("gather, kick and drift");
    clock_.lap(PhaseClock::particles);
  }
  // Completes a deferred half kick: the velocities then belong to the positions.
  void settle() {
    if (!owed_) return;
    clock_.start();
    pass(true, owed_half_, false, Real(0), Real(0));
    clock_.settle();
    owed_ = false;
  }

  // The interpolation into out_ (and pot_).
  void gather(bool with_potential) {
    const long np = count_;
    if (np == 0) {
      clock_.lap(PhaseClock::particles);
      return;
    }
    const Particles<Real> parts = particles();
    Real* pot = with_potential ? pot_.ptr : nullptr;
    const Real* phi = s_.difference_order == 0 ? phi_.ptr : work_.ptr;
    const MeshView pm = s_.difference_order == 0 ? mesh_ : fft_;
    switch (s_.assignment) {
      case Assignment::ngp:
        gather_kernel<Assignment::ngp><<<blocks(np), 256>>>(mesh_, parts, fields_.ptr, pm, phi, out_.ptr, pot);
        break;
      case Assignment::cic:
        gather_kernel<Assignment::cic><<<blocks(np), 256>>>(mesh_, parts, fields_.ptr, pm, phi, out_.ptr, pot);
        break;
      case Assignment::tsc:
        gather_kernel<Assignment::tsc><<<blocks(np), 256>>>(mesh_, parts, fields_.ptr, pm, phi, out_.ptr, pot);
        break;
    }
    launched("gather");
    clock_.lap(PhaseClock::particles);
  }

  // Assignment (into the FFT's input), solve and gradient: the mesh's fields at the device's
  // positions, queued on the device.
  void mesh_forces() {
    check(cudaMemsetAsync(work_.ptr, 0, fft_real_ * sizeof(Real)), "memset");
    if (sorted_)
      brick_deposit(fft_, work_.ptr);
    else
      deposit(fft_, work_.ptr);
    clock_.lap(PhaseClock::assign);
    if (multigrid_) {  // V-cycles in FP64 (multigrid_cuda.cu): the density in work_ in, the potential out
      const MultigridResult r = multigrid_->solve(work_.ptr);
      this->timings_.multigrid_cycles = r.cycles;
      this->timings_.multigrid_residual = r.residual;
    } else {
      solve();
    }
    clock_.lap(PhaseClock::solve);
    const CellLaunch cells(n_);
    if (s_.difference_order == 2)
      gradient_kernel<2><<<cells.grid, cells.block>>>(fft_, work_.ptr, fields_.ptr);
    else if (s_.difference_order == 4)
      gradient_kernel<4><<<cells.grid, cells.block>>>(fft_, work_.ptr, fields_.ptr);
    launched("gradient");
    clock_.lap(PhaseClock::gradient);
  }

  void upload(Buffer<Real>& to, const std::vector<double>& from) {
    std::vector<Real> v(from.begin(), from.end());
    to.resize(v.size());
    check(cudaMemcpy(to.ptr, v.data(), v.size() * sizeof(Real), cudaMemcpyHostToDevice), "upload");
  }

  // The density in work_ forward, times the multiplier, back into work_: the potential (and, with
  // force kernels, each acceleration component, copied into the fields, the potential into phi_).
  void solve() {
    check(C::forward(forward_, work_.ptr, spectrum_.ptr), "forward");
    const Complex* source = spectrum_.ptr;
    if (s_.difference_order == 0) {
      check(cudaMemcpyAsync(rho_hat_.ptr, spectrum_.ptr, fft_complex_ * sizeof(Complex), cudaMemcpyDeviceToDevice),
            "copy");
      source = rho_hat_.ptr;
    }
    multiply_kernel<<<blocks(fft_complex_), 256>>>(spectrum_.ptr, source, green_.ptr, fft_complex_, false);
    launched("multiply");
    check(C::backward(backward_, spectrum_.ptr, work_.ptr), "backward");
    if (s_.difference_order != 0) return;
    const CellLaunch cells(n_);
    cells_kernel<<<cells.grid, cells.block>>>(fft_, work_.ptr, phi_.ptr, fields_.ptr, 0);
    for (int d = 0; d < 3; ++d) {
      multiply_kernel<<<blocks(fft_complex_), 256>>>(spectrum_.ptr, rho_hat_.ptr, force_green_[d].ptr, fft_complex_,
                                                     true);
      check(C::backward(backward_, spectrum_.ptr, work_.ptr), "backward");
      cells_kernel<<<cells.grid, cells.block>>>(fft_, work_.ptr, static_cast<Real*>(nullptr), fields_.ptr, d);
    }
    launched("force kernels");
  }

  PmSettings s_;
  int n_ = 0, m_ = 0;
  std::size_t cells_ = 0, fft_real_ = 0, fft_complex_ = 0;
  MeshView mesh_{}, fft_{};  // the mesh's own n^3 arrays; the FFT's (m^3) input and output
  // Bricks: bricks_^3 = bins_ of them; the particles sorted by brick (sorted_) since since_sort_
  // steps, their slots' places in the host's order in perm_ (permuted_: not the identity).
  int bricks_ = 0, since_sort_ = 0;
  unsigned bins_ = 0;
  struct PinnedFree {
    void operator()(unsigned long long* p) const { cudaFreeHost(p); }
  };
  Buffer<unsigned long long> strays_;  // (counted on the device, copied to host_strays_)
  std::unique_ptr<unsigned long long, PinnedFree> host_strays_;
  unsigned long long strays_last_ = 0;
  bool use_bricks_ = true, cell_order_ = true, sorted_ = false, permuted_ = false;
  Buffer<unsigned> key_[2], index_[2], start_, perm_;
  Buffer<char> sort_temp_;
  Buffer<Real> real_scratch_;
  Buffer<int> int_scratch_;
  Buffer<Real> work_, phi_, green_, force_green_[3], x_[3], v_[3], mass_, out_, pot_;
  mutable Buffer<Real> rho_;
  Buffer<Field<Real>> fields_;
  long count_ = 0;
  // The mesh's acceleration fields belong to the device's positions; the velocities owe the last
  // step's closing half kick of owed_half_ (kdk defers it to the next pass).
  bool mesh_ready_ = false, owed_ = false;
  Real owed_half_ = 0;
  Buffer<int> status_;
  Buffer<Complex> spectrum_, rho_hat_;
  cufftHandle forward_ = 0, backward_ = 0;
  PhaseClock clock_;
  std::unique_ptr<CudaMultigrid> multigrid_;  // solver = multigrid (periodic: work_ is the n^3 mesh)
};

}  // namespace

template <class Real>
std::unique_ptr<MeshForces<Real>> make_cuda_mesh_forces(const PmSettings& settings) {
  return std::make_unique<CudaMeshForces<Real>>(settings);
}
template std::unique_ptr<MeshForces<float>> make_cuda_mesh_forces(const PmSettings&);
template std::unique_ptr<MeshForces<double>> make_cuda_mesh_forces(const PmSettings&);
bool pm_cuda_built() { return true; }

}  // namespace swarmfit::pm
