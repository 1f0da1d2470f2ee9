// The particle-mesh forces on CPU threads: FFTW for the Poisson equation (plans made with
// FFTW_ESTIMATE, which picks the same algorithm on every run, so a run and its resumption give the
// same bits), OpenMP for the loops. Assignment is deterministic for any thread count: the
// particles are sorted by mesh column (a stable counting sort of an index), the mesh is cut into
// slabs two cells thick, and the even slabs deposit first, then the odd ones; a stencil reaches at
// most one cell beyond its particle's slab, so no two slabs of one colour touch a cell, and every
// cell receives its contributions in the same order whatever the threads.
#include <fftw3.h>
#include <omp.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstring>
#include <mutex>
#include <stdexcept>

#include "cpu_pipeline.hpp"
#include "swarmfit/pm/green.hpp"
#include "swarmfit/pm/multigrid.hpp"
#include "swarmfit/pm/pm.hpp"

namespace swarmfit::pm {

void PmSettings::check() const {
  if (mesh < 8 || mesh > 4096 || (mesh & (mesh - 1)) != 0)
    throw std::invalid_argument("mesh must be a power of two between 8 and 4096");
  if (!(box > 0) || !std::isfinite(box)) throw std::invalid_argument("box must be a positive length");
  for (double o : origin)
    if (!std::isfinite(o)) throw std::invalid_argument("origin must be finite");
  if (difference_order != 0 && difference_order != 2 && difference_order != 4)
    throw std::invalid_argument("difference_order must be 2 or 4 (or 0: force kernels, isolated FFT only)");
  if (difference_order == 0 && (boundary != Boundary::isolated || solver != Solver::fft))
    throw std::invalid_argument("difference_order = 0 (force kernels) needs isolated boundaries and the FFT solver");
  if (deconvolve && boundary != Boundary::periodic)
    throw std::invalid_argument("deconvolve needs periodic boundaries (the zero-padded mesh has no window to undo)");
  if (!(G > 0)) throw std::invalid_argument("G must be positive");
  if (solver == Solver::multigrid && boundary != Boundary::periodic)
    throw std::invalid_argument("solver = multigrid needs periodic boundaries");
  if (!(multigrid_tolerance > 0) || multigrid_max_cycles < 1)
    throw std::invalid_argument("multigrid_tolerance must be > 0 and multigrid_max_cycles >= 1");
}

template <class Real>
void ParticleSet<Real>::resize(long n) {
  for (int d = 0; d < 3; ++d) {
    x[d].resize(n);
    v[d].resize(n);
  }
  mass.resize(n);
  id.resize(n);
  status.resize(n);
}
template struct ParticleSet<float>;
template struct ParticleSet<double>;

UsableRegion usable_region(const PmSettings& s) {
  if (s.boundary == Boundary::periodic) return {0.0, static_cast<double>(s.mesh)};
  // A TSC stencil reaches the cell below its particle's; the difference reaches order/2 more.
  const double margin = 2 + std::max(1, s.difference_order / 2);
  return {margin, s.mesh - margin};
}

namespace {

// FFTW's double and single precision interfaces under one name.
template <class Real>
struct Fftw;
template <>
struct Fftw<double> {
  using Complex = fftw_complex;
  using Plan = fftw_plan;
  static Plan r2c(int n, double* in, Complex* out) { return fftw_plan_dft_r2c_3d(n, n, n, in, out, FFTW_ESTIMATE); }
  static Plan c2r(int n, Complex* in, double* out) { return fftw_plan_dft_c2r_3d(n, n, n, in, out, FFTW_ESTIMATE); }
  static void execute(Plan p) { fftw_execute(p); }
  static void destroy(Plan p) { fftw_destroy_plan(p); }
  static void* alloc(std::size_t bytes) { return fftw_malloc(bytes); }
  static void release(void* p) { fftw_free(p); }
  static void threads(int t) {
    static std::once_flag once;
    std::call_once(once, [] { fftw_init_threads(); });
    fftw_plan_with_nthreads(t);
  }
};
template <>
struct Fftw<float> {
  using Complex = fftwf_complex;
  using Plan = fftwf_plan;
  static Plan r2c(int n, float* in, Complex* out) { return fftwf_plan_dft_r2c_3d(n, n, n, in, out, FFTW_ESTIMATE); }
  static Plan c2r(int n, Complex* in, float* out) { return fftwf_plan_dft_c2r_3d(n, n, n, in, out, FFTW_ESTIMATE); }
  static void execute(Plan p) { fftwf_execute(p); }
  static void destroy(Plan p) { fftwf_destroy_plan(p); }
  static void* alloc(std::size_t bytes) { return fftwf_malloc(bytes); }
  static void release(void* p) { fftwf_free(p); }
  static void threads(int t) {
    static std::once_flag once;
    std::call_once(once, [] { fftwf_init_threads(); });
    fftwf_plan_with_nthreads(t);
  }
};

template <class T>
struct FftwBuffer {
  T* ptr = nullptr;
  template <class Real>
  void allocate(std::size_t count) {
    ptr = static_cast<T*>(Fftw<Real>::alloc(count * sizeof(T)));
    if (!ptr) throw std::bad_alloc();
  }
};

template <class Real>
class CpuMeshForces final : public CpuPipeline<Real> {
  using F = Fftw<Real>;
  using Complex = typename F::Complex;
  using CpuPipeline<Real>::column_;
  using CpuPipeline<Real>::start_;
  using CpuPipeline<Real>::order_;

