// The slab-decomposed particle-mesh forces (pm_mpi.hpp): particles moved to the rank of their
// slab, deposited there with the CPU backend's deterministic colouring, ghost planes summed into
// FFTW-MPI's slabs (in-place r2c with a transposed spectrum: two global transposes a solve instead
// of four, FFTW manual sec. 6.4.3), the potential brought back with the ghost planes the
// differences and the interpolation reach, forces interpolated on the owning rank.
#include "swarmfit/pm/pm_mpi.hpp"

#include <fftw3-mpi.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <mutex>
#include <numeric>
#include <stdexcept>
#include <utility>

#include "cpu_pipeline.hpp"
#include "swarmfit/pm/green.hpp"

namespace swarmfit::pm {

namespace {

// FFTW-MPI's double and single precision interfaces under one name.
template <class Real>
struct FftwMpi;
template <>
struct FftwMpi<double> {
  using Complex = fftw_complex;
  using Plan = fftw_plan;
  static void init(int threads) {
    static std::once_flag once;
    std::call_once(once, [] {
      fftw_init_threads();  // before fftw_mpi_init (FFTW manual sec. 6.11)
      fftw_mpi_init();
    });
    fftw_plan_with_nthreads(threads);
  }
  static ptrdiff_t local_size(int m, MPI_Comm c, ptrdiff_t* n0, ptrdiff_t* s0, ptrdiff_t* n1, ptrdiff_t* s1) {
    return fftw_mpi_local_size_3d_transposed(m, m, m / 2 + 1, c, n0, s0, n1, s1);
  }
  static Plan r2c(int m, double* data, MPI_Comm c) {
    return fftw_mpi_plan_dft_r2c_3d(m, m, m, data, reinterpret_cast<Complex*>(data), c,
                                    FFTW_ESTIMATE | FFTW_MPI_TRANSPOSED_OUT);
  }
  static Plan c2r(int m, double* data, MPI_Comm c) {
    return fftw_mpi_plan_dft_c2r_3d(m, m, m, reinterpret_cast<Complex*>(data), data, c,
                                    FFTW_ESTIMATE | FFTW_MPI_TRANSPOSED_IN);
  }
  static void execute(Plan p) { fftw_execute(p); }
  static void destroy(Plan p) { fftw_destroy_plan(p); }
  static double* alloc(std::size_t count) { return fftw_alloc_real(count); }
  static void release(double* p) { fftw_free(p); }
  static MPI_Datatype type() { return MPI_DOUBLE; }
};
template <>
struct FftwMpi<float> {
  using Complex = fftwf_complex;
  using Plan = fftwf_plan;
  static void init(int threads) {
    static std::once_flag once;
    std::call_once(once, [] {
      fftwf_init_threads();
      fftwf_mpi_init();
    });
    fftwf_plan_with_nthreads(threads);
  }
  static ptrdiff_t local_size(int m, MPI_Comm c, ptrdiff_t* n0, ptrdiff_t* s0, ptrdiff_t* n1, ptrdiff_t* s1) {
    return fftwf_mpi_local_size_3d_transposed(m, m, m / 2 + 1, c, n0, s0, n1, s1);
  }
  static Plan r2c(int m, float* data, MPI_Comm c) {
    return fftwf_mpi_plan_dft_r2c_3d(m, m, m, data, reinterpret_cast<Complex*>(data), c,
                                     FFTW_ESTIMATE | FFTW_MPI_TRANSPOSED_OUT);
  }
  static Plan c2r(int m, float* data, MPI_Comm c) {
    return fftwf_mpi_plan_dft_c2r_3d(m, m, m, reinterpret_cast<Complex*>(data), data, c,
                                     FFTW_ESTIMATE | FFTW_MPI_TRANSPOSED_IN);
  }
  static void execute(Plan p) { fftwf_execute(p); }
  static void destroy(Plan p) { fftwf_destroy_plan(p); }
  static float* alloc(std::size_t count) { return fftwf_alloc_real(count); }
  static void release(float* p) { fftwf_free(p); }
  static MPI_Datatype type() { return MPI_FLOAT; }
};

// One particle as it travels between ranks.
template <class Real>
struct Record {
  Real x[3], v[3], mass;
  std::int64_t id;
  int status;
};

// Which x planes of the physical mesh move between a rank's slab (with `ghost` planes each side,
// indexed e from the slab's lower edge less the ghosts) and FFTW's slabs. mine[f]: this rank's
// planes that rank f holds in the FFT layout, (e, plane); theirs[r]: rank r's planes this rank
// holds. Both sides list them in the same order, so no indices travel.
struct PlaneRoutes {
  int ghost = 0;
  std::vector<std::vector<std::pair<int, int>>> mine, theirs;
};

template <class Real>
class SlabMeshForces final : public CpuPipeline<Real> {
  using F = FftwMpi<Real>;
  using Complex = typename F::Complex;
  using CpuPipeline<Real>::column_;
  using CpuPipeline<Real>::start_;
  using CpuPipeline<Real>::order_;

