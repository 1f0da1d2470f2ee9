// `swarmfit pm`: the particle-mesh engine (integrators/pm) as a command: initial conditions, a
// fixed-step leapfrog, snapshots with the density projected on the x-y plane (frames for
// `swarmfit plot`), a log of energy and momentum, resume.
//
// The output is a folder: snapshot_NNNNNN.h5 (time, id, mass, position, velocity, status and
// density_xy, the mesh's surface density), log.csv (one row per snapshot) and state.h5 (the
// particles at the last snapshot or signal, in the run's precision, with the step count).
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "config.hpp"
#include "errors.hpp"
#include "integrate_settings.hpp"
#include "mpi_work.hpp"
#include "run_folder.hpp"
#include "swarmfit/inference/hdf5_io.hpp"
#include "swarmfit/pm/initial_conditions.hpp"
#include "swarmfit/pm/pm.hpp"
#if defined(SWARMFIT_PM_MPI)
#include "swarmfit/pm/pm_mpi.hpp"
#endif

namespace po = boost::program_options;

namespace swarmfit::app {

using namespace swarmfit::pm;

namespace {

po::options_description pm_keys() {
  po::options_description k("Keys (key = value in the file, key=value on the command line)");
  k.add_options()("ic", po::value<std::string>()->default_value("plummer"),
                  "initial conditions: plummer, hernquist, cold_sphere, collision (two Plummer spheres), or file")(
      "n", po::value<long>()->default_value(32768), "particles")("seed", po::value<long>()->default_value(1),
                                                                 "seed of the initial conditions")(
      "mass", po::value<double>()->default_value(1.0), "total mass")(
      "scale", po::value<double>()->default_value(1.0),
      "length scale: plummer and collision (Henon units times this), hernquist's a, cold_sphere's radius")(
      "max_radius", po::value<double>()->default_value(0.0),
      "plummer, hernquist: radii beyond this many scales drawn again (0: plummer none, hernquist 50)")(
      "separation", po::value<double>()->default_value(10.0), "collision: the centres' distance along x")(
      "impact", po::value<double>()->default_value(1.0), "collision: their offset along y")(
      "ic_file", po::value<std::string>(), "ic = file: CSV of mass,x,y,z,vx,vy,vz (a header line allowed)")(
      "mesh", po::value<int>()->default_value(64), "cells a side (a power of two, 8 to 4096)")(
      "box", po::value<double>()->default_value(16.0), "the mesh's side length, centred on the origin")(
      "boundary", po::value<std::string>()->default_value("isolated"), "isolated or periodic")(
      "assignment", po::value<std::string>()->default_value("tsc"), "ngp, cic or tsc")(
      "difference_order", po::value<int>()->default_value(4),
      "accelerations: centred differences of order 2 or 4, or 0 (isolated): the free-space force kernels")(
      "deconvolve", po::value<bool>()->default_value(false), "periodic: undo the assignment window")(
      "solver", po::value<std::string>()->default_value("fft"), "fft or multigrid (periodic)")(
      "multigrid_tolerance", po::value<double>()->default_value(1e-10), "multigrid: relative residual")(
      "multigrid_max_cycles", po::value<int>()->default_value(50), "multigrid: V-cycles at most")(
      "G", po::value<double>()->default_value(1.0), "gravitational constant")(
      "precision", po::value<std::string>()->default_value("double"), "double or single (FP64 or FP32)")(
      "dt", po::value<double>()->default_value(0.01), "the leapfrog's step")(
      "t_end", po::value<double>()->default_value(1.0), "end time (a whole number of steps)")(
      "snapshot_interval", po::value<double>()->default_value(0.25), "time between snapshots (whole steps)")(
      "output", po::value<std::string>()->default_value("pm_out"), "output folder")(
      "overwrite", po::value<bool>()->default_value(false), "replace an existing output folder")(
      "backend", po::value<std::string>()->default_value("cpu"), "cpu or cuda")(
      "threads", po::value<int>()->default_value(0), "CPU threads (0: all)")(
      "output_limit_gb", po::value<double>()->default_value(10.0), "refuse runs whose snapshots would exceed this");
  return k;
}

// A time as a whole number of steps, or refused.
long whole_steps(const KeyOrigins& o, const std::string& key, double t, double dt) {
  const double k = std::round(t / dt);
  if (k < 1 || std::fabs(k * dt - t) > 1e-9 * t) bad_value(o, key, "must be a whole number of steps dt");
  if (k > 1e9) bad_value(o, key, "more than 1e9 steps");
  return static_cast<long>(k);
}

template <class Real>
ParticleSet<Real> read_ic_file(const std::string& path) {
  const std::vector<std::array<double, 7>> rows = read_particle_csv(path, false);
  if (rows.size() < 2) throw InputError(path + ": fewer than 2 particles");
  ParticleSet<Real> p;
  p.resize(static_cast<long>(rows.size()));
  for (std::size_t i = 0; i < rows.size(); ++i) {
    p.mass[i] = static_cast<Real>(rows[i][0]);
    for (int d = 0; d < 3; ++d) {
      p.x[d][i] = static_cast<Real>(rows[i][1 + d]);
      p.v[d][i] = static_cast<Real>(rows[i][4 + d]);
    }
    p.id[i] = static_cast<long>(i);
    p.status[i] = 0;
  }
  return p;
}

// The particles in the run's precision, as doubles (exact both ways for FP32).
template <class Real>
void write_particles(hid_t f, const ParticleSet<Real>& p) {
  const hsize_t n = p.size();
  std::vector<double> x(3 * n), v(3 * n), m(p.mass.begin(), p.mass.end());
  for (hsize_t i = 0; i < n; ++i)
    for (int d = 0; d < 3; ++d) {
      x[3 * i + d] = p.x[d][i];
      v[3 * i + d] = p.v[d][i];
    }
  std::vector<long> id(p.id.begin(), p.id.end());
  h5::write(f, "id", {n}, id.data());
  h5::write(f, "mass", {n}, m.data());
  h5::write(f, "position", {n, 3}, x.data());
  h5::write(f, "velocity", {n, 3}, v.data());
  h5::write(f, "status", {n}, p.status.data());
}

struct PmResumed {
  std::vector<double> mass, x, v;
  std::vector<long> id;
  std::vector<int> status;
  double time = 0, e0 = 0;
  long steps = 0, snapshot = 0;
};

PmResumed read_pm_state(const std::string& path) {
  PmResumed r;
  try {
    h5::Handle f = open_state_file(path);
    r.time = h5::read_double_attribute(f, "time");
    r.e0 = h5::read_double_attribute(f, "initial_energy");
    r.steps = h5::read_long_attribute(f, "steps");
    r.snapshot = h5::read_long_attribute(f, "snapshot");
    r.id = h5::read_longs(f, "id");
    r.mass = h5::read_doubles(f, "mass");
    r.x = h5::read_doubles(f, "position");
    r.v = h5::read_doubles(f, "velocity");
    r.status = h5::read_ints(f, "status");
    const std::size_t n = r.id.size();
    if (n < 2 || r.mass.size() != n || r.x.size() != 3 * n || r.v.size() != 3 * n || r.status.size() != n)
      throw std::runtime_error("datasets of different lengths");
    for (const auto* values : {&r.mass, &r.x, &r.v})
      for (double v : *values)
        if (!std::isfinite(v)) throw std::runtime_error("a value is not finite");
    for (int s : r.status)
      if (s != 0 && s != 1) throw std::runtime_error("unknown status");
    if (!std::isfinite(r.time) || r.steps < 0 || r.snapshot < 0) throw std::runtime_error("bad bookkeeping");
  } catch (const std::exception& e) {
    throw InputError(path + ": not a swarmfit pm state file: " + e.what());
  }
  return r;
}

struct Run {
  PmSettings settings;
  std::string ic, backend, output, state_path, config;
  long n = 0, seed = 1, total_steps = 0, snapshot_every = 0;
  double mass = 1, scale = 1, max_radius = 0, separation = 10, impact = 1, dt = 0.01;
  std::string ic_file;
  bool resume = false, quiet = false;
  PmResumed state;
};

template <class Real>
int run_pm(const Run& r, MpiWork& mpi) {
  ParticleSet<Real> particles;
  if (r.resume) {
    const long n = static_cast<long>(r.state.id.size());
    particles.resize(n);
    for (long i = 0; i < n; ++i) {
      particles.mass[i] = static_cast<Real>(r.state.mass[i]);
      particles.id[i] = r.state.id[i];
      particles.status[i] = r.state.status[i];
      for (int d = 0; d < 3; ++d) {
        particles.x[d][i] = static_cast<Real>(r.state.x[3 * i + d]);
        particles.v[d][i] = static_cast<Real>(r.state.v[3 * i + d]);
      }
    }
  } else if (r.ic == "plummer") {
    particles = plummer<Real>(r.n, r.seed, r.mass, r.scale, r.max_radius);
  } else if (r.ic == "hernquist") {
    particles = hernquist<Real>(r.n, r.seed, r.mass, r.scale, r.max_radius > 0 ? r.max_radius : 50.0);
  } else if (r.ic == "cold_sphere") {
    particles = cold_sphere<Real>(r.n, r.seed, r.mass, r.scale);
  } else if (r.ic == "collision") {
    particles = collision<Real>(r.n, r.seed, r.mass, r.scale, r.separation, r.impact);
  } else {
    particles = read_ic_file<Real>(r.ic_file);
  }
  const long total = particles.size();
  std::unique_ptr<MeshForces<Real>> forces;
  try {
    if (mpi.active()) {
#if defined(SWARMFIT_PM_MPI)
      // Every rank made the same particles; the engine keeps each rank's share.
      forces = make_slab_mesh_forces<Real>(r.settings, MPI_COMM_WORLD);
#else
      throw std::runtime_error("this build has no FFTW-MPI: swarmfit pm runs in one process");
#endif
    } else {
      forces = r.backend == "cuda" ? make_cuda_mesh_forces<Real>(r.settings) : make_cpu_mesh_forces<Real>(r.settings);
    }
  } catch (const std::runtime_error& e) {
    throw InputError(e.what());
  }
  PmEngine<Real> engine(std::move(particles), r.settings, std::move(forces), r.resume ? r.state.steps * r.dt : 0.0);
  // Under mpirun rank 0 writes every file; the others take part in the gathers.
  const bool writer = mpi.rank() == 0;
  if (writer && !r.resume) {
    namespace fs = std::filesystem;
    if (fs::exists(r.output)) fs::remove_all(r.output);
    fs::create_directories(r.output);
  }
  if (writer) h5::remove_stale_partials_under(r.output);
  catch_stop_signals();
  // The whole set (on rank 0, by id, under mpirun); every rank must call it.
  ParticleSet<Real> gathered;
  auto all_particles = [&]() -> const ParticleSet<Real>& {
    if (!engine.forces().distributed()) return engine.particles();
    gathered = engine.forces().gather_particles(engine.particles());
    return gathered;
  };

  const auto wall_start = std::chrono::steady_clock::now();
  auto wall = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count(); };
  long steps = r.resume ? r.state.steps : 0, snapshot = r.resume ? r.state.snapshot : 0;
  double e0 = r.resume ? r.state.e0 : 0.0;
  const std::string log_path = r.output + "/log.csv";
  const std::string header =
      "snapshot,time,steps,kinetic,potential,energy,energy_error,px,py,pz,mass_on_mesh,off_mesh,"
      "multigrid_cycles,wall_seconds\n";
  std::string log = r.resume && writer ? log_kept_to(log_path, header, snapshot) : header;
  auto write_state = [&](long k, const ParticleSet<Real>* have = nullptr) {
    const ParticleSet<Real>& all = have ? *have : all_particles();
    if (!writer) return;
    h5::AtomicFile file(r.state_path);
    {
      h5::Handle f(H5Fcreate(file.partial_path().c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT), r.state_path);
      h5::attribute(f, "time", steps * r.dt);
      h5::attribute(f, "initial_energy", e0);
      h5::attribute(f, "steps", steps);
      h5::attribute(f, "snapshot", k);
      h5::attribute(f, "config", r.config);
      write_particles(f, all);
    }
    file.commit();
  };
  PmDiagnostics last;
  auto record = [&](long k) {
    last = engine.diagnostics();
    if (k == 0 && !r.resume) e0 = last.total();
    // The mesh's density summed along z times the cell: the surface density on the x-y plane.
    const int n = r.settings.mesh;
    const std::vector<double> rho = engine.forces().density();
    const ParticleSet<Real>& all = all_particles();
    if (!writer) return;
    std::vector<double> sigma(static_cast<std::size_t>(n) * n, 0.0);
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j)
        for (int z = 0; z < n; ++z)
          sigma[static_cast<std::size_t>(i) * n + j] += rho[(static_cast<std::size_t>(i) * n + j) * n + z];
    for (double& s : sigma) s *= r.settings.cell();
    const std::string path = r.output + "/" + snapshot_name(k);
    h5::AtomicFile file(path);
    {
      h5::Handle f(H5Fcreate(file.partial_path().c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT), path);
      h5::attribute(f, "time", steps * r.dt);
      h5::attribute(f, "box", r.settings.box);
      h5::attribute(f, "origin_x", r.settings.origin[0]);
      h5::attribute(f, "origin_y", r.settings.origin[1]);
      write_particles(f, all);
      h5::write(f, "density_xy", {static_cast<hsize_t>(n), static_cast<hsize_t>(n)}, sigma.data());
    }
    file.commit();
    char row[512];
    std::snprintf(row, sizeof row, "%ld,%.17g,%ld,%.17g,%.17g,%.17g,%.6e,%.17g,%.17g,%.17g,%.17g,%ld,%d,%.3f\n", k,
                  steps * r.dt, steps, last.kinetic, last.potential, last.total(), last.total() / e0 - 1,
                  last.momentum[0], last.momentum[1], last.momentum[2], last.mass_on_mesh, last.off_mesh,
                  engine.forces().timings().multigrid_cycles, wall());
    log += row;
    h5::AtomicFile log_file(log_path);
    {
      std::ofstream out(log_file.partial_path());
      out << log;
    }
    log_file.commit();
    write_state(k, &all);
  };
  if (!r.resume) record(0);
  const bool tty = isatty(STDERR_FILENO) && !r.quiet;
  double last_progress = 0;
  while (steps < r.total_steps) {
    engine.step(r.dt);
    ++steps;
    if (steps % r.snapshot_every == 0 || steps == r.total_steps) record(++snapshot);
    // (A signal to one rank stops every rank after the same step.)
    if (mpi.active() ? mpi.any(stop_signal() != 0) : stop_signal() != 0) {
      write_state(snapshot);  // the particles now, the log and snapshots as they are
      const int signal = stop_signal() != 0 ? stop_signal() : 15;  // (another rank's)
      if (!writer) return 128 + signal;
      std::fprintf(stderr, "\nswarmfit pm: stopped by signal %d at step %ld; continue with --resume\n", signal, steps);
      return 128 + signal;
    }
    if (writer && !r.quiet && wall() - last_progress >= (tty ? 0.5 : 30.0)) {
      last_progress = wall();
      const double done = static_cast<double>(steps) / r.total_steps, eta = wall() * (1 - done) / done;
      std::fprintf(stderr, "%s  t = %.6g, step %ld of %ld (%.1f%%), ETA %.0f s%s", tty ? "\r" : "", steps * r.dt, steps,
                   r.total_steps, 100 * done, eta, tty ? "" : "\n");
    }
  }
  if (tty) std::fprintf(stderr, "\n");
  if (!writer) return 0;
  const std::string backend = mpi.active() ? r.backend + ", " + std::to_string(mpi.size()) + " ranks" : r.backend;
  std::printf(
      "swarmfit pm: %ld particles, %d^3 mesh (%s, %s, %s), %s, backend %s: t = %g after %ld steps in %.2f s "
      "(mesh forces %.2f s, particle updates %.2f s); energy error %.3e, %ld particles off the mesh; output %s\n",
      total, r.settings.mesh, r.settings.boundary == Boundary::periodic ? "periodic" : "isolated",
      r.settings.solver == Solver::fft ? "fft" : "multigrid",
      r.settings.assignment == Assignment::ngp   ? "ngp"
      : r.settings.assignment == Assignment::cic ? "cic"
                                                 : "tsc",
      sizeof(Real) == 4 ? "single" : "double", backend.c_str(), steps * r.dt, steps, wall(), engine.force_seconds(),
      engine.update_seconds(), last.total() / e0 - 1, last.off_mesh, r.output.c_str());
  return 0;
}

}  // namespace

