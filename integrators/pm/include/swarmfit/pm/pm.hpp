// The particle-mesh engine (Hockney & Eastwood 1981; on the GPU as Aubert, Amini & David 2009):
// particles' masses assigned to a cubic mesh, the Poisson equation solved on it (FFT with periodic
// or isolated boundaries, or multigrid V-cycles), accelerations by finite differences of the
// potential interpolated back to the particles, and a kick-drift-kick leapfrog. FP32 and FP64
// from the same source (the Real template). Physics per particle and cell: kernels.hpp.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "swarmfit/pm/kernels.hpp"

namespace swarmfit::pm {

enum class Boundary { periodic, isolated };
enum class Solver { fft, multigrid };

struct PmSettings {
  int mesh = 64;                 // cells a side, a power of two >= 8
  double box = 1.0;              // the mesh's side length
  double origin[3] = {0, 0, 0};  // its lower corner
  Boundary boundary = Boundary::isolated;
  Assignment assignment = Assignment::cic;
  // Accelerations: minus the potential's gradient by centred differences of order 2 or 4, or
  // (isolated, FFT: difference_order = 0) each component convolved with its own free-space kernel
  // -G x_d / r^3 (Hockney & Eastwood sec. 6-5), which leaves only the assignment's smoothing.
  int difference_order = 4;
  bool deconvolve = false;  // periodic: divide the Green's function by the assignment window squared
  Solver solver = Solver::fft;
  double G = 1.0;
  // Multigrid: V-cycles until the residual's norm is below tolerance x the source's (or max_cycles).
  double multigrid_tolerance = 1e-10;
  int multigrid_max_cycles = 50;
  int threads = 0;  // CPU threads (0: OpenMP's default)
  double cell() const { return box / mesh; }
  // Throws std::invalid_argument naming the setting that is wrong.
  void check() const;
};

// Particles as structures of arrays. status 0: on the mesh; 1: outside the usable region of an
// isolated mesh (it then moves ballistically, feels no force and adds no mass).
template <class Real>
struct ParticleSet {
  std::vector<Real> x[3], v[3];
  std::vector<Real> mass;
  std::vector<std::int64_t> id;
  std::vector<int> status;
  long size() const { return static_cast<long>(mass.size()); }
  void resize(long n);
};

// Where a solve's time went (the last call).
struct PmTimings {
  double sort = 0, assign = 0, solve = 0, gradient = 0, interpolate = 0;
  int multigrid_cycles = 0;
  double multigrid_residual = 0;  // the last cycle's residual norm over the source's
  long brick_sorts = 0;           // the GPU backend's sorts by brick so far (pm_cuda.cu)
};

// The mesh part of a step: assignment, Poisson solve, gradient, interpolation. The CPU backend
// (FFTW, OpenMP) is pm_cpu.cpp; the GPU's (cuFFT) pm_cuda.cu.
template <class Real>
class MeshForces {
 public:
  virtual ~MeshForces() = default;
  virtual std::string name() const = 0;
  // The accelerations of every particle (status 0; others get 0), and with `potential` the
  // potential at each particle (interpolated with the same stencil). Marks particles that left an
  // isolated mesh's usable region (status 1). Arrays of particles.size().
  virtual void accelerations(ParticleSet<Real>& particles, std::vector<Real>* acc, std::vector<Real>* potential) = 0;
  // The last solve's mesh fields (host copies), row-major x, y, z: density and potential.
  virtual std::vector<double> density() const = 0;
  virtual std::vector<double> potential() const = 0;
  const PmTimings& timings() const { return timings_; }

  // Backends that keep the particles on their device (the GPU's: Aubert et al. keep every stage
  // there) take them once with load() and advance them there with kdk() (a whole kick-drift-kick,
  // the accelerations of the last kick kept for the next); store() copies them back.
  virtual bool resident() const { return false; }
  virtual void load(const ParticleSet<Real>&) {}
  virtual void kdk(double /*dt*/) {}
  virtual void store(ParticleSet<Real>&) {}
  // Seconds of the last kdk() in the mesh forces and in the particle updates.
  double kdk_force_seconds = 0, kdk_update_seconds = 0;

  // Backends that spread the particles over MPI ranks (pm_mpi.hpp: a slab of the mesh a rank).
  // Every rank starts with the whole set and keeps its share; accelerations() moves particles to
  // the rank of their slab first, so each rank's set changes from step to step. Sums over the
  // particles (the diagnostics) are then summed over the ranks; density() and potential() are the
  // whole mesh on rank 0 (empty elsewhere), and every rank must call them.
  virtual bool distributed() const { return false; }
  virtual void take_share(ParticleSet<Real>&) {}
  virtual void sum_over_ranks(double*, int) {}
  // The whole set on rank 0, ordered by id (empty elsewhere; every rank must call it).
  virtual ParticleSet<Real> gather_particles(const ParticleSet<Real>& mine) { return mine; }

 protected:
  PmTimings timings_;
};

template <class Real>
std::unique_ptr<MeshForces<Real>> make_cpu_mesh_forces(const PmSettings& settings);
// The GPU (cuFFT); throws std::runtime_error without CUDA or a device.
template <class Real>
std::unique_ptr<MeshForces<Real>> make_cuda_mesh_forces(const PmSettings& settings);
bool pm_cuda_built();

// The usable region of a mesh, in cell units from its origin: particles of an isolated mesh must
// keep their stencil and the difference's reach inside the mesh; a periodic mesh is all usable.
struct UsableRegion {
  double lower, upper;
};
UsableRegion usable_region(const PmSettings& settings);

struct PmDiagnostics {
  double kinetic = 0, potential = 0;  // potential: 1/2 sum m phi(x) (the mesh's, self-energy included)
  double momentum[3] = {0, 0, 0};
  double mass_on_mesh = 0;
  long off_mesh = 0;  // particles with status 1
  double total() const { return kinetic + potential; }
};

// Kick-drift-kick with a fixed step; the accelerations of the last kick are kept for the next.
template <class Real>
class PmEngine {
 public:
  PmEngine(ParticleSet<Real> particles, const PmSettings& settings, std::unique_ptr<MeshForces<Real>> forces,
           double time = 0.0);
  void step(double dt);
  double time() const { return time_; }
  long steps() const { return steps_; }
  PmDiagnostics diagnostics();           // one extra solve (with the potential)
  const ParticleSet<Real>& particles();  // (a resident backend's copied back first; a distributed one's: this rank's)
  MeshForces<Real>& forces() { return *forces_; }
  const PmSettings& settings() const { return settings_; }
  // Seconds in the mesh forces and in the particle updates, summed over steps.
  double force_seconds() const { return force_seconds_; }
  double update_seconds() const { return update_seconds_; }

 private:
  void wrap();  // periodic: positions back into the box
  ParticleSet<Real> particles_;
  PmSettings settings_;
  std::unique_ptr<MeshForces<Real>> forces_;
  std::vector<Real> acc_;
  bool have_acc_ = false;
  bool stale_ = false;  // a resident backend has moved the particles since the last copy
  double time_ = 0;
  long steps_ = 0;
  double force_seconds_ = 0, update_seconds_ = 0;
};

}  // namespace swarmfit::pm
