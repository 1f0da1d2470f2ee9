// B9 (../shared/design/BENCHMARKS.md): the particle-mesh engine's step. Usage:
//   pm_bench step SIDE MESH PRECISION BACKEND [REPS [BOUNDARY [SOLVER [ORDER]]]]
//   pm_bench planewave SIDE PRECISION BACKEND   (the plane-wave test at SIDE^3: below)
// SIDE^3 particles (a lattice, each moved by up to a cell at random) in a periodic box of side 1
// on a MESH^3 mesh (CIC, 4th-order differences), PRECISION single or double, BACKEND cpu or cuda,
// BOUNDARY periodic (default) or isolated, SOLVER fft (default) or multigrid, ORDER lattice
// (default: the particles in the lattice's row-major order, nearly cell order already) or
// shuffled (a random permutation, as a simulation's particles are ordered once they have moved).
// Prints the fastest of REPS (default 5) force evaluations with each phase's share (the uploads
// and downloads of the GPU backend included in the total), and the fastest of REPS kick-drift-kick
// steps of the engine (on the GPU with the particles kept there), its mesh forces and particle
// updates, and the mean of the REPS steps (with any sort by brick the GPU makes once its particles
// stray from their bricks; the first step's sort is printed on its own).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>

#include "swarmfit/pm/pm.hpp"

using namespace swarmfit::pm;