 public:
  explicit CpuMeshForces(const PmSettings& s) : s_(s) {
    s_.check();
    threads_ = s_.threads > 0 ? s_.threads : omp_get_max_threads();
    n_ = s_.mesh;
    cells_ = static_cast<std::size_t>(n_) * n_ * n_;
    // The FFT mesh: n^3 (periodic) or (2n)^3 with the density in one octant (isolated: Hockney
    // & Eastwood sec. 6-5, the doubled mesh makes the cyclic convolution the free-space one).
    m_ = fft_side(s_);
    const std::size_t real_size = static_cast<std::size_t>(m_) * m_ * m_;
    const std::size_t complex_size = static_cast<std::size_t>(m_) * m_ * (m_ / 2 + 1);
    rho_.assign(cells_, Real(0));
    phi_.assign(cells_, Real(0));
    for (auto& a : acc_) a.assign(cells_, Real(0));
    if (s_.solver == Solver::fft) {
      work_.template allocate<Real>(real_size);
      spectrum_.template allocate<Real>(complex_size);
      F::threads(threads_);
      forward_ = F::r2c(m_, work_.ptr, spectrum_.ptr);
      backward_ = F::c2r(m_, spectrum_.ptr, work_.ptr);
      green_ = green_multiplier(s_);
      if (s_.difference_order == 0) {
        rho_hat_.resize(2 * complex_size);
        force_green_ = force_kernel_multipliers(s_);
      }
    }
  }
  ~CpuMeshForces() override {
    if (s_.solver == Solver::fft) {
      F::destroy(forward_);
      F::destroy(backward_);
      F::release(work_.ptr);
      F::release(spectrum_.ptr);
    }
  }
  std::string name() const override { return "cpu"; }

  std::vector<double> density() const override { return std::vector<double>(rho_.begin(), rho_.end()); }
  std::vector<double> potential() const override { return std::vector<double>(phi_.begin(), phi_.end()); }

 private:
  std::size_t index(int i, int j, int k) const { return (static_cast<std::size_t>(i) * n_ + j) * n_ + k; }
  int wrap(int i) const { return i & (n_ - 1); }

  // The particle's coordinate in cell units along d.
  Real cell_units(const ParticleSet<Real>& p, int d, long i) const {
    return static_cast<Real>((static_cast<double>(p.x[d][i]) - s_.origin[d]) / s_.cell());
  }

  // Marks particles outside the usable region (isolated) and wraps periodic ones into the box;
  // then a stable counting sort of the particles on the mesh by column (x cell, y cell).
  void sort(ParticleSet<Real>& p) override {
    const long np = p.size();
    const UsableRegion region = usable_region(s_);
    const bool periodic = s_.boundary == Boundary::periodic;
    column_.resize(np);
#pragma omp parallel for schedule(static) num_threads(threads_)
    for (long i = 0; i < np; ++i) {
      int c[2] = {0, 0};
      bool inside = p.status[i] == 0;
      for (int d = 0; d < 3 && inside; ++d) {
        const double s = cell_units(p, d, i);
        if (!periodic && !(s >= region.lower && s < region.upper)) inside = false;
        if (d < 2) c[d] = wrap(static_cast<int>(std::floor(s)));
      }
      if (!inside) p.status[i] = 1;
      column_[i] = inside ? c[0] * n_ + c[1] : -1;
    }
    this->sort_by_column(static_cast<long>(n_) * n_);
  }