 public:
  SlabMeshForces(const PmSettings& s, MPI_Comm comm) : s_(s) {
    s_.check();
    if (s_.solver != Solver::fft)
      throw std::invalid_argument("solver = multigrid runs in one process (use solver = fft under mpirun)");
    MPI_Comm_dup(comm, &comm_);
    MPI_Comm_rank(comm_, &rank_);
    MPI_Comm_size(comm_, &size_);
    n_ = s_.mesh;
    m_ = fft_side(s_);
    pad_ = 2 * (m_ / 2 + 1);
    if (n_ < size_)
      throw std::invalid_argument("mesh (" + std::to_string(n_) + ") must have at least one x plane per MPI rank (" +
                                  std::to_string(size_) + ")");
    threads_ = s_.threads > 0 ? s_.threads : omp_get_max_threads();
    lo_ = slab_lower(rank_);
    hi_ = slab_lower(rank_ + 1);
    F::init(threads_);
    ptrdiff_t n0 = 0, s0 = 0, n1 = 0, s1 = 0;
    const ptrdiff_t complex_count = F::local_size(m_, comm_, &n0, &s0, &n1, &s1);
    fft_n0_ = static_cast<int>(n0);
    fft_s0_ = static_cast<int>(s0);
    fft_n1_ = static_cast<int>(n1);
    fft_s1_ = static_cast<int>(s1);
    work_count_ = 2 * static_cast<std::size_t>(std::max<ptrdiff_t>(complex_count, 1));
    work_ = F::alloc(work_count_);
    if (!work_) throw std::bad_alloc();
    forward_ = F::r2c(m_, work_, comm_);
    backward_ = F::c2r(m_, work_, comm_);
    int mine[2] = {fft_s0_, fft_n0_};
    std::vector<int> all(2 * static_cast<std::size_t>(size_));
    MPI_Allgather(mine, 2, MPI_INT, all.data(), 2, MPI_INT, comm_);
    fft_owner_.assign(n_, -1);
    fft_planes_.assign(size_, 0);
    for (int r = 0; r < size_; ++r)
      for (int p = all[2 * r]; p < all[2 * r] + all[2 * r + 1]; ++p)
        if (p < n_) {
          fft_owner_[p] = r;
          ++fft_planes_[r];
        }
    // The transposed spectrum: this rank holds ky in [s1, s1 + n1), all kx, kz in [0, m/2]; the
    // multipliers (every rank makes the whole set: the same numbers as one process) kept there.
    const int half = m_ / 2 + 1;
    auto local = [&](const std::vector<double>& whole) {
      std::vector<double> part(static_cast<std::size_t>(fft_n1_) * m_ * half);
      for (int jl = 0; jl < fft_n1_; ++jl)
        for (int i = 0; i < m_; ++i)
          std::copy_n(&whole[(static_cast<std::size_t>(i) * m_ + fft_s1_ + jl) * half], half,
                      &part[(static_cast<std::size_t>(jl) * m_ + i) * half]);
      return part;
    };
    green_ = local(green_multiplier(s_));
    if (s_.difference_order == 0) {
      const auto kernels = force_kernel_multipliers(s_);
      for (int d = 0; d < 3; ++d) force_green_[d] = local(kernels[d]);
      rho_hat_.resize(2 * green_.size());
    }
    // Ghost planes: one each side for the deposit and the interpolation (a stencil reaches one
    // plane past its particle's); the potential's also the difference's reach.
    reach_ = s_.difference_order / 2;
    deposit_routes_ = routes(1);
    potential_routes_ = routes(1 + reach_);
    const std::size_t plane = static_cast<std::size_t>(n_) * n_;
    ext_rho_.resize((hi_ - lo_ + 2) * plane);
    ext_phi_.resize((hi_ - lo_ + 2 + 2 * reach_) * plane);
    for (auto& a : ext_acc_) a.resize((hi_ - lo_ + 2) * plane);
  }
  ~SlabMeshForces() override {
    F::destroy(forward_);
    F::destroy(backward_);
    F::release(work_);
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized) MPI_Comm_free(&comm_);
  }
  std::string name() const override { return "cpu-mpi"; }
  bool distributed() const override { return true; }

