// The particle-mesh forces on the GPU (Aubert, Amini & David 2009: assignment, FFT Poisson solve,
// finite differences and interpolation on the device): the particles uploaded, their masses added
// to the mesh with atomic adds, the potential by cuFFT with the host's Green's function
// (green.hpp, the CPU backend's numbers), minus its gradient, and the accelerations interpolated
// back, with the stencils and differences of kernels.hpp (the CPU backend's functions). The
// atomic adds make the last bits of a GPU run depend on the order the threads land: GPU runs agree
// with the CPU to round-off, not bitwise with themselves.
#include <cuda_runtime.h>
#include <cufft.h>

#include <chrono>
#include <stdexcept>
#include <string>
#include <vector>

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

struct MeshView {
  int n;
  double h, origin[3];
  bool periodic;
  double lower, upper;  // the usable region, cells
  __device__ int wrap(int i) const { return i & (n - 1); }
  __device__ std::size_t index(int i, int j, int k) const { return (static_cast<std::size_t>(i) * n + j) * n + k; }
};

template <class Real>
struct Particles {
  const Real* x[3];
  const Real* mass;
  int* status;
  long count;
};

template <class Real>
__device__ Real cell_units(const MeshView& m, const Real* x, long i, int d) {
  return static_cast<Real>((static_cast<double>(x[i]) - m.origin[d]) / m.h);
}

template <Assignment A, class Real>
__global__ void deposit_kernel(MeshView m, Particles<Real> p, Real* rho) {
  constexpr int W = stencil_width(A);
  const long i = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x;
  if (i >= p.count || p.status[i] != 0) return;
  int c[3];
  Real w[3][3];
  bool inside = true;
  for (int d = 0; d < 3; ++d) {
    const Real s = cell_units(m, p.x[d], i, d);
    if (!m.periodic && !(s >= m.lower && s < m.upper)) inside = false;
    stencil<A>(s, c[d], w[d]);
  }
  if (!inside) {  // left an isolated mesh's usable region: no mass, no force from now on
    p.status[i] = 1;
    return;
  }
  const double volume = m.h * m.h * m.h;
  const Real mass = static_cast<Real>(p.mass[i] / volume);
  for (int a = 0; a < W; ++a)
    for (int b = 0; b < W; ++b)
      for (int e = 0; e < W; ++e)
        atomicAdd(&rho[m.index(m.wrap(c[0] + a), m.wrap(c[1] + b), m.wrap(c[2] + e))],
                  mass * w[0][a] * w[1][b] * w[2][e]);
}

// The mesh into one octant of the (larger) FFT mesh (`into`), or that octant back into the mesh.
template <class Real>
__global__ void octant_kernel(Real* mesh, int n, Real* fft, int side, bool into) {
  const long c = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x;
  if (c >= static_cast<long>(n) * n * n) return;
  const int i = static_cast<int>(c / (static_cast<long>(n) * n)), j = static_cast<int>((c / n) % n),
            k = static_cast<int>(c % n);
  const std::size_t f = (static_cast<std::size_t>(i) * side + j) * side + k;
  if (into)
    fft[f] = mesh[c];
  else
    mesh[c] = fft[f];
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

template <int Order, class Real>
__global__ void gradient_kernel(MeshView m, const Real* phi, Real* ax, Real* ay, Real* az) {
  const long c = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x;
  const int n = m.n;
  if (c >= static_cast<long>(n) * n * n) return;
  const int i = static_cast<int>(c / (static_cast<long>(n) * n)), j = static_cast<int>((c / n) % n),
            k = static_cast<int>(c % n);
  const int reach = Order / 2, lo = m.periodic ? 0 : reach, hi = m.periodic ? n : n - reach;
  const bool inside = i >= lo && i < hi && j >= lo && j < hi && k >= lo && k < hi;
  auto at = [&](int a, int b, int e) { return static_cast<double>(phi[m.index(m.wrap(a), m.wrap(b), m.wrap(e))]); };
  Real* out[3] = {ax, ay, az};
  for (int d = 0; d < 3; ++d)
    out[d][c] = inside ? static_cast<Real>(minus_gradient<Order>(at, i, j, k, d, m.h)) : Real(0);
}

// The accelerations (and with `phi` the potential) at particle i from the mesh fields, with its
// assignment stencil; zero for a particle off the mesh.
template <Assignment A, class Real>
__device__ void gather_at(const MeshView& m, const Particles<Real>& p, long i, const Real* ax, const Real* ay,
                          const Real* az, const Real* phi, Real a[3], Real& u) {
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
        const std::size_t cell = m.index(m.wrap(c[0] + x), m.wrap(c[1] + y), m.wrap(c[2] + z));
        a[0] += wxyz * ax[cell];
        a[1] += wxyz * ay[cell];
        a[2] += wxyz * az[cell];
        if (phi) u += wxyz * phi[cell];
      }
}