  template <Assignment A>
  void deposit(const ParticleSet<Real>& p) {
    constexpr int W = stencil_width(A);
    const double volume = s_.cell() * s_.cell() * s_.cell();
    const int slabs = n_ / 2;  // two x cells each (n >= 8 is a multiple of 4: the wrap keeps the colours)
    for (int colour = 0; colour < 2; ++colour) {
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads_)
      for (int slab = colour; slab < slabs; slab += 2) {
        const long first = start_[static_cast<long>(2 * slab) * n_],
                   last = start_[static_cast<long>(2 * slab + 2) * n_];
        for (long q = first; q < last; ++q) {
          const long i = order_[q];
          int c[3];
          Real w[3][3];
          for (int d = 0; d < 3; ++d) stencil<A>(cell_units(p, d, i), c[d], w[d]);
          const Real m = static_cast<Real>(p.mass[i] / volume);
          for (int a = 0; a < W; ++a)
            for (int b = 0; b < W; ++b) {
              const Real wab = m * w[0][a] * w[1][b];
              const std::size_t row = index(wrap(c[0] + a), wrap(c[1] + b), 0);
              for (int e = 0; e < W; ++e) rho_[row + wrap(c[2] + e)] += wab * w[2][e];
            }
        }
      }
    }
  }

  void assign(const ParticleSet<Real>& p) override {
    std::fill(rho_.begin(), rho_.end(), Real(0));
    switch (s_.assignment) {
      case Assignment::ngp: deposit<Assignment::ngp>(p); break;
      case Assignment::cic: deposit<Assignment::cic>(p); break;
      case Assignment::tsc: deposit<Assignment::tsc>(p); break;
    }
  }

  void solve() override {
    if (s_.solver == Solver::multigrid) {
      // In double precision whatever Real is: lap(phi) = 4 pi G (rho - mean rho).
      double mean = 0;
      for (Real r : rho_) mean += r;
      mean /= static_cast<double>(cells_);
      std::vector<double> f(cells_);
      for (std::size_t c = 0; c < cells_; ++c) f[c] = 4.0 * M_PI * s_.G * (rho_[c] - mean);
      // From zero every time (not the last solution): a resumed run then gives the same bits.
      mg_phi_.assign(cells_, 0.0);
      const MultigridResult r =
          multigrid_solve(n_, s_.cell(), f, mg_phi_, s_.multigrid_tolerance, s_.multigrid_max_cycles, threads_);
      this->timings_.multigrid_cycles = r.cycles;
      this->timings_.multigrid_residual = r.residual;
      for (std::size_t c = 0; c < cells_; ++c) phi_[c] = static_cast<Real>(mg_phi_[c]);
      return;
    }
    const int m = m_, half = m / 2 + 1;
    const std::size_t real_size = static_cast<std::size_t>(m) * m * m;
    if (m == n_) {
      std::copy(rho_.begin(), rho_.end(), work_.ptr);
    } else {
      std::fill(work_.ptr, work_.ptr + real_size, Real(0));
#pragma omp parallel for schedule(static) num_threads(threads_)
      for (int i = 0; i < n_; ++i)
        for (int j = 0; j < n_; ++j)
          std::copy(&rho_[index(i, j, 0)], &rho_[index(i, j, 0)] + n_,
                    work_.ptr + (static_cast<std::size_t>(i) * m + j) * m);
    }
    F::execute(forward_);
    const std::size_t complex_size = static_cast<std::size_t>(m) * m * half;
    if (s_.difference_order == 0) std::memcpy(rho_hat_.data(), spectrum_.ptr, complex_size * sizeof(Complex));
#pragma omp parallel for schedule(static) num_threads(threads_)
    for (std::size_t k = 0; k < complex_size; ++k) {
      const Real g = static_cast<Real>(green_[k]);
      spectrum_.ptr[k][0] *= g;
      spectrum_.ptr[k][1] *= g;
    }
    F::execute(backward_);
#pragma omp parallel for schedule(static) num_threads(threads_)
    for (int i = 0; i < n_; ++i)
      for (int j = 0; j < n_; ++j)
        std::copy(work_.ptr + (static_cast<std::size_t>(i) * m + j) * m,
                  work_.ptr + (static_cast<std::size_t>(i) * m + j) * m + n_, &phi_[index(i, j, 0)]);
    if (s_.difference_order != 0) return;
    // Force kernels: a product with each (imaginary) kernel and an inverse transform a component.
    for (int d = 0; d < 3; ++d) {
      const std::vector<double>& g = force_green_[d];
#pragma omp parallel for schedule(static) num_threads(threads_)
      for (std::size_t k = 0; k < complex_size; ++k) {
        const Real gi = static_cast<Real>(g[k]);
        spectrum_.ptr[k][0] = -rho_hat_[2 * k + 1] * gi;
        spectrum_.ptr[k][1] = rho_hat_[2 * k] * gi;
      }
      F::execute(backward_);
#pragma omp parallel for schedule(static) num_threads(threads_)
      for (int i = 0; i < n_; ++i)
        for (int j = 0; j < n_; ++j)
          std::copy(work_.ptr + (static_cast<std::size_t>(i) * m + j) * m,
                    work_.ptr + (static_cast<std::size_t>(i) * m + j) * m + n_, &acc_[d][index(i, j, 0)]);
    }
  }