  void take_share(ParticleSet<Real>& p) override {
    const long np = p.size();
    long kept = 0;
    for (long i = 0; i < np; ++i) {
      bool inside = false;
      const int plane = owner_plane(p, i, inside);
      const int owner = inside ? slab_of(plane) : 0;  // particles off the mesh: rank 0's
      if (owner != rank_) continue;
      copy_particle(p, i, p, kept++);
    }
    p.resize(kept);
  }

  void sum_over_ranks(double* values, int count) override {
    MPI_Allreduce(MPI_IN_PLACE, values, count, MPI_DOUBLE, MPI_SUM, comm_);
  }

  ParticleSet<Real> gather_particles(const ParticleSet<Real>& mine) override {
    const long np = mine.size();
    std::vector<Record<Real>> send(np);
    for (long i = 0; i < np; ++i) send[i] = record(mine, i);
    int count = static_cast<int>(np);
    std::vector<int> counts(size_), displacements(size_, 0);
    MPI_Gather(&count, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, comm_);
    if (rank_ == 0) std::partial_sum(counts.begin(), counts.end() - 1, displacements.begin() + 1);
    std::vector<Record<Real>> all(rank_ == 0 ? static_cast<std::size_t>(displacements.back() + counts.back()) : 0);
    MPI_Datatype type = record_type();
    MPI_Gatherv(send.data(), count, type, all.data(), counts.data(), displacements.data(), type, 0, comm_);
    MPI_Type_free(&type);
    ParticleSet<Real> out;
    if (rank_ != 0) return out;
    std::stable_sort(all.begin(), all.end(), [](const Record<Real>& a, const Record<Real>& b) { return a.id < b.id; });
    out.resize(static_cast<long>(all.size()));
    for (std::size_t i = 0; i < all.size(); ++i) place(all[i], out, static_cast<long>(i));
    return out;
  }

  std::vector<double> density() const override { return gather_mesh(rho_owned_); }
  std::vector<double> potential() const override { return gather_mesh(phi_owned_); }

 private:
  int slab_lower(int r) const { return static_cast<int>(static_cast<long>(n_) * r / size_); }
  int slab_of(int plane) const {  // the rank whose slab holds the plane
    int r = static_cast<int>(static_cast<long>(plane) * size_ / n_);
    while (slab_lower(r + 1) <= plane) ++r;
    while (slab_lower(r) > plane) --r;
    return r;
  }
  int wrap(int i) const { return i & (n_ - 1); }
  Real cell_units(const ParticleSet<Real>& p, int d, long i) const {
    return static_cast<Real>((static_cast<double>(p.x[d][i]) - s_.origin[d]) / s_.cell());
  }
  // The x plane of a particle's cell (wrapped), and whether it is on the mesh: the CPU backend's
  // test (an isolated mesh's usable region), in the same arithmetic.
  int owner_plane(const ParticleSet<Real>& p, long i, bool& inside) const {
    const UsableRegion region = usable_region(s_);
    inside = p.status[i] == 0;
    for (int d = 0; d < 3 && inside; ++d) {
      const double s = cell_units(p, d, i);
      if (s_.boundary != Boundary::periodic && !(s >= region.lower && s < region.upper)) inside = false;
    }
    return wrap(static_cast<int>(std::floor(cell_units(p, 0, i))));
  }
  static Record<Real> record(const ParticleSet<Real>& p, long i) {
    Record<Real> r;
    for (int d = 0; d < 3; ++d) {
      r.x[d] = p.x[d][i];
      r.v[d] = p.v[d][i];
    }
    r.mass = p.mass[i];
    r.id = p.id[i];
    r.status = p.status[i];
    return r;
  }
  static void place(const Record<Real>& r, ParticleSet<Real>& p, long i) {
    for (int d = 0; d < 3; ++d) {
      p.x[d][i] = r.x[d];
      p.v[d][i] = r.v[d];
    }
    p.mass[i] = r.mass;
    p.id[i] = r.id;
    p.status[i] = r.status;
  }
  static void copy_particle(const ParticleSet<Real>& from, long i, ParticleSet<Real>& to, long j) {
    place(record(from, i), to, j);
  }
  static MPI_Datatype record_type() {
    MPI_Datatype type;
    MPI_Type_contiguous(static_cast<int>(sizeof(Record<Real>)), MPI_BYTE, &type);
    MPI_Type_commit(&type);
    return type;
  }