int pm_command(int argc, char** argv) {
  po::variables_map args;
  std::vector<std::string> overrides;
  const po::options_description keys = pm_keys();
  if (!parse_run_flags(argc, argv, "pm",
                       "  Particle-mesh gravity: mass assignment, a Poisson solve on the mesh (FFT or multigrid),\n"
                       "  forces back to the particles, kick-drift-kick.",
                       keys, args, overrides))
    return 0;
  MpiWork mpi(nullptr, nullptr);
  // ---- read and check everything before any work
  LoadedKeys loaded = load_keys(args, overrides, keys);
  const KeyOrigins& o = loaded.origins;
  const po::variables_map& vm = loaded.vm;
  Run r;
  r.config = loaded.text;
  PmSettings& s = r.settings;
  s.mesh = vm["mesh"].as<int>();
  s.box = positive<double>(vm, o, "box");
  for (double& c : s.origin) c = -s.box / 2;
  const std::string boundary = vm["boundary"].as<std::string>();
  if (boundary != "isolated" && boundary != "periodic") bad_value(o, "boundary", "must be isolated or periodic");
  s.boundary = boundary == "periodic" ? Boundary::periodic : Boundary::isolated;
  const std::string assignment = vm["assignment"].as<std::string>();
  if (assignment == "ngp")
    s.assignment = Assignment::ngp;
  else if (assignment == "cic")
    s.assignment = Assignment::cic;
  else if (assignment == "tsc")
    s.assignment = Assignment::tsc;
  else
    bad_value(o, "assignment", "must be ngp, cic or tsc");
  s.difference_order = vm["difference_order"].as<int>();
  s.deconvolve = vm["deconvolve"].as<bool>();
  const std::string solver = vm["solver"].as<std::string>();
  if (solver != "fft" && solver != "multigrid") bad_value(o, "solver", "must be fft or multigrid");
  s.solver = solver == "fft" ? Solver::fft : Solver::multigrid;
  s.multigrid_tolerance = positive<double>(vm, o, "multigrid_tolerance");
  s.multigrid_max_cycles = vm["multigrid_max_cycles"].as<int>();
  s.G = positive<double>(vm, o, "G");
  s.threads = vm["threads"].as<int>();
  if (s.threads < 0 || s.threads > 4096) bad_value(o, "threads", "must be between 0 and 4096");
  try {
    s.check();
  } catch (const std::invalid_argument& e) {
    const std::string what = e.what();
    const std::string key = what.substr(0, what.find(' '));
    bad_value(o, o.settings.count(key) || vm.count(key) ? key : "mesh", what);
  }
  const std::string precision = vm["precision"].as<std::string>();
  if (precision != "double" && precision != "single") bad_value(o, "precision", "must be double or single");
  r.backend = vm["backend"].as<std::string>();
  if (r.backend != "cpu" && r.backend != "cuda") bad_value(o, "backend", "must be cpu or cuda");
  if (mpi.active()) {
    // Slabs over CPU ranks (FFTW-MPI); a slab a GPU needs the transposes between devices and is
    // not built yet: one GPU holds the 512^3 mesh and its particles.
    if (r.backend == "cuda") bad_value(o, "backend", "cuda runs in one process (under mpirun: backend = cpu)");
    if (s.solver == Solver::multigrid) bad_value(o, "solver", "multigrid runs in one process (under mpirun: fft)");
    if (s.mesh < mpi.size())
      bad_value(o, "mesh", "must have at least one x plane per MPI rank (" + std::to_string(mpi.size()) + ")");
    // Ranks on one host share its cores, unless `threads` is set.
    if (s.threads == 0 && mpi.local_size() > 1)
      s.threads = std::max(1, static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN)) / mpi.local_size());
  }
  r.dt = positive<double>(vm, o, "dt");
  const double t_end = positive<double>(vm, o, "t_end");
  r.total_steps = whole_steps(o, "t_end", t_end, r.dt);
  r.snapshot_every = whole_steps(o, "snapshot_interval", positive<double>(vm, o, "snapshot_interval"), r.dt);
  r.output = vm["output"].as<std::string>();
  r.state_path = r.output + "/state.h5";
  r.resume = args.count("resume") > 0;
  r.quiet = args.count("quiet") > 0;
  check_output_folder(o, r.output, r.state_path, r.resume, vm["overwrite"].as<bool>());
  if (r.resume) {
    r.state = read_pm_state(r.state_path);
    if (r.state.steps >= r.total_steps)
      throw InputError(r.state_path + ": the run is at step " + std::to_string(r.state.steps) + ", not before t_end");
  }
  r.ic = vm["ic"].as<std::string>();
  if (r.ic != "plummer" && r.ic != "hernquist" && r.ic != "cold_sphere" && r.ic != "collision" && r.ic != "file")
    bad_value(o, "ic", "must be plummer, hernquist, cold_sphere, collision or file");
  r.n = vm["n"].as<long>();
  if (r.ic != "file" && (r.n < 2 || r.n > 2000000000L)) bad_value(o, "n", "must be between 2 and 2e9");
  r.seed = vm["seed"].as<long>();
  r.mass = positive<double>(vm, o, "mass");
  r.scale = positive<double>(vm, o, "scale");
  r.max_radius = positive<double>(vm, o, "max_radius", true);
  r.separation = positive<double>(vm, o, "separation");
  r.impact = positive<double>(vm, o, "impact", true);
  if (r.ic == "file") {
    if (!vm.count("ic_file")) bad_value(o, "ic", "ic = file needs 'ic_file'");
    r.ic_file = vm["ic_file"].as<std::string>();
  }
  // Memory and disk before any work: about 60 bytes a particle and 40 a cell (the isolated FFT
  // mesh is 8 times the cells), snapshots of 64 bytes a particle.
  const double particles = r.resume ? static_cast<double>(r.state.id.size()) : static_cast<double>(r.n);
  const double cells = std::pow(static_cast<double>(s.mesh), 3) * (s.boundary == Boundary::isolated ? 8 : 1);
  const double physical = static_cast<double>(sysconf(_SC_PHYS_PAGES)) * sysconf(_SC_PAGE_SIZE);
  if (60.0 * particles + 40.0 * cells > 0.8 * physical) bad_value(o, "mesh", "needs more memory than the machine has");
  const double gb = 64.0 * particles * (static_cast<double>(r.total_steps) / r.snapshot_every + 1) / 1e9;
  if (gb > positive<double>(vm, o, "output_limit_gb")) {
    std::ostringstream m;
    m << "the snapshots would take " << gb << " GB, past output_limit_gb (raise it, or snapshot less often)";
    bad_value(o, "snapshot_interval", m.str());
  }
  return precision == "single" ? run_pm<float>(r, mpi) : run_pm<double>(r, mpi);
}

}  // namespace swarmfit::app
