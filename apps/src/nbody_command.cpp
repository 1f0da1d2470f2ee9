// `swarmfit nbody`: one large N-body system with the block-time-step Hermite engine
// (integrators/nbody): initial conditions, snapshots, a log of energy, virial ratio and
// Lagrangian radii, resume, and MPI (each rank sums the forces of its slice of the massive bodies;
// the partial forces are added with MPI_Allreduce, HiGPUs' decomposition).
//
// The output is a folder: snapshot_NNNNNN.h5 (time, id, mass, positions, velocities), log.csv
// (one row per snapshot) and state.h5 (every body's full Hermite state, time and block step: a
// resumed run continues bitwise). Each file is written under a temporary name and renamed.
#include <omp.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>
#include <thread>

#include "config.hpp"
#include "errors.hpp"
#include "integrate_settings.hpp"
#include "mpi_work.hpp"
#include "run_folder.hpp"
#include "swarmfit/inference/hdf5_io.hpp"
#include "swarmfit/nbody/engine.hpp"
#include "swarmfit/nbody/initial_conditions.hpp"
#include "swarmfit/nbody/particles.hpp"
#include "swarmfit/observations/text_table.hpp"

namespace po = boost::program_options;

namespace swarmfit::app {

// The large-N engine's names (swarmfit::Bodies is the ensemble engine's).
using namespace swarmfit::nbody;
using Bodies = swarmfit::nbody::Bodies;
using BodyState = swarmfit::nbody::BodyState;
using Energy = swarmfit::nbody::Energy;

namespace {

po::options_description nbody_keys() {
  po::options_description k("Keys (key = value in the file, key=value on the command line)");
  k.add_options()("ic", po::value<std::string>()->default_value("plummer"),
                  "initial conditions: plummer (Henon units), cold_sphere, figure_eight, solar_system (AU, solar "
                  "masses, years), or file (ic_file)")("kuiper_belt", po::value<long>()->default_value(0),
                                                       "solar_system: test particles of a Kuiper belt (a 35-50 AU)")(
      "planets", po::value<std::string>()->default_value("all"),
      "solar_system: all eight, or giants (Jupiter to Neptune, the inner planets' masses in the Sun)")(
      "particle_mode", po::value<std::string>()->default_value("block"),
      "test particles: block (on the engine's block steps) or tape (advanced alone through the massive bodies' "
      "recorded steps, a GPU thread each; at most 64 massive bodies, one process)")(
      "r_min", po::value<double>()->default_value(0.0),
      "particle_mode = tape: a particle closer than this to body 0 stops (0: never)")(
      "r_max", po::value<double>()->default_value(0.0),
      "particle_mode = tape: a particle farther than this from body 0 stops (0: never)")(
      "n", po::value<long>()->default_value(1024), "bodies (plummer, cold_sphere)")(
      "seed", po::value<long>()->default_value(1), "seed of the initial conditions")(
      "max_radius", po::value<double>()->default_value(0.0), "plummer: radii beyond this drawn again (0: none)")(
      "radius", po::value<double>()->default_value(1.0), "cold_sphere: radius")(
      "ic_file", po::value<std::string>(),
      "ic = file: CSV of mass,x,y,z,vx,vy,vz (a header line allowed; mass 0: test particles)")(
      "order", po::value<int>()->default_value(4),
      "Hermite order: 4 (Makino & Aarseth 1992) or 6 (Nitadori & Makino 2008)")(
      "eta", po::value<double>()->default_value(0.0), "step accuracy (0: 0.01 for order 4, 0.5 for order 6)")(
      "eta_start", po::value<double>()->default_value(0.0), "first step's accuracy (0: 0.1)")(
      "softening", po::value<double>()->default_value(0.0), "Plummer softening length")(
      "G", po::value<double>()->default_value(1.0), "gravitational constant in the units of the bodies")(
      "max_step", po::value<double>()->default_value(0.0625), "longest block step (a power of two)")(
      "min_step", po::value<double>()->default_value(std::ldexp(1.0, -50)), "a step below this stops the run")(
      "shared_steps", po::value<bool>()->default_value(false), "every body on the smallest step")(
      "backend_steps", po::value<bool>()->default_value(true),
      "the force backend predicts and corrects the active bodies (backend = cuda: on the GPU; false: on the "
      "host, the same bits)")("t_end", po::value<double>()->default_value(1.0), "end time (a multiple of max_step)")(
      "snapshot_interval", po::value<double>()->default_value(0.125),
      "time between snapshots (a multiple of max_step)")("output", po::value<std::string>()->default_value("nbody_out"),
                                                         "output folder")(
      "overwrite", po::value<bool>()->default_value(false), "replace an existing output folder")(
      "backend", po::value<std::string>()->default_value("cpu"), "cpu or cuda")(
      "threads", po::value<int>()->default_value(0), "CPU threads (0: all)")(
      "work_limit", po::value<double>()->default_value(0.0),
      "refuse runs whose pair count is surely above this (0: 1e14 on cpu, 1e16 on cuda)")(
      "output_limit_gb", po::value<double>()->default_value(10.0), "refuse runs whose snapshots would exceed this");
  return k;
}

bool power_of_two(double x) {
  int e = 0;
  return x > 0 && std::isfinite(x) && std::frexp(x, &e) == 0.5;
}

bool multiple_of(double t, double step) { return std::fmod(t, step) == 0.0; }

Bodies read_ic_file(const std::string& path) {
  std::vector<std::array<double, 7>> massive, massless;
  for (const auto& row : read_particle_csv(path, true)) (row[0] > 0 ? massive : massless).push_back(row);
  if (massive.empty()) throw InputError(path + ": no body with mass");
  Bodies b;
  const long n = static_cast<long>(massive.size() + massless.size());
  b.resize(n);
  b.num_massive = static_cast<long>(massive.size());
  long i = 0;
  for (const auto* set : {&massive, &massless})
    for (const auto& row : *set) {
      b.mass[i] = row[0];
      b.id[i] = i;
      b.time[i] = 0.0;
      b.step[i] = 0.0;
      BodyState& s = b.state[i];
      for (int d = 0; d < 3; ++d) {
        s.x[d] = row[1 + d];
        s.v[d] = row[4 + d];
        s.a[d] = s.j[d] = s.s[d] = s.c[d] = 0.0;
      }
      ++i;
    }
  return b;
}

// Radii holding 10, 50 and 90% of the mass about the centre of mass.
std::array<double, 3> lagrangian_radii(const Bodies& b) {
  double m = 0, c[3] = {0, 0, 0};
  for (long i = 0; i < b.num_massive; ++i) {
    m += b.mass[i];
    for (int d = 0; d < 3; ++d) c[d] += b.mass[i] * b.state[i].x[d];
  }
  std::vector<std::pair<double, double>> r(b.num_massive);
  for (long i = 0; i < b.num_massive; ++i) {
    double s = 0;
    for (int d = 0; d < 3; ++d) s += (b.state[i].x[d] - c[d] / m) * (b.state[i].x[d] - c[d] / m);
    r[i] = {std::sqrt(s), b.mass[i]};
  }
  std::sort(r.begin(), r.end());
  std::array<double, 3> out{0, 0, 0};
  const double fractions[3] = {0.1, 0.5, 0.9};
  double cumulative = 0;
  int f = 0;
  for (const auto& [radius, mass] : r) {
    cumulative += mass;
    while (f < 3 && cumulative >= fractions[f] * m) out[f++] = radius;
  }
  return out;
}

// status: the test particles' (particle_mode = tape: particles.hpp), after the massive bodies'
// zeros; empty: none written.
void write_status(hid_t f, const Bodies& b, const std::vector<int>& status) {
  if (status.empty()) return;
  std::vector<int> all(b.num_massive, 0);
  all.insert(all.end(), status.begin(), status.end());
  h5::write(f, "status", {static_cast<hsize_t>(all.size())}, all.data());
}

void write_snapshot(const std::string& path, const Bodies& b, double time, const std::vector<int>& status) {
  h5::AtomicFile file(path);
  {
    h5::Handle f(H5Fcreate(file.partial_path().c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT), path);
    const hsize_t n = b.size();
    std::vector<double> x(3 * n), v(3 * n);
    for (hsize_t i = 0; i < n; ++i)
      for (int d = 0; d < 3; ++d) {
        x[3 * i + d] = b.state[i].x[d];
        v[3 * i + d] = b.state[i].v[d];
      }
    std::vector<long> id(b.id.begin(), b.id.end());
    h5::attribute(f, "time", time);
    h5::attribute(f, "num_massive", static_cast<long>(b.num_massive));
    h5::write(f, "id", {n}, id.data());
    h5::write(f, "mass", {n}, b.mass.data());
    h5::write(f, "position", {n, 3}, x.data());
    h5::write(f, "velocity", {n, 3}, v.data());
    write_status(f, b, status);
  }
  file.commit();
}

// Every body's whole state (x v a j s c, its time and step) and the run's bookkeeping.
void write_state(const std::string& path, const Bodies& b, double time, double e0, long snapshot,
                 const std::string& config, const std::vector<int>& status) {
  h5::AtomicFile file(path);
  {
    h5::Handle f(H5Fcreate(file.partial_path().c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT), path);
    const hsize_t n = b.size();
    std::vector<double> state(18 * n);
    for (hsize_t i = 0; i < n; ++i) {
      const BodyState& s = b.state[i];
      for (int d = 0; d < 3; ++d) {
        state[18 * i + d] = s.x[d];
        state[18 * i + 3 + d] = s.v[d];
        state[18 * i + 6 + d] = s.a[d];
        state[18 * i + 9 + d] = s.j[d];
        state[18 * i + 12 + d] = s.s[d];
        state[18 * i + 15 + d] = s.c[d];
      }
    }
    std::vector<long> id(b.id.begin(), b.id.end());
    h5::attribute(f, "time", time);
    h5::attribute(f, "initial_energy", e0);
    h5::attribute(f, "snapshot", snapshot);
    h5::attribute(f, "num_massive", static_cast<long>(b.num_massive));
    h5::attribute(f, "config", config);
    h5::write(f, "id", {n}, id.data());
    h5::write(f, "mass", {n}, b.mass.data());
    h5::write(f, "state", {n, 18}, state.data());
    h5::write(f, "body_time", {n}, b.time.data());
    h5::write(f, "body_step", {n}, b.step.data());
    write_status(f, b, status);
  }
  file.commit();
}

struct Resumed {
  Bodies bodies;
  std::vector<int> status;  // the test particles' (particle_mode = tape), empty if none saved
  double time = 0, e0 = 0;
  long snapshot = 0;
  std::string config;
};

Resumed read_state(const std::string& path) {
  Resumed r;
  try {
    h5::Handle f = open_state_file(path);
    r.time = h5::read_double_attribute(f, "time");
    r.e0 = h5::read_double_attribute(f, "initial_energy");
    r.snapshot = h5::read_long_attribute(f, "snapshot");
    r.config = h5::read_string_attribute(f, "config");
    const std::vector<long> ids = h5::read_longs(f, "id");
    const long n = static_cast<long>(ids.size());
    Bodies& b = r.bodies;
    b.resize(n);
    b.num_massive = h5::read_long_attribute(f, "num_massive");
    b.mass = h5::read_doubles(f, "mass");
    const std::vector<double> state = h5::read_doubles(f, "state");
    b.time = h5::read_doubles(f, "body_time");
    b.step = h5::read_doubles(f, "body_step");
    if (b.mass.size() != ids.size() || state.size() != 18 * ids.size() || b.time.size() != ids.size() ||
        b.step.size() != ids.size() || b.num_massive < 1 || b.num_massive > n)
      throw std::runtime_error("datasets of different lengths");
    for (long i = 0; i < n; ++i) {
      b.id[i] = ids[i];
      BodyState& s = b.state[i];
      for (int d = 0; d < 3; ++d) {
        s.x[d] = state[18 * i + d];
        s.v[d] = state[18 * i + 3 + d];
        s.a[d] = state[18 * i + 6 + d];
        s.j[d] = state[18 * i + 9 + d];
        s.s[d] = state[18 * i + 12 + d];
        s.c[d] = state[18 * i + 15 + d];
      }
    }
    for (double v : state)
      if (!std::isfinite(v)) throw std::runtime_error("a state value is not finite");
    if (H5Lexists(f, "status", H5P_DEFAULT) > 0) {
      const std::vector<long> status = h5::read_longs(f, "status");
      if (static_cast<long>(status.size()) != n) throw std::runtime_error("status of another length");
      for (long i = b.num_massive; i < n; ++i) {
        if (status[i] < kParticleAlive || status[i] > kParticleEncounter) throw std::runtime_error("unknown status");
        r.status.push_back(static_cast<int>(status[i]));
      }
    }
  } catch (const std::exception& e) {
    throw InputError(path + ": not a swarmfit nbody state file: " + e.what());
  }
  return r;
}

}  // namespace

int nbody_command(int argc, char** argv) {
  po::variables_map args;
  std::vector<std::string> overrides;
  const po::options_description keys = nbody_keys();
  if (!parse_run_flags(argc, argv, "nbody",
                       "  One large N-body system: block-time-step Hermite of order 4 or 6, forces on CPU threads or\n"
                       "  the GPU; under mpirun each rank sums its slice of the bodies.",
                       keys, args, overrides))
    return 0;
  MpiWork mpi(nullptr, nullptr);
  const auto program_start = std::chrono::steady_clock::now();

  // ---- read and check everything before any work
  LoadedKeys loaded = load_keys(args, overrides, keys);
  const KeyOrigins& o = loaded.origins;
  const po::variables_map& vm = loaded.vm;
  const std::string& config_text = loaded.text;

  NbodySettings s;
  s.order = vm["order"].as<int>();
  if (s.order != 4 && s.order != 6) bad_value(o, "order", "must be 4 or 6");
  s.eta = positive<double>(vm, o, "eta", true);
  s.eta_start = positive<double>(vm, o, "eta_start", true);
  s.softening = positive<double>(vm, o, "softening", true);
  s.G = positive<double>(vm, o, "G");
  s.max_step = positive<double>(vm, o, "max_step");
  if (!power_of_two(s.max_step)) bad_value(o, "max_step", "must be a power of two (1, 0.5, 0.0625, ...)");
  s.min_step = positive<double>(vm, o, "min_step");
  if (s.min_step >= s.max_step) bad_value(o, "min_step", "must be below max_step");
  s.shared_steps = vm["shared_steps"].as<bool>();
  s.backend_steps = vm["backend_steps"].as<bool>();
  const double t_end = positive<double>(vm, o, "t_end");
  if (!multiple_of(t_end, s.max_step)) bad_value(o, "t_end", "must be a multiple of max_step");
  const double interval = positive<double>(vm, o, "snapshot_interval");
  if (!multiple_of(interval, s.max_step)) bad_value(o, "snapshot_interval", "must be a multiple of max_step");
  if (t_end / interval > 1e6) bad_value(o, "snapshot_interval", "more than 1e6 snapshots");
  const std::string backend = vm["backend"].as<std::string>();
  if (backend != "cpu" && backend != "cuda") bad_value(o, "backend", "must be cpu or cuda");
  const int threads = vm["threads"].as<int>();
  if (threads < 0 || threads > 4096) bad_value(o, "threads", "must be between 0 and 4096");
  const std::string output = vm["output"].as<std::string>();
  const bool resume = args.count("resume") > 0;
  const bool overwrite = vm["overwrite"].as<bool>();
  namespace fs = std::filesystem;
  const std::string state_path = output + "/state.h5";
  check_output_folder(o, output, state_path, resume, overwrite);

  // The Solar System's units set G, for a new run and a resumed one alike.
  if (vm["ic"].as<std::string>() == "solar_system") {
    if (o.settings.count("G")) bad_value(o, "G", "ic = solar_system sets G (AU, solar masses, Julian years)");
    s.G = kSolarSystemG;
  }
  Bodies bodies;
  Resumed state;
  if (resume) {
    state = read_state(state_path);
    bodies = state.bodies;
    if (state.time >= t_end)
      throw InputError(state_path + ": the run is at t = " + std::to_string(state.time) +
                       ", not before t_end = " + std::to_string(t_end));
  } else {
    const std::string ic = vm["ic"].as<std::string>();
    const long n = vm["n"].as<long>();
    if (ic == "plummer" || ic == "cold_sphere") {
      if (n < 2 || n > 100000000) bad_value(o, "n", "must be between 2 and 1e8");
    }
    if (ic == "plummer")
      bodies = plummer_sphere(n, static_cast<std::uint64_t>(vm["seed"].as<long>()),
                              positive<double>(vm, o, "max_radius", true));
    else if (ic == "cold_sphere")
      bodies = cold_sphere(n, static_cast<std::uint64_t>(vm["seed"].as<long>()), positive<double>(vm, o, "radius"));
    else if (ic == "figure_eight")
      bodies = figure_eight();
    else if (ic == "solar_system") {
      const long belt = vm["kuiper_belt"].as<long>();
      if (belt < 0 || belt > 100000000) bad_value(o, "kuiper_belt", "must be between 0 and 1e8");
      const std::string planets = vm["planets"].as<std::string>();
      if (planets != "all" && planets != "giants") bad_value(o, "planets", "must be all or giants");
      bodies = solar_system(belt, static_cast<std::uint64_t>(vm["seed"].as<long>()), planets == "giants");
    } else if (ic == "file") {
      if (!vm.count("ic_file")) bad_value(o, "ic", "ic = file needs 'ic_file'");
      bodies = read_ic_file(vm["ic_file"].as<std::string>());
    } else
      bad_value(o, "ic", "must be plummer, cold_sphere, figure_eight, solar_system or file");
    for (const char* key : {"kuiper_belt", "planets"})
      if (ic != "solar_system" && o.settings.count(key)) bad_value(o, key, "only with ic = solar_system");
  }
  const std::string particle_mode = vm["particle_mode"].as<std::string>();
  if (particle_mode != "block" && particle_mode != "tape") bad_value(o, "particle_mode", "must be block or tape");
  const bool tape = particle_mode == "tape";
  ParticleRules rules;
  rules.eta = s.eta > 0 ? s.eta : (s.order == 6 ? 0.5 : 0.01);
  rules.eps2 = s.softening * s.softening;
  rules.max_step = s.max_step;
  rules.min_step = s.min_step;
  rules.r_min = positive<double>(vm, o, "r_min", true);
  rules.r_max = positive<double>(vm, o, "r_max", true);
  if (rules.r_max == 0) rules.r_max = HUGE_VAL;
  if (rules.r_min >= rules.r_max) bad_value(o, "r_min", "must be below r_max");
  if (tape) {
    if (mpi.active()) bad_value(o, "particle_mode", "tape runs in one process (not under mpirun)");
    if (bodies.num_massive > 64) bad_value(o, "particle_mode", "tape takes at most 64 massive bodies");
    if (s.shared_steps) bad_value(o, "particle_mode", "tape does not take shared_steps");
  } else {
    for (const char* key : {"r_min", "r_max"})
      if (o.settings.count(key)) bad_value(o, key, "only with particle_mode = tape");
  }
  if (resume && !state.status.empty() && !tape)
    bad_value(o, "particle_mode", "the run was made with particle_mode = tape: resume it so");
  // Memory: about 30 doubles a body on the host and 30 on the device.
  const double bytes = 240.0 * bodies.size() * (backend == "cuda" ? 1 : 2);
  const double physical = static_cast<double>(sysconf(_SC_PHYS_PAGES)) * sysconf(_SC_PAGE_SIZE);
  if (bytes > 0.8 * physical) bad_value(o, "n", "needs more memory than the machine has");

  // Work and disk, estimated before any work. Every body takes at least t_end / max_step steps, each
  // summing over all massive bodies: a lower bound of the pairs (block steps take many more).
  {
    const double remaining = t_end - (resume ? state.time : 0.0);
    const double pairs = static_cast<double>(bodies.size()) * bodies.num_massive * (remaining / s.max_step);
    double limit = positive<double>(vm, o, "work_limit", true);
    if (limit == 0) limit = backend == "cuda" ? 1e16 : 1e14;
    if (pairs > limit) {
      std::ostringstream m;
      m << "at least " << pairs << " pairs (N x N_massive x t_end / max_step), past work_limit = " << limit
        << " (raise it to run this)";
      bad_value(o, vm.count("work_limit") && !vm["work_limit"].defaulted() ? "work_limit" : "t_end", m.str());
    }
    const double gb = 64.0 * bodies.size() * (remaining / interval + 1) / 1e9;
    if (gb > positive<double>(vm, o, "output_limit_gb")) {
      std::ostringstream m;
      m << "the snapshots would take " << gb << " GB, past output_limit_gb (raise it, or snapshot less often)";
      bad_value(o, "snapshot_interval", m.str());
    }
  }

  // Ranks on one host share its cores: each takes its share of the threads (the host loops and a
  // CPU backend's), unless `threads` is set; spinning threads of four ranks on all cores each
  // stalled the GPU-driving threads.
  if (mpi.active() && threads == 0 && mpi.local_size() > 1)
    omp_set_num_threads(std::max(1, omp_get_num_procs() / mpi.local_size()));
  std::unique_ptr<ForceBackend> forces;
  try {
    forces = backend == "cuda" ? make_cuda_backend() : make_cpu_backend(threads);
  } catch (const std::runtime_error& e) {
    throw InputError(e.what());
  }
  JSlice slice;
  Reduce reduce;
  if (mpi.active()) {
    const long m = bodies.num_massive;
    slice.first = m * mpi.rank() / mpi.size();
    slice.last = m * (mpi.rank() + 1) / mpi.size();
    reduce = [&mpi](double* v, std::size_t count) { mpi.allreduce_sum(v, count); };
  }
  const bool writer = mpi.rank() == 0;
  if (writer && !resume) {
    if (fs::exists(output) && overwrite) fs::remove_all(output);
    fs::create_directories(output);
  }
  if (writer) h5::remove_stale_partials_under(output);
  catch_stop_signals();

  const auto wall_start = std::chrono::steady_clock::now();
  auto wall = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count(); };
  // Where the wall time goes (the closing lines): set-up (reading, initial conditions), the start's
  // force passes, the block steps, the energies, and what rank 0's output adds to the run (the
  // writing itself runs beside the integration: below).
  struct Phases {
    double setup = 0, start = 0, steps = 0, energy = 0, output = 0, hook = 0;
  } phases;
  phases.setup = std::chrono::duration<double>(wall_start - program_start).count();
  auto timed = [&](double& phase, auto&& work) {
    const double begun = wall();
    work();
    phase += wall() - begun;
  };
  // particle_mode = tape: the start (or the resumed state) of every body first, then the massive
  // bodies alone on one CPU thread, the particles through their recorded steps (particles.hpp).
  std::unique_ptr<BlockHermite> start;
  Particles particles;
  std::unique_ptr<ParticleBackend> particle_backend;
  if (tape) {
    try {
      particle_backend = backend == "cuda" ? make_cuda_particles() : make_cpu_particles(threads);
    } catch (const std::runtime_error& e) {
      throw InputError(e.what());
    }
    start = std::make_unique<BlockHermite>(bodies, s, std::move(forces));
    timed(phases.start, [&] { resume ? start->resume() : start->initialise(); });
    particles = Particles::from(start->bodies());
    if (resume && !state.status.empty()) particles.status = state.status;
    forces = make_cpu_backend(1);
  }
  BlockHermite engine(tape ? massive_only(start->bodies()) : bodies, s, std::move(forces), slice, reduce);
  double e0 = 0;
  long snapshot = 0;
  if (resume || tape) engine.resume();
  if (resume) {
    e0 = state.e0;
    snapshot = state.snapshot;
  } else {
    if (!tape) timed(phases.start, [&] { engine.initialise(); });
  }
  start.reset();
  // Every body now (the massive ones and, with tape, the particles) and the particles' status.
  auto all_bodies = [&]() -> Bodies {
    if (!tape) return engine.bodies();
    Bodies b = engine.bodies();
    b.resize(b.num_massive + particles.size());
    for (long i = 0; i < particles.size(); ++i) {
      const long k = b.num_massive + i;
      b.mass[k] = 0.0;
      b.state[k] = particles.state[i];
      b.time[k] = particles.time[i];
      b.step[k] = particles.step[i];
      b.id[k] = particles.id[i];
    }
    return b;
  };
  const std::string log_path = output + "/log.csv";
  // The log: kept rows up to the resumed snapshot, rewritten whole with each snapshot (small).
  const std::string header =
      "snapshot,time,energy,kinetic,potential,energy_error,virial_ratio,r10,r50,r90,block_steps,"
      "body_steps,wall_seconds\n";
  std::string log = resume && writer ? log_kept_to(log_path, header, snapshot) : header;
  // Rank 0 writes each record's files (snapshot, log, state) on a thread of its own while the
  // integration goes on; the next record, a stop and the end wait for it. Only that thread uses
  // HDF5 meanwhile. Why: the writing of millions of bodies is serial work that would otherwise hold
  // up every rank at the next reduction.
  std::exception_ptr write_error;
  std::thread writing;
  struct JoinOnExit {  // an error elsewhere still waits for the files being written
    std::thread& thread;
    ~JoinOnExit() {
      if (thread.joinable()) thread.join();
    }
  } join_on_exit{writing};
  auto finish_writing = [&] {
    if (writing.joinable()) timed(phases.output, [&] { writing.join(); });
    if (write_error) std::rethrow_exception(std::exchange(write_error, nullptr));
  };
  auto record = [&](long k) {
    Energy e;
    timed(phases.energy, [&] { e = engine.energy(); });  // every rank: the potential is a reduction
    if (k == 0) e0 = e.total();
    if (!writer) return e;
    finish_writing();
    timed(phases.output, [&] {
      auto everything = std::make_shared<const Bodies>(all_bodies());
      const auto radii = lagrangian_radii(*everything);
      const NbodyCounters& c = engine.counters();
      char row[512];
      std::snprintf(row, sizeof row, "%ld,%.17g,%.17g,%.17g,%.17g,%.6e,%.8f,%.8g,%.8g,%.8g,%ld,%.17g,%.3f\n", k,
                    engine.time(), e.total(), e.kinetic, e.potential, e.total() / e0 - 1, e.virial_ratio(), radii[0],
                    radii[1], radii[2], c.block_steps, c.body_steps, wall());
      log += row;
      writing = std::thread([&write_error, &output, &log_path, &state_path, &config_text, everything, k, e0,
                             time = engine.time(), status = particles.status, text = log] {
        try {
          write_snapshot(output + "/" + snapshot_name(k), *everything, time, status);
          h5::AtomicFile file(log_path);
          {
            std::ofstream out(file.partial_path());
            out << text;
          }
          file.commit();
          write_state(state_path, *everything, time, e0, k, config_text, status);
        } catch (...) {
          write_error = std::current_exception();
        }
      });
    });
    return e;
  };
  if (!resume) record(0);