  // Marks the particles that left an isolated mesh (status 1: they stay on their rank) and sends
  // every other one to the rank of its slab. The new order: by sending rank, then the old order.
  void migrate(ParticleSet<Real>& p) {
    const long np = p.size();
    destination_.resize(np);
    long moving = 0;
    for (long i = 0; i < np; ++i) {
      bool inside = false;
      const int plane = owner_plane(p, i, inside);
      if (!inside) p.status[i] = 1;
      destination_[i] = inside ? slab_of(plane) : rank_;
      moving += destination_[i] != rank_;
    }
    MPI_Allreduce(MPI_IN_PLACE, &moving, 1, MPI_LONG, MPI_SUM, comm_);
    if (moving == 0) return;  // (a step too short to cross a plane keeps every rank's order)
    std::vector<int> send_counts(size_, 0), receive_counts(size_), send_at(size_, 0), receive_at(size_, 0);
    for (long i = 0; i < np; ++i) ++send_counts[destination_[i]];
    std::partial_sum(send_counts.begin(), send_counts.end() - 1, send_at.begin() + 1);
    std::vector<Record<Real>> send(np);
    std::vector<int> next(send_at);
    for (long i = 0; i < np; ++i) send[next[destination_[i]]++] = record(p, i);
    MPI_Alltoall(send_counts.data(), 1, MPI_INT, receive_counts.data(), 1, MPI_INT, comm_);
    std::partial_sum(receive_counts.begin(), receive_counts.end() - 1, receive_at.begin() + 1);
    std::vector<Record<Real>> received(static_cast<std::size_t>(receive_at.back() + receive_counts.back()));
    MPI_Datatype type = record_type();
    MPI_Alltoallv(send.data(), send_counts.data(), send_at.data(), type, received.data(), receive_counts.data(),
                  receive_at.data(), type, comm_);
    MPI_Type_free(&type);
    p.resize(static_cast<long>(received.size()));
    for (std::size_t i = 0; i < received.size(); ++i) place(received[i], p, static_cast<long>(i));
  }

  // Particles to their slabs' ranks, then the CPU backend's sort by column, this slab's columns.
  void sort(ParticleSet<Real>& p) override {
    migrate(p);
    const long np = p.size();
    column_.resize(np);
    for (long i = 0; i < np; ++i) {
      if (p.status[i] != 0) {
        column_[i] = -1;
        continue;
      }
      const int x = wrap(static_cast<int>(std::floor(cell_units(p, 0, i)))) - lo_;
      const int y = wrap(static_cast<int>(std::floor(cell_units(p, 1, i))));
      column_[i] = static_cast<long>(x) * n_ + y;
    }
    this->sort_by_column(static_cast<long>(hi_ - lo_) * n_);
  }

  // The first x plane of a particle's stencil in the slab's ghosted planes (from lo - 1): the
  // stencil's first cell less the multiple of n its cell was wrapped by.
  int first_plane(const ParticleSet<Real>& p, long i, int first) const {
    const int cell = static_cast<int>(std::floor(cell_units(p, 0, i)));
    return first - (cell - wrap(cell)) - (lo_ - 1);
  }