template <Assignment A, class Real>
__global__ void gather_kernel(MeshView m, Particles<Real> p, const Real* ax, const Real* ay, const Real* az,
                              const Real* phi, Real* acc, Real* pot) {
  const long i = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x;
  if (i >= p.count) return;
  Real a[3], u;
  gather_at<A>(m, p, i, ax, ay, az, pot ? phi : nullptr, a, u);
  for (int d = 0; d < 3; ++d) acc[d * p.count + i] = a[d];
  if (pot) pot[i] = u;
}

// The leapfrog's kicks fused with the interpolation (kernels.hpp's kick and drift): the
// accelerations at the particles' positions, the last step's closing half kick (`owed`, deferred
// to here so that the accelerations never leave the registers), then with `open` the next step's
// opening half kick and its drift, with the periodic wrap. One pass over the particles a step
// instead of three (gather, kick and drift, kick).
template <Assignment A, class Real>
__global__ void gather_kick_drift_kernel(MeshView m, Particles<Real> p, const Real* ax, const Real* ay, const Real* az,
                                         Real* x0, Real* x1, Real* x2, Real* v0, Real* v1, Real* v2, bool kick_owed,
                                         Real owed, bool open, Real half, Real full, double box) {
  const long i = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x;
  if (i >= p.count) return;
  Real a[3], u;
  gather_at<A>(m, p, i, ax, ay, az, static_cast<const Real*>(nullptr), a, u);
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

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

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
    if (s_.solver != Solver::fft)
      throw std::runtime_error("backend=cuda: the multigrid solver runs on the CPU backend only (solver = fft here)");
    n_ = s_.mesh;
    m_ = fft_side(s_);
    cells_ = static_cast<std::size_t>(n_) * n_ * n_;
    fft_real_ = static_cast<std::size_t>(m_) * m_ * m_;
    fft_complex_ = static_cast<std::size_t>(m_) * m_ * (m_ / 2 + 1);
    rho_.resize(cells_);
    phi_.resize(cells_);
    for (auto& a : acc_) a.resize(cells_);
    work_.resize(fft_real_);
    spectrum_.resize(fft_complex_);
    upload(green_, green_multiplier(s_));
    if (s_.difference_order == 0) {
      rho_hat_.resize(fft_complex_);
      const auto g = force_kernel_multipliers(s_);
      for (int d = 0; d < 3; ++d) upload(force_green_[d], g[d]);
    }
    check(cufftPlan3d(&forward_, m_, m_, m_, C::kForward), "plan");
    check(cufftPlan3d(&backward_, m_, m_, m_, C::kBackward), "plan");
    const UsableRegion region = usable_region(s_);
    view_ = MeshView{
        n_,           s_.cell(),   {s_.origin[0], s_.origin[1], s_.origin[2]}, s_.boundary == Boundary::periodic,
        region.lower, region.upper};
  }
  ~CudaMeshForces() override {
    cufftDestroy(forward_);
    cufftDestroy(backward_);
  }
  std::string name() const override { return "cuda"; }

  void accelerations(ParticleSet<Real>& p, std::vector<Real>* acc, std::vector<Real>* potential) override {
    const long np = p.size();
    settle();  // (a resident run's velocities completed before its positions are replaced)
    auto t = std::chrono::steady_clock::now();
    upload_particles(p);
    const double uploads = seconds_since(t);
    compute(potential != nullptr);
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
  // the mesh's fields at the new positions stay on the device until then.
  void kdk(double dt) override {
    const Real half = static_cast<Real>(0.5 * dt), full = static_cast<Real>(dt);
    this->kdk_force_seconds = this->kdk_update_seconds = 0;
    auto timed_forces = [&] {
      const auto t = std::chrono::steady_clock::now();
      mesh_forces();
      this->kdk_force_seconds += seconds_since(t);
    };
    if (!mesh_ready_) timed_forces();
    const auto t = std::chrono::steady_clock::now();
    pass(owed_, owed_half_, true, half, full);
    this->kdk_update_seconds += seconds_since(t);
    timed_forces();
    mesh_ready_ = owed_ = true;
    owed_half_ = half;
  }
  void store(ParticleSet<Real>& p) override {
    settle();
    for (int d = 0; d < 3; ++d) {
      check(cudaMemcpy(p.x[d].data(), x_[d].ptr, count_ * sizeof(Real), cudaMemcpyDeviceToHost), "download");
      check(cudaMemcpy(p.v[d].data(), v_[d].ptr, count_ * sizeof(Real), cudaMemcpyDeviceToHost), "download");
    }
    check(cudaMemcpy(p.status.data(), status_.ptr, count_ * sizeof(int), cudaMemcpyDeviceToHost), "download");
  }

  std::vector<double> density() const override { return download(rho_); }
  std::vector<double> potential() const override { return download(phi_); }

 private:
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
  }

  Particles<Real> particles() const { return {{x_[0].ptr, x_[1].ptr, x_[2].ptr}, mass_.ptr, status_.ptr, count_}; }

  // The particles' pass of a resident step (gather_kick_drift_kernel).
  void pass(bool kick_owed, Real owed, bool open, Real half, Real full) {
    const long np = count_;
    const Particles<Real> parts = particles();
    const Real *ax = acc_[0].ptr, *ay = acc_[1].ptr, *az = acc_[2].ptr;
    Real *x0 = x_[0].ptr, *x1 = x_[1].ptr, *x2 = x_[2].ptr, *v0 = v_[0].ptr, *v1 = v_[1].ptr, *v2 = v_[2].ptr;
    switch (s_.assignment) {
      case Assignment::ngp:
        gather_kick_drift_kernel<Assignment::ngp><<<blocks(np), 256>>>(view_, parts, ax, ay, az, x0, x1, x2, v0, v1, v2,
                                                                       kick_owed, owed, open, half, full, s_.box);
        break;
      case Assignment::cic:
        gather_kick_drift_kernel<Assignment::cic><<<blocks(np), 256>>>(view_, parts, ax, ay, az, x0, x1, x2, v0, v1, v2,
                                                                       kick_owed, owed, open, half, full, s_.box);
        break;
      case Assignment::tsc:
        gather_kick_drift_kernel<Assignment::tsc><<<blocks(np), 256>>>(view_, parts, ax, ay, az, x0, x1, x2, v0, v1, v2,
                                                                       kick_owed, owed, open, half, full, s_.box);
        break;
    }
    check(cudaDeviceSynchronize(), "gather, kick and drift");
  }
  // Completes a deferred half kick: the velocities then belong to the positions.
  void settle() {
    if (!owed_) return;
    pass(true, owed_half_, false, Real(0), Real(0));
    owed_ = false;
  }

  // The device pipeline on the device's particles: the mesh's fields, then the interpolation into
  // out_ (and pot_), each phase timed.
  void compute(bool with_potential) {
    mesh_forces();
    const long np = count_;
    const Particles<Real> parts = particles();
    const auto t = std::chrono::steady_clock::now();
    Real* pot = with_potential ? pot_.ptr : nullptr;
    const Real *ax = acc_[0].ptr, *ay = acc_[1].ptr, *az = acc_[2].ptr;
    switch (s_.assignment) {
      case Assignment::ngp:
        gather_kernel<Assignment::ngp><<<blocks(np), 256>>>(view_, parts, ax, ay, az, phi_.ptr, out_.ptr, pot);
        break;
      case Assignment::cic:
        gather_kernel<Assignment::cic><<<blocks(np), 256>>>(view_, parts, ax, ay, az, phi_.ptr, out_.ptr, pot);
        break;
      case Assignment::tsc:
        gather_kernel<Assignment::tsc><<<blocks(np), 256>>>(view_, parts, ax, ay, az, phi_.ptr, out_.ptr, pot);
        break;
    }
    check(cudaDeviceSynchronize(), "gather");
    this->timings_.interpolate = seconds_since(t);
  }

  // Assignment, solve and gradient: the mesh's acceleration fields at the device's positions.
  void mesh_forces() {
    const long np = count_;
    const Particles<Real> parts = particles();
    auto t = std::chrono::steady_clock::now();
    check(cudaMemset(rho_.ptr, 0, cells_ * sizeof(Real)), "memset");
    switch (s_.assignment) {
      case Assignment::ngp: deposit_kernel<Assignment::ngp><<<blocks(np), 256>>>(view_, parts, rho_.ptr); break;
      case Assignment::cic: deposit_kernel<Assignment::cic><<<blocks(np), 256>>>(view_, parts, rho_.ptr); break;
      case Assignment::tsc: deposit_kernel<Assignment::tsc><<<blocks(np), 256>>>(view_, parts, rho_.ptr); break;
    }
    check(cudaDeviceSynchronize(), "deposit");
    this->timings_.assign = seconds_since(t);
    t = std::chrono::steady_clock::now();
    solve();
    check(cudaDeviceSynchronize(), "solve");
    this->timings_.solve = seconds_since(t);
    t = std::chrono::steady_clock::now();
    if (s_.difference_order == 2)
      gradient_kernel<2><<<blocks(cells_), 256>>>(view_, phi_.ptr, acc_[0].ptr, acc_[1].ptr, acc_[2].ptr);
    else if (s_.difference_order == 4)
      gradient_kernel<4><<<blocks(cells_), 256>>>(view_, phi_.ptr, acc_[0].ptr, acc_[1].ptr, acc_[2].ptr);
    check(cudaDeviceSynchronize(), "gradient");
    this->timings_.gradient = seconds_since(t);
  }

  void upload(Buffer<Real>& to, const std::vector<double>& from) {
    std::vector<Real> v(from.begin(), from.end());
    to.resize(v.size());
    check(cudaMemcpy(to.ptr, v.data(), v.size() * sizeof(Real), cudaMemcpyHostToDevice), "upload");
  }
  std::vector<double> download(const Buffer<Real>& from) const {
    std::vector<Real> v(cells_);
    check(cudaMemcpy(v.data(), from.ptr, cells_ * sizeof(Real), cudaMemcpyDeviceToHost), "download");
    return std::vector<double>(v.begin(), v.end());
  }

  // The mesh's density into the FFT mesh, forward, times the multiplier, backward, and the
  // potential (and, with force kernels, each acceleration component) out of its octant.
  void solve() {
    // (The density is copied: cuFFT does not promise to leave an R2C's input as it was, and the
    // snapshots read it. The potential is transformed back into place when periodic.)
    if (m_ == n_) {
      check(cudaMemcpy(work_.ptr, rho_.ptr, cells_ * sizeof(Real), cudaMemcpyDeviceToDevice), "copy");
    } else {
      check(cudaMemset(work_.ptr, 0, fft_real_ * sizeof(Real)), "memset");
      octant_kernel<<<blocks(cells_), 256>>>(rho_.ptr, n_, work_.ptr, m_, true);
    }
    check(C::forward(forward_, work_.ptr, spectrum_.ptr), "forward");
    const Complex* source = spectrum_.ptr;
    if (s_.difference_order == 0) {
      check(cudaMemcpy(rho_hat_.ptr, spectrum_.ptr, fft_complex_ * sizeof(Complex), cudaMemcpyDeviceToDevice), "copy");
      source = rho_hat_.ptr;
    }
    multiply_kernel<<<blocks(fft_complex_), 256>>>(spectrum_.ptr, source, green_.ptr, fft_complex_, false);
    if (m_ == n_) {
      check(C::backward(backward_, spectrum_.ptr, phi_.ptr), "backward");
    } else {
      check(C::backward(backward_, spectrum_.ptr, work_.ptr), "backward");
      unpad(phi_);
    }
    if (s_.difference_order != 0) return;
    for (int d = 0; d < 3; ++d) {
      multiply_kernel<<<blocks(fft_complex_), 256>>>(spectrum_.ptr, rho_hat_.ptr, force_green_[d].ptr, fft_complex_,
                                                     true);
      check(C::backward(backward_, spectrum_.ptr, work_.ptr), "backward");
      unpad(acc_[d]);
    }
  }
  void unpad(Buffer<Real>& to) {
    if (m_ == n_)
      check(cudaMemcpy(to.ptr, work_.ptr, cells_ * sizeof(Real), cudaMemcpyDeviceToDevice), "copy");
    else
      octant_kernel<<<blocks(cells_), 256>>>(to.ptr, n_, work_.ptr, m_, false);
  }

  PmSettings s_;
  int n_ = 0, m_ = 0;
  std::size_t cells_ = 0, fft_real_ = 0, fft_complex_ = 0;
  MeshView view_{};
  Buffer<Real> rho_, phi_, acc_[3], work_, green_, force_green_[3], x_[3], v_[3], mass_, out_, pot_;
  long count_ = 0;
  // The mesh's acceleration fields belong to the device's positions; the velocities owe the last
  // step's closing half kick of owed_half_ (kdk defers it to the next pass).
  bool mesh_ready_ = false, owed_ = false;
  Real owed_half_ = 0;
  Buffer<int> status_;
  Buffer<Complex> spectrum_, rho_hat_;
  cufftHandle forward_ = 0, backward_ = 0;
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