namespace {

double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

template <class Real>
int run(long side, int mesh, const std::string& backend, int reps, Boundary boundary, Solver solver, bool shuffled) {
  PmSettings s;
  s.mesh = mesh;
  s.box = 1.0;
  s.boundary = boundary;
  s.solver = solver;
  s.assignment = Assignment::cic;
  if (boundary == Boundary::isolated) {  // the lattice in the middle half of the mesh
    for (double& o : s.origin) o = -0.5;
  }
  const long n = side * side * side;
  ParticleSet<Real> p;
  p.resize(n);
  std::mt19937_64 rng(1);
  std::uniform_real_distribution<double> u(-0.5, 0.5);
  const double spacing = (boundary == Boundary::isolated ? 0.5 : 1.0) / side;
  const double start = boundary == Boundary::isolated ? -0.25 : 0.0;
  for (long i = 0; i < n; ++i) {
    const long c[3] = {i / (side * side), (i / side) % side, i % side};
    for (int d = 0; d < 3; ++d) {
      p.x[d][i] = static_cast<Real>(start + (c[d] + 0.5 + u(rng)) * spacing);
      p.v[d][i] = 0;
    }
    p.mass[i] = static_cast<Real>(1.0 / n);
    p.id[i] = i;
    p.status[i] = 0;
  }
  if (shuffled) {  // (Fisher-Yates, every array alike)
    std::mt19937_64 order(2);
    for (long i = n - 1; i > 0; --i) {
      const long j = std::uniform_int_distribution<long>(0, i)(order);
      for (int d = 0; d < 3; ++d) {
        std::swap(p.x[d][i], p.x[d][j]);
        std::swap(p.v[d][i], p.v[d][j]);
      }
      std::swap(p.mass[i], p.mass[j]);
      std::swap(p.id[i], p.id[j]);
    }
  }
  auto forces = backend == "cuda" ? make_cuda_mesh_forces<Real>(s) : make_cpu_mesh_forces<Real>(s);
  std::vector<Real> acc;
  forces->accelerations(p, &acc, nullptr);  // warm-up (plans, allocations)
  double best = 1e300;
  PmTimings phases;
  for (int r = 0; r < reps; ++r) {
    const double t0 = now();
    forces->accelerations(p, &acc, nullptr);
    const double t = now() - t0;
    if (t < best) best = t, phases = forces->timings();
  }
  // The engine's step (a GPU backend keeps the particles on the device): the fastest of REPS.
  PmEngine<Real> engine(p, s, std::move(forces));
  engine.step(1e-3);  // the first step also computes the starting accelerations
  const double first_sort = engine.forces().timings().sort;
  double step = 1e300, step_forces = 0, step_updates = 0, all_steps = 0, sorts = 0;
  for (int r = 0; r < reps; ++r) {
    const double f0 = engine.force_seconds(), u0 = engine.update_seconds(), t0 = now();
    engine.step(1e-3);
    const double t = now() - t0;
    all_steps += t;
    sorts += engine.forces().timings().sort;
    if (t < step) step = t, step_forces = engine.force_seconds() - f0, step_updates = engine.update_seconds() - u0;
  }
  const PmTimings& last = engine.forces().timings();
  std::printf(
      "mode=step backend=%s precision=%s particles=%ld mesh=%d boundary=%s solver=%s order=%s forces_seconds=%.6g "
      "transfers_or_sort=%.6g assign=%.6g solve=%.6g gradient=%.6g interpolate=%.6g kdk_step_seconds=%.6g "
      "step_forces=%.6g step_updates=%.6g step_assign=%.6g step_solve=%.6g step_gradient=%.6g "
      "step_interpolate=%.6g multigrid_cycles=%d kdk_mean_seconds=%.6g sort_seconds_per_step=%.6g "
      "first_step_sort=%.6g\n",
      backend.c_str(), sizeof(Real) == 4 ? "single" : "double", n, mesh,
      boundary == Boundary::periodic ? "periodic" : "isolated", solver == Solver::fft ? "fft" : "multigrid",
      shuffled ? "shuffled" : "lattice", best, phases.sort, phases.assign, phases.solve, phases.gradient,
      phases.interpolate, step, step_forces, step_updates, last.assign, last.solve, last.gradient, last.interpolate,
      phases.multigrid_cycles, all_steps / reps, sorts / reps, first_sort);
  return 0;
}

// The plane-wave test at full size: a SIDE^3 lattice (a particle a cell, at the cell faces along x)
// displaced by A sin(2 pi x) along x in a periodic unit box, CIC, 4th-order differences; the
// worst deviation of the acceleration from 4 pi G rho_bar times the displacement, over its
// amplitude (linear theory; the test's CI size is tests/pm/test_pm.cpp).
template <class Real>
int plane_wave(long side, const std::string& backend) {
  PmSettings s;
  s.mesh = static_cast<int>(side);
  s.box = 1.0;
  s.boundary = Boundary::periodic;
  s.assignment = Assignment::cic;
  // A twentieth of a cell: resolved by FP32 positions (6e-8 of the box) to 0.1%, and linear to 0.1%.
  const double h = 1.0 / side, A = 0.05 * h;
  const long n = side * side * side;
  ParticleSet<Real> p;
  p.resize(n);
  for (long i = 0; i < n; ++i) {
    const long c[3] = {i / (side * side), (i / side) % side, i % side};
    const double q = c[0] * h;
    p.x[0][i] = static_cast<Real>(q + A * std::sin(2 * M_PI * q));
    p.x[1][i] = static_cast<Real>((c[1] + 0.5) * h);
    p.x[2][i] = static_cast<Real>((c[2] + 0.5) * h);
    for (int d = 0; d < 3; ++d) p.v[d][i] = 0;
    p.mass[i] = static_cast<Real>(1.0 / n);
    p.id[i] = i;
    p.status[i] = 0;
  }
  auto forces = backend == "cuda" ? make_cuda_mesh_forces<Real>(s) : make_cpu_mesh_forces<Real>(s);
  std::vector<Real> acc;
  const double t0 = now();
  forces->accelerations(p, &acc, nullptr);
  const double seconds = now() - t0;
  double worst = 0, transverse = 0;
  const double amplitude = 4 * M_PI * A;
  for (long i = 0; i < n; ++i) {
    const double q = (i / (side * side)) * h;
    worst = std::max(worst, std::fabs(acc[i] - amplitude * std::sin(2 * M_PI * q)) / amplitude);
    transverse = std::max(transverse, std::fabs(static_cast<double>(acc[n + i])) / amplitude);
  }
  std::printf(
      "mode=planewave backend=%s precision=%s lattice=%ld mesh=%ld worst_error=%.4g transverse=%.3g "
      "seconds=%.3g\n",
      backend.c_str(), sizeof(Real) == 4 ? "single" : "double", side, side, worst, transverse, seconds);
  return worst < 0.005 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc >= 5 && std::string(argv[1]) == "planewave") {
    const std::string precision = argv[3], backend = argv[4];
    return precision == "single" ? plane_wave<float>(std::atol(argv[2]), backend)
                                 : plane_wave<double>(std::atol(argv[2]), backend);
  }
  if (argc < 6 || std::string(argv[1]) != "step") {
    std::fprintf(
        stderr,
        "usage: pm_bench step SIDE MESH PRECISION BACKEND [REPS [BOUNDARY [SOLVER [ORDER]]]] | pm_bench planewave "
        "SIDE PRECISION BACKEND\n");
    return 2;
  }
  const long side = std::atol(argv[2]);
  const int mesh = std::atoi(argv[3]), reps = argc > 6 ? std::atoi(argv[6]) : 5;
  const std::string precision = argv[4], backend = argv[5];
  const Boundary boundary = argc > 7 && std::string(argv[7]) == "isolated" ? Boundary::isolated : Boundary::periodic;
  const Solver solver = argc > 8 && std::string(argv[8]) == "multigrid" ? Solver::multigrid : Solver::fft;
  const bool shuffled = argc > 9 && std::string(argv[9]) == "shuffled";
  try {
    return precision == "single" ? run<float>(side, mesh, backend, reps, boundary, solver, shuffled)
                                 : run<double>(side, mesh, backend, reps, boundary, solver, shuffled);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "pm_bench: %s\n", e.what());
    return 1;
  }
}