  const bool tty = isatty(STDERR_FILENO) && !args.count("quiet");
  double last_progress = 0;
  bool stopped = false;
  Energy last{};
  struct Stop {};
  while (engine.time() < t_end) {
    const double next = std::min(t_end, (std::floor(engine.time() / interval) + 1) * interval);
    auto progress = [&] {
      if (writer && !args.count("quiet") && wall() - last_progress >= (tty ? 0.5 : 30.0)) {
        last_progress = wall();
        const double done = engine.time() / t_end, eta = done > 0 ? wall() * (1 - done) / done : 0;
        std::fprintf(stderr, "%s  t = %.6g of %g (%.1f%%), %ld block steps, ETA %.0f s%s", tty ? "\r" : "",
                     engine.time(), t_end, 100 * done, engine.counters().block_steps, eta, tty ? "" : "\n");
      }
    };
    if (tape) {
      // The massive bodies and the particles advance a snapshot interval together; a signal
      // stops the run between intervals (the state is whole only there).
      timed(phases.steps, [&] { advance_with_tape(engine, particles, *particle_backend, next, interval, rules); });
      progress();
      if (stop_signal() != 0) {
        ++snapshot;
        last = record(snapshot);
        stopped = true;
        break;
      }
      ++snapshot;
      last = record(snapshot);
      continue;
    }
    const double steps_begun = wall();
    try {
      engine.run_until(next, [&] {
        // A signal stops every rank after the same block step; the state then holds bodies at
        // their own times, from which --resume continues bitwise. Under mpirun the ranks agree
        // every 16th block step, since each agreement is an allreduce (bench/RESULTS.md, "Four
        // H200s"): a stop comes at most 16 block steps later.
        const double hook_begun = wall();
        const bool agree = !mpi.active() || engine.counters().block_steps % 16 == 0;
        if (agree && mpi.any(stop_signal() != 0)) throw Stop{};
        progress();
        phases.hook += wall() - hook_begun;
      });
    } catch (const Stop&) {
      stopped = true;
      if (writer) {
        finish_writing();
        write_state(state_path, engine.bodies(), engine.time(), e0, snapshot, config_text, {});
      }
      break;
    }
    phases.steps += wall() - steps_begun;
    ++snapshot;
    last = record(snapshot);
  }
  if (writer) finish_writing();
  if (writer && stopped) {
    std::fprintf(stderr, "\nswarmfit nbody: stopped by signal %d at t = %.17g; continue with --resume\n", stop_signal(),
                 engine.time());
    return 128 + stop_signal();
  }
  if (writer) {
    if (tty) std::fprintf(stderr, "\n");
    const NbodyCounters& c = engine.counters();
    std::printf(
        "swarmfit nbody: %ld bodies (%ld massive), order %d, backend %s%s: t = %g, %ld block steps, %.4g body "
        "steps, %.4g pairs in %.2f s (%.3g pairs/s); energy error %.3e, virial ratio %.4f; output %s\n",
        engine.bodies().size() + particles.size(), engine.bodies().num_massive, s.order, backend.c_str(),
        mpi.active() ? (", " + std::to_string(mpi.size()) + " ranks").c_str() : "", engine.time(), c.block_steps,
        c.body_steps, c.interactions, wall(), c.interactions / std::max(wall(), 1e-9), last.total() / e0 - 1,
        last.virial_ratio(), output.c_str());
    std::printf(
        "swarmfit nbody: time: set-up %.2f s, start %.2f s, block steps %.2f s (forces %.2f s, of which the ranks' "
        "reduction %.2f s), energies %.2f s, output %.2f s\n",
        phases.setup, phases.start, phases.steps, c.force_seconds, c.reduce_seconds, phases.energy, phases.output);
    // The block steps' host work, which every rank repeats: where a run over GPUs loses its time.
    // (Backend steps: the prediction is in the forces, and `correct` is the backend's corrector
    // with the levels' bookkeeping.)
    std::printf(
        "swarmfit nbody: block steps' host work%s: predict %.2f s, correct %.2f s, update the backend %.2f s, "
        "levels and the rest %.2f s; after each step (the ranks' signal check, progress) %.2f s\n",
        s.backend_steps ? " (backend steps: predicted and corrected by the backend)" : "", c.predict_seconds,
        c.correct_seconds, c.update_seconds,
        c.step_seconds - c.force_seconds - c.predict_seconds - c.correct_seconds - c.update_seconds, phases.hook);
  }
  if (stopped) return 128 + stop_signal();
  return 0;
}

}  // namespace swarmfit::app