  // Deposits into the slab and a ghost plane each side: slabs two planes thick in two colours, as
  // the CPU backend (a stencil reaches one plane past its particle's pair), so that every cell
  // gets its contributions in the same order for any thread count.
  template <Assignment A>
  void deposit(const ParticleSet<Real>& p) {
    constexpr int W = stencil_width(A);
    const double volume = s_.cell() * s_.cell() * s_.cell();
    const std::size_t plane = static_cast<std::size_t>(n_) * n_;
    const int planes = hi_ - lo_, pairs = (planes + 1) / 2;
    for (int colour = 0; colour < 2; ++colour) {
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads_)
      for (int pair = colour; pair < pairs; pair += 2) {
        const long first = start_[static_cast<long>(2 * pair) * n_],
                   last = start_[static_cast<long>(std::min(2 * pair + 2, planes)) * n_];
        for (long q = first; q < last; ++q) {
          const long i = order_[q];
          int c[3];
          Real w[3][3];
          for (int d = 0; d < 3; ++d) stencil<A>(cell_units(p, d, i), c[d], w[d]);
          const int e0 = first_plane(p, i, c[0]);
          const Real m = static_cast<Real>(p.mass[i] / volume);
          for (int a = 0; a < W; ++a)
            for (int b = 0; b < W; ++b) {
              const Real wab = m * w[0][a] * w[1][b];
              const std::size_t row = (e0 + a) * plane + static_cast<std::size_t>(wrap(c[1] + b)) * n_;
              for (int e = 0; e < W; ++e) ext_rho_[row + wrap(c[2] + e)] += wab * w[2][e];
            }
        }
      }
    }
  }

  PlaneRoutes routes(int ghost) const {
    PlaneRoutes r;
    r.ghost = ghost;
    r.mine.resize(size_);
    r.theirs.resize(size_);
    for (int rank = 0; rank < size_; ++rank) {
      const int lo = slab_lower(rank), hi = slab_lower(rank + 1);
      for (int e = 0; e < hi - lo + 2 * ghost; ++e) {
        int plane = lo - ghost + e;
        if (s_.boundary == Boundary::periodic)
          plane = ((plane % n_) + n_) % n_;
        else if (plane < 0 || plane >= n_)
          continue;  // beyond an isolated mesh: zero
        const int f = fft_owner_[plane];
        if (rank == rank_) r.mine[f].emplace_back(e, plane);
        if (f == rank_) r.theirs[rank].emplace_back(e, plane);
      }
    }
    return r;
  }

  // The FFT layout's real array: plane pl of this rank's FFT slab, row j, column k.
  std::size_t fft_index(int pl, int j, int k) const {
    return (static_cast<std::size_t>(pl) * m_ + j) * static_cast<std::size_t>(pad_) + k;
  }

  // Ghosted slab planes -> the FFT layout, summed where planes meet (in the order of the sending
  // ranks and their planes: fixed for a rank count); the rest of the doubled mesh zero.
  void to_fft(const std::vector<Real>& ext, const PlaneRoutes& routes) {
    const std::size_t plane = static_cast<std::size_t>(n_) * n_;
    std::vector<int> send_counts(size_), receive_counts(size_), send_at(size_, 0), receive_at(size_, 0);
    for (int r = 0; r < size_; ++r) {
      send_counts[r] = static_cast<int>(routes.mine[r].size() * plane);
      receive_counts[r] = static_cast<int>(routes.theirs[r].size() * plane);
    }
    std::partial_sum(send_counts.begin(), send_counts.end() - 1, send_at.begin() + 1);
    std::partial_sum(receive_counts.begin(), receive_counts.end() - 1, receive_at.begin() + 1);
    send_.resize(static_cast<std::size_t>(send_at.back()) + send_counts.back());
    receive_.resize(static_cast<std::size_t>(receive_at.back()) + receive_counts.back());
    std::size_t at = 0;
    for (int r = 0; r < size_; ++r)
      for (const auto& [e, p] : routes.mine[r]) {
        std::copy_n(&ext[e * plane], plane, &send_[at]);
        at += plane;
      }
    MPI_Alltoallv(send_.data(), send_counts.data(), send_at.data(), F::type(), receive_.data(), receive_counts.data(),
                  receive_at.data(), F::type(), comm_);
    std::fill(work_, work_ + work_count_, Real(0));
    at = 0;
    for (int r = 0; r < size_; ++r)
      for (const auto& [e, p] : routes.theirs[r]) {
        const Real* from = &receive_[at];
#pragma omp parallel for schedule(static) num_threads(threads_)
        for (int j = 0; j < n_; ++j) {
          Real* to = work_ + fft_index(p - fft_s0_, j, 0);
          for (int k = 0; k < n_; ++k) to[k] += from[static_cast<std::size_t>(j) * n_ + k];
        }
        at += plane;
      }
  }