  // Minus the potential's gradient on every cell the particles' stencils can reach (the whole
  // periodic mesh; an isolated mesh's cells whose difference stays inside it).
  void gradient() override {
    if (s_.difference_order == 2)
      gradient<2>();
    else if (s_.difference_order == 4)
      gradient<4>();
  }
  template <int Order>
  void gradient() {
    const bool periodic = s_.boundary == Boundary::periodic;
    const int reach = Order / 2;
    const int lo = periodic ? 0 : reach, hi = periodic ? n_ : n_ - reach;
    const double inv_h = 1.0 / s_.cell();
    auto at = [&](int i, int j, int k) { return static_cast<double>(phi_[index(wrap(i), wrap(j), wrap(k))]); };
#pragma omp parallel for schedule(static) num_threads(threads_)
    for (int i = 0; i < n_; ++i)
      for (int j = 0; j < n_; ++j)
        for (int k = 0; k < n_; ++k) {
          const bool inside = i >= lo && i < hi && j >= lo && j < hi && k >= lo && k < hi;
          for (int d = 0; d < 3; ++d)
            acc_[d][index(i, j, k)] =
                inside ? static_cast<Real>(minus_gradient<Order>(at, i, j, k, d, inv_h)) : Real(0);
        }
  }

  template <Assignment A>
  void gather(const ParticleSet<Real>& p, std::vector<Real>* acc, std::vector<Real>* potential) {
    constexpr int W = stencil_width(A);
    const long np = p.size();
#pragma omp parallel for schedule(static) num_threads(threads_)
    for (long i = 0; i < np; ++i) {
      Real a[3] = {0, 0, 0}, pot = 0;
      if (p.status[i] == 0) {
        int c[3];
        Real w[3][3];
        for (int d = 0; d < 3; ++d) stencil<A>(cell_units(p, d, i), c[d], w[d]);
        for (int x = 0; x < W; ++x)
          for (int y = 0; y < W; ++y)
            for (int z = 0; z < W; ++z) {
              const Real wxyz = w[0][x] * w[1][y] * w[2][z];
              const std::size_t cell = index(wrap(c[0] + x), wrap(c[1] + y), wrap(c[2] + z));
              for (int d = 0; d < 3; ++d) a[d] += wxyz * acc_[d][cell];
              pot += wxyz * phi_[cell];
            }
      }
      if (acc)
        for (int d = 0; d < 3; ++d) (*acc)[static_cast<std::size_t>(d) * np + i] = a[d];
      if (potential) (*potential)[i] = pot;
    }
  }

  void interpolate(const ParticleSet<Real>& p, std::vector<Real>* acc, std::vector<Real>* potential) override {
    switch (s_.assignment) {
      case Assignment::ngp: gather<Assignment::ngp>(p, acc, potential); break;
      case Assignment::cic: gather<Assignment::cic>(p, acc, potential); break;
      case Assignment::tsc: gather<Assignment::tsc>(p, acc, potential); break;
    }
  }

  PmSettings s_;
  int threads_ = 1, n_ = 0, m_ = 0;
  std::size_t cells_ = 0;
  std::vector<Real> rho_, phi_, acc_[3];
  std::vector<double> green_, mg_phi_;
  std::array<std::vector<double>, 3> force_green_;
  std::vector<Real> rho_hat_;  // the density's transform (re, im), kept for the force kernels
  FftwBuffer<Real> work_;
  FftwBuffer<Complex> spectrum_;
  typename F::Plan forward_{}, backward_{};
};

}  // namespace

template <class Real>
std::unique_ptr<MeshForces<Real>> make_cpu_mesh_forces(const PmSettings& settings) {
  return std::make_unique<CpuMeshForces<Real>>(settings);
}
template std::unique_ptr<MeshForces<float>> make_cpu_mesh_forces(const PmSettings&);
template std::unique_ptr<MeshForces<double>> make_cpu_mesh_forces(const PmSettings&);

}  // namespace swarmfit::pm