  // The FFT layout -> ghosted slab planes (zero beyond an isolated mesh).
  void from_fft(std::vector<Real>& ext, const PlaneRoutes& routes) {
    const std::size_t plane = static_cast<std::size_t>(n_) * n_;
    std::vector<int> send_counts(size_), receive_counts(size_), send_at(size_, 0), receive_at(size_, 0);
    for (int r = 0; r < size_; ++r) {
      send_counts[r] = static_cast<int>(routes.theirs[r].size() * plane);
      receive_counts[r] = static_cast<int>(routes.mine[r].size() * plane);
    }
    std::partial_sum(send_counts.begin(), send_counts.end() - 1, send_at.begin() + 1);
    std::partial_sum(receive_counts.begin(), receive_counts.end() - 1, receive_at.begin() + 1);
    send_.resize(static_cast<std::size_t>(send_at.back()) + send_counts.back());
    receive_.resize(static_cast<std::size_t>(receive_at.back()) + receive_counts.back());
    std::size_t at = 0;
    for (int r = 0; r < size_; ++r)
      for (const auto& [e, p] : routes.theirs[r]) {
        Real* to = &send_[at];
#pragma omp parallel for schedule(static) num_threads(threads_)
        for (int j = 0; j < n_; ++j) std::copy_n(work_ + fft_index(p - fft_s0_, j, 0), n_, to + std::size_t(j) * n_);
        at += plane;
      }
    MPI_Alltoallv(send_.data(), send_counts.data(), send_at.data(), F::type(), receive_.data(), receive_counts.data(),
                  receive_at.data(), F::type(), comm_);
    std::fill(ext.begin(), ext.end(), Real(0));
    at = 0;
    for (int r = 0; r < size_; ++r)
      for (const auto& [e, p] : routes.mine[r]) {
        std::copy_n(&receive_[at], plane, &ext[e * plane]);
        at += plane;
      }
  }

  // This rank's physical planes of the FFT layout, n x n each (for density() and potential()).
  void keep_owned(std::vector<Real>& owned) const {
    const std::size_t plane = static_cast<std::size_t>(n_) * n_;
    owned.resize(fft_planes_[rank_] * plane);
    for (int pl = 0; pl < fft_planes_[rank_]; ++pl)
      for (int j = 0; j < n_; ++j)
        std::copy_n(work_ + fft_index(pl, j, 0), n_, &owned[pl * plane + std::size_t(j) * n_]);
  }

  std::vector<double> gather_mesh(const std::vector<Real>& owned) const {
    const int plane = n_ * n_;
    std::vector<int> counts(size_), at(size_, 0);
    for (int r = 0; r < size_; ++r) counts[r] = fft_planes_[r] * plane;
    std::partial_sum(counts.begin(), counts.end() - 1, at.begin() + 1);
    std::vector<Real> all(rank_ == 0 ? static_cast<std::size_t>(n_) * plane : 0);
    MPI_Gatherv(owned.data(), counts[rank_], F::type(), all.data(), counts.data(), at.data(), F::type(), 0, comm_);
    return std::vector<double>(all.begin(), all.end());
  }

  void assign(const ParticleSet<Real>& p) override {
    std::fill(ext_rho_.begin(), ext_rho_.end(), Real(0));
    switch (s_.assignment) {
      case Assignment::ngp: deposit<Assignment::ngp>(p); break;
      case Assignment::cic: deposit<Assignment::cic>(p); break;
      case Assignment::tsc: deposit<Assignment::tsc>(p); break;
    }
    to_fft(ext_rho_, deposit_routes_);
    keep_owned(rho_owned_);
  }

  void solve() override {
    Complex* spectrum = reinterpret_cast<Complex*>(work_);
    const std::size_t count = green_.size();
    F::execute(forward_);
    if (s_.difference_order == 0) std::memcpy(rho_hat_.data(), spectrum, count * sizeof(Complex));
#pragma omp parallel for schedule(static) num_threads(threads_)
    for (std::size_t k = 0; k < count; ++k) {
      const Real g = static_cast<Real>(green_[k]);
      spectrum[k][0] *= g;
      spectrum[k][1] *= g;
    }
    F::execute(backward_);
    keep_owned(phi_owned_);
    from_fft(ext_phi_, potential_routes_);
    if (s_.difference_order != 0) return;
    for (int d = 0; d < 3; ++d) {
      const std::vector<double>& g = force_green_[d];
#pragma omp parallel for schedule(static) num_threads(threads_)
      for (std::size_t k = 0; k < count; ++k) {
        const Real gi = static_cast<Real>(g[k]);
        spectrum[k][0] = -rho_hat_[2 * k + 1] * gi;
        spectrum[k][1] = rho_hat_[2 * k] * gi;
      }
      F::execute(backward_);
      from_fft(ext_acc_[d], deposit_routes_);
    }
  }

  // Minus the potential's gradient on the slab's planes and one ghost each side (those the
  // stencils reach), from the potential's planes with the difference's reach more.
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
    const std::size_t plane = static_cast<std::size_t>(n_) * n_;
    auto at = [&](int e, int j, int k) {
      return static_cast<double>(ext_phi_[e * plane + static_cast<std::size_t>(wrap(j)) * n_ + wrap(k)]);
    };
    const int planes = hi_ - lo_ + 2;
#pragma omp parallel for schedule(static) num_threads(threads_)
    for (int q = 0; q < planes; ++q) {
      const int global = lo_ - 1 + q;  // unwrapped: an isolated mesh has nothing beyond its edges
      for (int j = 0; j < n_; ++j)
        for (int k = 0; k < n_; ++k) {
          const bool inside = periodic || (global >= lo && global < hi && j >= lo && j < hi && k >= lo && k < hi);
          for (int d = 0; d < 3; ++d)
            ext_acc_[d][q * plane + static_cast<std::size_t>(j) * n_ + k] =
                inside ? static_cast<Real>(minus_gradient<Order>(at, q + reach, j, k, d, inv_h)) : Real(0);
        }
    }
  }

  template <Assignment A>
  void gather(const ParticleSet<Real>& p, std::vector<Real>* acc, std::vector<Real>* potential) {
    constexpr int W = stencil_width(A);
    const long np = p.size();
    const std::size_t plane = static_cast<std::size_t>(n_) * n_;
#pragma omp parallel for schedule(static) num_threads(threads_)
    for (long i = 0; i < np; ++i) {
      Real a[3] = {0, 0, 0}, pot = 0;
      if (p.status[i] == 0) {
        int c[3];
        Real w[3][3];
        for (int d = 0; d < 3; ++d) stencil<A>(cell_units(p, d, i), c[d], w[d]);
        const int e0 = first_plane(p, i, c[0]);
        for (int x = 0; x < W; ++x)
          for (int y = 0; y < W; ++y)
            for (int z = 0; z < W; ++z) {
              const Real wxyz = w[0][x] * w[1][y] * w[2][z];
              const std::size_t cell = static_cast<std::size_t>(wrap(c[1] + y)) * n_ + wrap(c[2] + z);
              for (int d = 0; d < 3; ++d) a[d] += wxyz * ext_acc_[d][(e0 + x) * plane + cell];
              pot += wxyz * ext_phi_[(e0 + x + reach_) * plane + cell];
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
  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0, size_ = 1, threads_ = 1, n_ = 0, m_ = 0, pad_ = 0, lo_ = 0, hi_ = 0, reach_ = 0;
  int fft_n0_ = 0, fft_s0_ = 0, fft_n1_ = 0, fft_s1_ = 0;
  std::vector<int> fft_owner_, fft_planes_, destination_;
  Real* work_ = nullptr;
  std::size_t work_count_ = 0;
  typename F::Plan forward_{}, backward_{};
  std::vector<double> green_;
  std::vector<double> force_green_[3];
  std::vector<Real> rho_hat_;
  PlaneRoutes deposit_routes_, potential_routes_;
  std::vector<Real> ext_rho_, ext_phi_, ext_acc_[3], rho_owned_, phi_owned_, send_, receive_;
};

}  // namespace

template <class Real>
std::unique_ptr<MeshForces<Real>> make_slab_mesh_forces(const PmSettings& settings, MPI_Comm comm) {
  return std::make_unique<SlabMeshForces<Real>>(settings, comm);
}
template std::unique_ptr<MeshForces<float>> make_slab_mesh_forces(const PmSettings&, MPI_Comm);
template std::unique_ptr<MeshForces<double>> make_slab_mesh_forces(const PmSettings&, MPI_Comm);

}  // namespace swarmfit::pm
