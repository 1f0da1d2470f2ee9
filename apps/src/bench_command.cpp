// `swarmfit bench`: benchmarks B1-B5 of design/BENCHMARKS.md, printed as one table.
// Every row reports steps, system-steps/s, pair evaluations/s (one symmetric pair per force
// evaluation), kernel-only and end-to-end time, the fraction of the FP64 peak (GPU rows, from a
// counted flop model), and the worst and median |dE/E| over the systems.
#include <hdf5.h>

#include <algorithm>
#include <boost/program_options.hpp>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "commands.hpp"
#include "config.hpp"
#include "errors.hpp"
#include "initial_conditions.hpp"
#include "swarmfit/integrators/backend.hpp"
#include "swarmfit/integrators/ensemble_checks.hpp"
#include "swarmfit/integrators/limits.hpp"
#include "swarmfit/models/chaos.hpp"
#include "swarmfit/models/elements.hpp"
#include "swarmfit/models/model_config.hpp"
#include "swarmfit/observations/text_table.hpp"

namespace po = boost::program_options;
namespace fs = std::filesystem;

namespace swarmfit::app {

namespace {

struct Row {
  std::string bench, backend, integrator;
  int n;
  long systems;
  double dt, t_end;
  double steps = 0, kernel_ms = 0, total_ms = 0, worst = 0, median = 0;
  double evaluations_per_step = 0;  // force evaluations per step (pairs counted once per evaluation)
  double flops_per_step = 0;        // FP64 flop model per system-step (FMA = 2), GPU peak fraction
  std::string threads_per = "-";    // GPU: "system" or "body" (CudaLayout)
};

// FP64 flops of one Hermite P(EC)^2 step: per pair and evaluation 3+3 differences, r^2 (5),
// sqrt + division (counted as 2), 1/r^2, G/r^3 (3), alpha (7), jerk terms (6), two mass factors
// (2) and 24 accumulations = 60; per body predictor 18 + two correctors 2 x 30 = 78.
double hermite_flops(int n) { return 2.0 * 60.0 * n * (n - 1) / 2 + 78.0 * n; }

struct RunSettings {
  int threads = 0;  // CPU threads (0: all)
  CudaLayout cuda_layout = CudaLayout::kAuto;
  bool reproducible = false;  // cuda: the kernels with the CPU's arithmetic
};

Row run(const std::string& bench, const std::string& backend, const std::string& integrator, int n, long systems,
        double dt, double t_end, const RunSettings& settings, double tau = 1.7e-2, const StepParams* step = nullptr) {
  GeneratorSettings g;
  g.num_systems = systems;
  g.num_bodies = n;
  g.seed = 20261122;
  auto e = generate_swarm_ensemble(g);
  RunRequest r;
  r.integrator = find_integrator(integrator);
  if (step) r.step = *step;
  r.step.time_step = dt;
  r.step.time_step_factor = tau;
  r.step.mvs_splitting = MvsSplitting::kKeplerJumpKick;
  r.destination_time = t_end;
  r.threads = settings.threads;
  r.reproducible = settings.reproducible;
  r.cuda_layout = cuda_threads_per_body(r.integrator->scheme, n, CudaLayout::kThreadPerBody, false)
                      ? settings.cuda_layout
                      : CudaLayout::kAuto;
  r.monitors.close_approach = 0.1;  // monitors on, as in production runs
  r.monitors.rmax = 1000.0;
  const std::vector<double> e0 = system_energies(*e, 1.0);
  Row row{bench, backend, integrator, n, systems, dt, t_end};
  if (backend == "cuda")
    row.threads_per = cuda_threads_per_body(r.integrator->scheme, n, r.cuda_layout, false) ? "body" : "system";
  if (backend == "cuda") {
    Ensemble warm = *e;  // warm-up launch: module load and first-touch stay out of the numbers
    RunRequest short_run = r;
    short_run.destination_time = dt;
    integrate_cuda(warm, short_run);
    const DeviceTiming t = integrate_cuda(*e, r);
    row.kernel_ms = t.kernel_ms;
    row.total_ms = t.total_ms;
  } else {
    const auto t0 = std::chrono::steady_clock::now();
    integrate_cpu(*e, r);
    row.total_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    row.kernel_ms = row.total_ms;
  }
  for (long s = 0; s < systems; ++s) row.steps += e->steps(s);
  const ErrorSpread spread = error_spread(relative_energy_errors(e0, *e, 1.0));
  row.worst = spread.worst;
  row.median = spread.median;
  row.evaluations_per_step = r.integrator->pair_evaluations(n);
  if (r.integrator->scheme == SchemeId::kHermite || r.integrator->scheme == SchemeId::kHermiteAdaptive)
    row.flops_per_step = hermite_flops(n);
  return row;
}

void print(const std::vector<Row>& rows, double peak_tflops) {
  std::cout << std::left << std::setw(4) << "B" << std::setw(6) << "back" << std::setw(7) << "thread" << std::setw(17)
            << "integrator" << std::right << std::setw(3) << "n" << std::setw(8) << "systems" << std::setw(8) << "dt"
            << std::setw(9) << "T" << std::setw(10) << "steps" << std::setw(11) << "kernel_ms" << std::setw(10)
            << "total_ms" << std::setw(11) << "sys-step/s" << std::setw(10) << "pairs/s" << std::setw(7) << "FP64%"
            << std::setw(10) << "worst_dE" << std::setw(10) << "median_dE"
            << "\n";
  for (const Row& r : rows) {
    const double rate = r.steps / (r.kernel_ms * 1e-3);
    std::ostringstream fraction;
    if (r.backend == "cuda" && r.flops_per_step > 0)
      fraction << std::fixed << std::setprecision(0) << 100.0 * rate * r.flops_per_step / (peak_tflops * 1e12);
    else
      fraction << "-";
    std::cout << std::left << std::setw(4) << r.bench << std::setw(6) << r.backend << std::setw(7) << r.threads_per
              << std::setw(17) << r.integrator << std::right << std::setw(3) << r.n << std::setw(8) << r.systems
              << std::setw(8) << std::setprecision(2) << r.dt << std::setw(9) << r.t_end << std::setw(10)
              << std::setprecision(3) << r.steps << std::setw(11) << std::setprecision(4) << r.kernel_ms
              << std::setw(10) << r.total_ms << std::setw(11) << std::setprecision(3) << rate << std::setw(10)
              << rate * r.evaluations_per_step << std::setw(7) << fraction.str() << std::setw(10)
              << std::setprecision(2) << r.worst << std::setw(10) << r.median << "\n";
  }
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// B7 (design/BENCHMARKS.md): the Kepler-9 RV + transit-time likelihood. One evaluation on one CPU
// thread (bench/b7_ttvfast.py puts TTVFast next to it), then a batch of perturbed copies on every
// backend, and what the observers cost: the same batch integrated without them, with the RVs
// replaced by 100 evenly spaced ones (the issue's ~100 RVs and ~100 transits).
void bench_likelihood(const std::string& config_path, const std::vector<std::string>& overrides, long systems,
                      const std::vector<std::string>& backends, int threads) {
  ModelConfig c = load_model_config(config_path, overrides);
  const PlanetaryModel& model = *c.model;
  const int np = model.num_parameters();
  LikelihoodSettings settings = c.likelihood;
  settings.threads = 1;
  const LikelihoodProblem one(c.data, model, settings, c.values);
  std::cout << "B7 " << config_path << ": " << c.data.rv.size() << " RVs, " << c.data.transits.size()
            << " transit times, " << model.num_planets() << " planets, integrator " << settings.integrator << ", step "
            << one.time_step() << " d, span " << (one.end_time() - one.reference_epoch()) << " d ("
            << static_cast<long>((one.end_time() - one.reference_epoch()) / one.time_step()) << " steps)\n";
  double lnl;
  int status;
  one.evaluate(c.values.data(), 1, &lnl, &status);  // warm-up
  int repetitions = 0;
  const auto t0 = std::chrono::steady_clock::now();
  while (repetitions < 20 || seconds_since(t0) < 1.0) {
    one.evaluate(c.values.data(), 1, &lnl, &status);
    ++repetitions;
  }
  const double single = seconds_since(t0) / repetitions;
  std::cout << "  one evaluation, 1 CPU thread: " << std::setprecision(4) << single * 1e3 << " ms (" << repetitions
            << " repetitions; ln L " << std::setprecision(10) << lnl << ", " << model_status_name(status) << ")\n";
  // Perturbed copies: masses, periods and phases moved by small fractions, deterministically.
  std::vector<double> params;
  params.reserve(static_cast<std::size_t>(systems) * np);
  for (long k = 0; k < systems; ++k) {
    std::vector<double> p = c.values;
    const double u = std::sin(12.9898 * (k + 1)) * 0.5, v = std::cos(78.233 * (k + 1)) * 0.5;
    for (int planet = 0; planet < model.num_planets(); ++planet) {
      p[model.planet_parameter(planet, 1)] *= 1.0 + 0.02 * u;
      p[model.planet_parameter(planet, 0)] *= 1.0 + 1e-5 * v;
      p[model.planet_parameter(planet, 4)] += 1e-3 * u * v;
    }
    params.insert(params.end(), p.begin(), p.end());
  }
  std::vector<double> lnls(systems);
  std::vector<int> statuses(systems);
  for (const std::string& backend : backends) {
    LikelihoodSettings s = c.likelihood;
    s.backend = backend;
    s.threads = threads;
    const LikelihoodProblem batch(c.data, model, s, c.values);
    // A sampler evaluates batch after batch: the first call of a problem allocates (device
    // buffers, pinned memory, streams), the following ones are the steady state. Five batches,
    // each timed; the median is the figure.
    std::vector<double> elapsed_all;
    DeviceTiming device;
    for (int rep = 0; rep < (backend == "cuda" ? 6 : 1); ++rep) {
      DeviceTiming d;
      const auto t1 = std::chrono::steady_clock::now();
      batch.evaluate(params.data(), systems, lnls.data(), statuses.data(), nullptr, &d);
      const double e = seconds_since(t1);
      if (backend == "cuda" && rep == 0) {
        std::cout << "  first batch on cuda (allocations included): " << std::setprecision(4) << 1e3 * e << " ms\n";
        continue;
      }
      elapsed_all.push_back(e);
      if (backend == "cuda")
        std::cout << "    batch " << rep << ": " << std::setprecision(4) << 1e3 * e << " ms end to end, kernels "
                  << d.kernel_ms << " ms (" << d.slices << " slices, first start to last end), set-up spans "
                  << d.setup_ms << " ms (summed, overlapped), host " << d.host_ms << " ms\n";
      if (elapsed_all.size() == 1 || e <= *std::min_element(elapsed_all.begin(), elapsed_all.end())) device = d;
    }
    std::vector<double> sorted = elapsed_all;
    std::sort(sorted.begin(), sorted.end());
    const double elapsed = sorted[sorted.size() / 2];
    long ok = 0;
    for (int st : statuses) ok += st == kStatusOk;
    std::cout << "  batch of " << systems << " on " << backend
              << (backend == "cpu" ? " (threads " + std::to_string(threads) + ", 0 = all)" : "") << ": "
              << std::setprecision(4) << elapsed << " s" << (elapsed_all.size() > 1 ? " (median)" : "") << ", "
              << systems / elapsed << " evaluations/s end to end (" << ok << " ok); " << (systems / elapsed) * single
              << " x one CPU thread\n";
    if (backend == "cuda") {
      // The same batch in one slice: no overlap of the host's set-up with the kernels.
      LikelihoodSettings one_slice = s;
      one_slice.cuda_slices = 1;
      const LikelihoodProblem serial(c.data, model, one_slice, c.values);
      serial.evaluate(params.data(), systems, lnls.data(), statuses.data());
      DeviceTiming d;
      const auto t1 = std::chrono::steady_clock::now();
      serial.evaluate(params.data(), systems, lnls.data(), statuses.data(), nullptr, &d);
      const double e = seconds_since(t1);
      std::cout << "    the same batch in one slice (no overlap): " << std::setprecision(4) << 1e3 * e
                << " ms end to end, kernel " << d.kernel_ms << " ms (" << systems / (1e-3 * d.kernel_ms)
                << " evaluations/s), set-up kernel " << d.setup_ms << " ms, host " << d.host_ms << " ms\n";
      // Reproducible: the host sets the systems up, the kernel has the CPU's arithmetic (bitwise
      // the CPU's ln L); warmed up once, then timed.
      LikelihoodSettings same_bits = s;
      same_bits.reproducible = true;
      const LikelihoodProblem reproducible(c.data, model, same_bits, c.values);
      reproducible.evaluate(params.data(), systems, lnls.data(), statuses.data());
      DeviceTiming dr;
      const auto t4 = std::chrono::steady_clock::now();
      reproducible.evaluate(params.data(), systems, lnls.data(), statuses.data(), nullptr, &dr);
      const double er = seconds_since(t4);
      std::cout << "    reproducible (host set-up, the CPU's arithmetic): " << std::setprecision(4) << 1e3 * er
                << " ms end to end (" << systems / er << " evaluations/s), kernel " << dr.kernel_ms << " ms ("
                << std::setprecision(3) << dr.kernel_ms / d.kernel_ms << "x the default kernel)\n";
    }
    // The observers' cost: 100 RVs and the transits, against the plain integration (best of three).
    Dataset hundred = c.data;
    hundred.rv.clear();
    if (!hundred.instruments.empty()) {
      const double t_first = c.data.transits.empty() ? c.data.first_time() : c.data.transits.front().time;
      const double t_last = c.data.last_time();
      for (int k = 0; k < 100; ++k)
        hundred.rv.push_back({t_first + (t_last - t_first) * (k + 0.5) / 100, 0.0, 1.0, 0, "bench"});
    }
    LikelihoodSettings unsliced = s;
    unsliced.cuda_slices = 1;  // kernel against kernel, both in one launch
    const LikelihoodProblem observed(hundred, model, unsliced, c.values);
    const long m = std::min(systems, backend == "cuda" ? systems : 8192L);
    // Alternated three times, the fastest of each kept: on a shared machine one pair of runs can
    // differ by 20% from noise alone.
    DeviceTiming device_with, device_without;
    double with = HUGE_VAL, without = HUGE_VAL;
    for (int round = 0; round < 3; ++round) {
      DeviceTiming d;
      const auto t2 = std::chrono::steady_clock::now();
      observed.evaluate(params.data(), m, lnls.data(), statuses.data(), nullptr, &d);
      const double w = seconds_since(t2);
      if (w < with) with = w;
      if (round == 0 || d.kernel_ms < device_with.kernel_ms) device_with = d;
      const auto t3 = std::chrono::steady_clock::now();
      observed.integrate_without_observers(params.data(), m, statuses.data(), &d);
      const double wo = seconds_since(t3);
      if (wo < without) without = wo;
      if (round == 0 || d.kernel_ms < device_without.kernel_ms) device_without = d;
    }
    const double system_steps = m * (observed.end_time() - observed.reference_epoch()) / observed.time_step();
    if (backend == "cpu")  // on the GPU the two paths differ in their set-up: kernels only, below
      std::cout << "  observers (" << hundred.rv.size() << " RVs, " << hundred.transits.size() << " transits), " << m
                << " systems on " << backend << ": " << with << " s with (" << system_steps / with
                << " system-steps/s), " << without << " s without (" << system_steps / without << "): +"
                << std::setprecision(3) << 100.0 * (with / without - 1.0) << "%\n";
    if (backend == "cuda")  // the kernels alone (no set-up, no copies)
      std::cout << "  observers (" << hundred.rv.size() << " RVs, " << hundred.transits.size() << " transits), " << m
                << " systems on cuda, kernel only: " << std::setprecision(4) << device_with.kernel_ms << " ms with, "
                << device_without.kernel_ms << " ms without: +" << std::setprecision(3)
                << 100.0 * (device_with.kernel_ms / device_without.kernel_ms - 1.0) << "%\n";
  }
}

}  // namespace

// One planet of a screened system: mass (star 1, G = 1) and Jacobi elements with the period in
// place of a (REBOUND's sim.add(m, P, e, inc, Omega, omega, M): the orbit about the interior mass).
struct ScreenPlanet {
  double m, period, e, inc, node, omega, mean_anomaly;
};

// The systems of a screen, as bench/spock_s1.py writes them (system, then m, P, e, inc, Omega,
// omega, M of planets 1..k), or drawn from the S1 distribution.
std::vector<std::vector<ScreenPlanet>> read_screen_systems(const std::string& path, std::vector<long>& ids) {
  const std::vector<TableRow> rows = read_csv(path);
  if (rows.empty()) throw InputError(path + ": empty");
  const std::vector<std::string>& header = rows[0].fields;
  const char* names[7] = {"m", "P", "e", "inc", "Omega", "omega", "M"};
  int planets = 0;
  while (std::find(header.begin(), header.end(), "m" + std::to_string(planets + 1)) != header.end()) ++planets;
  if (header.empty() || header[0] != "system" || planets == 0)
    throw InputError(path + ":" + std::to_string(rows[0].line) + ": header must start system,m1,P1,e1,...");
  std::vector<int> column(7 * planets);
  for (int i = 0; i < planets; ++i)
    for (int k = 0; k < 7; ++k) {
      const std::string name = names[k] + std::to_string(i + 1);
      const auto at = std::find(header.begin(), header.end(), name);
      if (at == header.end()) throw InputError(path + ":" + std::to_string(rows[0].line) + ": no column " + name);
      column[7 * i + k] = static_cast<int>(at - header.begin());
    }
  std::vector<std::vector<ScreenPlanet>> systems;
  for (size_t r = 1; r < rows.size(); ++r) {
    const TableRow& row = rows[r];
    if (row.fields.empty()) continue;
    if (row.fields.size() != header.size())
      throw InputError(path + ":" + std::to_string(row.line) + ": " + std::to_string(row.fields.size()) +
                       " fields, the header has " + std::to_string(header.size()));
    ids.push_back(static_cast<long>(parse_number(row.fields[0], path, row.line, "system")));
    std::vector<ScreenPlanet> system(planets);
    for (int i = 0; i < planets; ++i) {
      double v[7];
      for (int k = 0; k < 7; ++k)
        v[k] = parse_number(row.fields[column[7 * i + k]], path, row.line, header[column[7 * i + k]]);
      if (!(v[0] > 0.0 && v[1] > 0.0 && v[2] >= 0.0 && v[2] < 1.0))
        throw InputError(path + ":" + std::to_string(row.line) + ": planet " + std::to_string(i + 1) +
                         " needs m > 0, P > 0 and 0 <= e < 1");
      system[i] = {v[0], v[1], v[2], v[3], v[4], v[5], v[6]};
    }
    systems.push_back(system);
  }
  return systems;
}

// S1's distribution (design/BENCHMARKS.md): three planets, masses log-uniform in [3e-6, 3e-5],
// period ratios uniform in [1.2, 1.6], e in [0, 0.05], inc in [0, 0.02], angles uniform; the
// inner period 2 pi. bench/rebound_s1.py and bench/spock_s1.py draw the same distribution.
std::vector<std::vector<ScreenPlanet>> draw_screen_systems(long systems, std::vector<long>& ids) {
  std::mt19937_64 rng(20261126);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::vector<std::vector<ScreenPlanet>> out(systems);
  for (long s = 0; s < systems; ++s) {
    double period = 6.283185307179586;
    for (int i = 0; i < 3; ++i) {
      if (i > 0) period *= 1.2 + 0.4 * u(rng);
      ScreenPlanet p;
      p.m = 3e-6 * std::pow(10.0, u(rng));
      p.period = period;
      p.e = 0.05 * u(rng);
      p.inc = 0.02 * u(rng);
      p.node = 2 * M_PI * u(rng);
      p.omega = 2 * M_PI * u(rng);
      p.mean_anomaly = 2 * M_PI * u(rng);
      out[s].push_back(p);
    }
    ids.push_back(s);
  }
  return out;
}

// Star 1 at the origin, planets on Jacobi orbits about the interior mass, then barycentric.
Ensemble screen_ensemble(const std::vector<std::vector<ScreenPlanet>>& systems, double& outer) {
  const int n = static_cast<int>(systems.at(0).size()) + 1;
  Ensemble e(static_cast<long>(systems.size()), n);
  outer = 0;
  for (long s = 0; s < static_cast<long>(systems.size()); ++s) {
    if (static_cast<int>(systems[s].size()) + 1 != n) throw InputError("screen: systems differ in planet count");
    double interior = 1.0;
    double cm[3] = {0, 0, 0}, cv[3] = {0, 0, 0};  // interior mass-weighted sums (Jacobi)
    e.mass(s, 0) = 1.0;
    for (int d = 0; d < 3; ++d) e.position(s, 0, d) = e.velocity(s, 0, d) = 0.0;
    for (int i = 1; i < n; ++i) {
      const ScreenPlanet& p = systems[s][i - 1];
      const double mu = interior + p.m;
      Elements el;
      el.a = std::cbrt(mu * p.period * p.period / (4 * M_PI * M_PI));
      el.e = p.e;
      el.inc = p.inc;
      el.node = p.node;
      el.omega = p.omega;
      el.mean_anomaly = p.mean_anomaly;
      double x[3], v[3];
      elements_to_cartesian(el, mu, x, v);
      e.mass(s, i) = p.m;
      for (int d = 0; d < 3; ++d) {
        e.position(s, i, d) = cm[d] / interior + x[d];
        e.velocity(s, i, d) = cv[d] / interior + v[d];
        cm[d] += p.m * e.position(s, i, d);
        cv[d] += p.m * e.velocity(s, i, d);
      }
      interior += p.m;
      outer = std::max(outer, p.period);
    }
    for (int i = 0; i < n; ++i) {
      e.radius(s, i) = 0.0;
      for (int d = 0; d < 3; ++d) {
        e.position(s, i, d) -= cm[d] / interior;
        e.velocity(s, i, d) -= cv[d] / interior;
      }
    }
  }
  return e;
}

struct ScreenSettings {
  std::string name = "S1";  // S1 (MEGNO on and off) or S2 (long confirmation, energy errors)
  long systems = 0;
  double orbits = 1e4;
  std::string input, output;  // systems from a CSV (bench/spock_s1.py); per-system outcomes to a CSV
  std::vector<bool> megno = {true, false};
  std::string backend;
  int threads = 0;
  // S2 (no tangent) only: the run in `chunks` calls, the state kept in `checkpoint` after each, so
  // that a run longer than one sitting (a device call) is stopped after `stop_after` seconds and
  // resumed by the same command; the wall time adds up across sittings.
  std::string checkpoint;
  int chunks = 100;
  double stop_after = 0;
};

// The S2 checkpoint: the run's shape, the chunks done, the wall time so far, the starting energies
// and the ensemble's raw arrays (body and clock data), written beside and renamed into place.
struct ScreenCheckpoint {
  long systems = 0, bodies = 0, chunks = 0, done = 0;
  double orbits = 0, wall = 0;
  std::vector<double> energy0;
};

void write_screen_checkpoint(const std::string& path, const ScreenCheckpoint& c, const Ensemble& e) {
  {
    std::ofstream out(path + ".partial", std::ios::binary);
    const long header[4] = {c.systems, c.bodies, c.chunks, c.done};
    const double values[2] = {c.orbits, c.wall};
    out.write(reinterpret_cast<const char*>(header), sizeof header);
    out.write(reinterpret_cast<const char*>(values), sizeof values);
    out.write(reinterpret_cast<const char*>(c.energy0.data()), static_cast<std::streamsize>(8 * c.energy0.size()));
    out.write(reinterpret_cast<const char*>(e.body_data().data()),
              static_cast<std::streamsize>(8 * e.body_data().size()));
    out.write(reinterpret_cast<const char*>(e.clock_data().data()),
              static_cast<std::streamsize>(8 * e.clock_data().size()));
    if (!out) throw InputError(path + ": cannot write the checkpoint");
  }
  if (std::rename((path + ".partial").c_str(), path.c_str()) != 0) throw InputError(path + ": cannot write");
}

// Fills c and e from `path` if it is a checkpoint of the same run (else refuses: another run's).
bool read_screen_checkpoint(const std::string& path, ScreenCheckpoint& c, Ensemble& e) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  long header[4];
  double values[2];
  in.read(reinterpret_cast<char*>(header), sizeof header);
  in.read(reinterpret_cast<char*>(values), sizeof values);
  if (!in || header[0] != c.systems || header[1] != c.bodies || header[2] != c.chunks || values[0] != c.orbits)
    throw InputError(path + ": a checkpoint of another S2 run (systems, chunks or orbits differ); remove it");
  c.done = header[3];
  c.wall = values[1];
  in.read(reinterpret_cast<char*>(c.energy0.data()), static_cast<std::streamsize>(8 * c.energy0.size()));
  in.read(reinterpret_cast<char*>(e.body_data().data()), static_cast<std::streamsize>(8 * e.body_data().size()));
  in.read(reinterpret_cast<char*>(e.clock_data().data()), static_cast<std::streamsize>(8 * e.clock_data().size()));
  if (!in) throw InputError(path + ": truncated checkpoint");
  return true;
}

// S1 stability screen and S2 long confirmation (design/BENCHMARKS.md): compact planetary systems
// (G = 1, star 1; S1's distribution or a file), `orbits` orbits of the outermost planet at
// P_inner / 20 with whfast, unstable below 1 mutual Hill radius (SPOCK's criterion) or beyond 100;
// with and without the tangent (MEGNO), and the relative energy error of the survivors at the end
// (S2: Brouwer's law, the accuracy of long runs).
void bench_screen(const ScreenSettings& o) {
  std::vector<long> ids;
  const std::vector<std::vector<ScreenPlanet>> drawn =
      o.input.empty() ? draw_screen_systems(o.systems, ids) : read_screen_systems(o.input, ids);
  double outer = 0;
  const Ensemble e = screen_ensemble(drawn, outer);
  const long systems = e.num_systems();
  const double inner = drawn[0][0].period;
  RunRequest r;
  r.integrator = find_integrator("whfast");
  r.step.time_step = inner / 20;
  r.destination_time = o.orbits * outer;
  r.threads = o.threads;
  r.monitors.close_approach = 1.0;
  r.monitors.rmax = 100.0;
  std::vector<double> energy0(systems);
  for (long s = 0; s < systems; ++s) energy0[s] = e.energy(s, 1.0);
  if (!o.checkpoint.empty() && (o.megno.size() != 1 || o.megno[0]))
    throw InputError("command line: s2-checkpoint is for S2 (no tangent) only");
  std::cout << "\n"
            << o.name << " stability screen: " << systems << " systems of " << e.num_bodies() - 1 << " planets"
            << (o.input.empty() ? "" : " from " + o.input) << ", " << o.orbits
            << " orbits of the outermost planet (T = " << r.destination_time << ", "
            << static_cast<long>(r.destination_time / r.step.time_step) << " steps at P_inner/20), whfast\n"
            << "  backend  megno        wall_s   system-steps/s  survived  regular(MEGNO<3)  |dE/E| median, max "
               "(survivors)\n";
  for (bool megno : o.megno) {
    Ensemble run = e;
    ChaosState chaos(run);
    if (o.backend == "cuda") {  // warm-up launch
      Ensemble warm = e;
      ChaosState warm_chaos(warm);
      RunRequest short_run = r;
      short_run.destination_time = r.step.time_step;
      if (megno)
        integrate_chaos(warm, warm_chaos, short_run, o.backend);
      else
        integrate(warm, short_run, o.backend);
    }
    const auto t0 = std::chrono::steady_clock::now();
    double wall = 0;
    if (megno) {
      integrate_chaos(run, chaos, r, o.backend);
    } else if (o.checkpoint.empty()) {
      integrate(run, r, o.backend);
    } else {
      ScreenCheckpoint c;
      c.systems = systems;
      c.bodies = e.num_bodies();
      c.chunks = o.chunks;
      c.orbits = o.orbits;
      c.energy0 = energy0;
      if (read_screen_checkpoint(o.checkpoint, c, run))
        std::cout << "  resuming from " << o.checkpoint << " after " << c.done << " of " << c.chunks << " chunks ("
                  << c.wall << " s so far)\n";
      energy0 = c.energy0;
      const double before = c.wall;
      while (c.done < c.chunks) {
        RunRequest part = r;
        part.destination_time =
            c.done + 1 == c.chunks ? r.destination_time : r.destination_time * (c.done + 1) / c.chunks;
        integrate(run, part, o.backend);
        ++c.done;
        const double sitting = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        c.wall = before + sitting;
        write_screen_checkpoint(o.checkpoint, c, run);
        if (o.stop_after > 0 && sitting > o.stop_after && c.done < c.chunks) {
          std::cout << "  stopped after " << c.done << " of " << c.chunks << " chunks (" << c.wall
                    << " s so far); the same command resumes from " << o.checkpoint << "\n";
          return;
        }
      }
      wall = c.wall;
      std::filesystem::remove(o.checkpoint);  // done: nothing to resume
    }
    if (wall == 0) wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    double steps = 0;
    long survived = 0, regular = 0;
    std::vector<double> errors;
    const std::vector<double> de = relative_energy_errors(energy0, run, 1.0);
    for (long s = 0; s < systems; ++s) {
      steps += run.steps(s);
      survived += run.status(s) == 0;
      regular += megno && run.status(s) == 0 && chaos.indicators(s).megno < 3.0;
      if (run.status(s) == 0) errors.push_back(std::fabs(de[s]));
    }
    std::sort(errors.begin(), errors.end());
    char line[300];
    std::snprintf(line, sizeof line, "  %-7s  %-5s  %12.3f  %15.4g  %8.4f  %16s  %.3g, %.3g\n", o.backend.c_str(),
                  megno ? "on" : "off", wall, steps / wall, static_cast<double>(survived) / systems,
                  megno ? std::to_string(static_cast<double>(regular) / systems).c_str() : "-",
                  errors.empty() ? 0.0 : errors[errors.size() / 2], errors.empty() ? 0.0 : errors.back());
    std::cout << line;
    if (!o.output.empty() && megno == o.megno.front()) {
      std::ofstream out(o.output + ".partial");
      out << "system,survived,status,orbits,megno,energy_error\n" << std::setprecision(10);
      for (long s = 0; s < systems; ++s)
        out << ids[s] << "," << (run.status(s) == 0) << "," << run.status(s) << "," << run.time(s) / outer << ","
            << (megno ? chaos.indicators(s).megno : std::nan("")) << "," << de[s] << "\n";
      out.close();
      if (!out || std::rename((o.output + ".partial").c_str(), o.output.c_str()) != 0)
        throw InputError(o.output + ": cannot write");
    }
  }
}

int bench_command(int argc, char** argv) {
  po::options_description options("swarmfit bench options");
  options.add_options()("help,h", "this help")("only", po::value<std::string>()->default_value("B1,B2,B3,B4,B5"),
                                               "comma-separated benchmarks to run")(
      "backend", po::value<std::string>()->default_value("auto"),
      "cpu, cuda, or auto (cuda if a device is present, and cpu)")(
      "scale", po::value<double>()->default_value(1.0),
      "multiply the number of systems by this (CPU runs default to 1/8 of the GPU sizes)")(
      "threads", po::value<int>()->default_value(0), "CPU threads (0: all)")(
      "cuda-layout", po::value<std::string>()->default_value("auto"),
      "GPU: auto, system (one thread per system) or body (a thread per body)")(
      "reproducible", po::bool_switch(), "GPU: B1-B5 with the kernels of the CPU's arithmetic (reproducible = true)")(
      "peak", po::value<double>()->default_value(33.5),
      "FP64 peak in TFLOP/s for the FP64% column (H100 SXM datasheet: 33.5)")(
      "energy-time", po::value<double>()->default_value(0.45e6), "E: length of the Swarm-NG Table 1 energy runs")(
      "energy-systems", po::value<long>()->default_value(256), "E: systems in the energy runs")(
      "b2-integrator", po::value<std::string>()->default_value("hermite"),
      "B2: the integrator of the n = 3..16 sweep (any of `swarmfit integrate --help`)")(
      "b7-config", po::value<std::string>()->default_value("examples/kepler9.cfg"),
      "B7: the model and data (only with --only B7)")("b7-systems", po::value<long>()->default_value(100000),
                                                      "B7: perturbed copies in one batch")(
      "s1-systems", po::value<long>()->default_value(100000), "S1: systems (GPU; the CPU takes 1/8 x scale)")(
      "s1-orbits", po::value<double>()->default_value(1e4), "S1: orbits of the outermost planet")(
      "s1-input", po::value<std::string>()->default_value(""),
      "S1/S2: the systems from this CSV (bench/spock_s1.py generate) instead of S1's draws")(
      "s1-output", po::value<std::string>()->default_value(""),
      "S1/S2: per-system outcomes (system,survived,status,orbits,megno,energy_error) to this CSV")(
      "s1-megno", po::value<std::string>()->default_value("both"), "S1: on, off or both")(
      "s2-systems", po::value<long>()->default_value(10000), "S2: systems (GPU; the CPU takes 1/8 x scale)")(
      "s2-orbits", po::value<double>()->default_value(1e7), "S2: orbits of the outermost planet")(
      "s2-checkpoint", po::value<std::string>()->default_value(""),
      "S2: keep the state in this file after each of --s2-chunks parts, and resume from it")(
      "s2-chunks", po::value<int>()->default_value(100), "S2: parts of the run between checkpoints")(
      "s2-stop-after", po::value<double>()->default_value(0),
      "S2: stop (resumable) after the first part that ends past this many seconds (0: run to the end)")(
      "b7-set", po::value<std::vector<std::string>>()->composing(),
      "B7: KEY=VALUE over the configuration, e.g. --b7-set integrator=hermite --b7-set time_step=0.1 (repeatable)");
  po::variables_map vm;
  try {
    po::options_description all;
    all.add(options).add_options()("stray", po::value<std::vector<std::string>>(), "");
    po::positional_options_description stray;
    stray.add("stray", -1);
    po::store(po::command_line_parser(argc, argv).options(all).positional(stray).run(), vm);
    if (vm.count("stray"))
      throw InputError("command line: unexpected argument '" + vm["stray"].as<std::vector<std::string>>()[0] +
                       "' (swarmfit bench --help)");
    po::notify(vm);
  } catch (const po::error& e) {
    throw InputError(std::string("command line: ") + e.what());
  }
  if (vm.count("help")) {
    std::cout
        << options
        << "\nB1 Swarm-NG Table 3 (n=3, Hermite, dt=1e-3 and 1e-4, T=1); B2 n=3..16; B3 saturation;\n"
           "B4 adaptive Hermite (tau=1.7e-2, T=10); B5 MVS (n=3,6; dt=1e-2,1e-3; T=10); E Swarm-NG Table 1\n"
           "energy runs (only with --only E); B7 Kepler-9 likelihood (only with --only B7); S1 stability\n"
           "screen with MEGNO (only with --only S1); S2 long stability, energy errors (only with --only S2). See\n"
           "design/BENCHMARKS.md.\n";
    return 0;
  }
  // Every option checked before any benchmark runs, whether or not its benchmark is selected.
  {
    auto bad = [](const std::string& option, const std::string& why) {
      throw InputError("command line: --" + option + " " + why);
    };
    auto positive_number = [&](const char* option) {
      const double v = vm[option].as<double>();
      if (!(v > 0) || !std::isfinite(v)) bad(option, "must be > 0 and finite");
    };
    for (const char* option : {"scale", "peak", "energy-time", "s1-orbits", "s2-orbits"}) positive_number(option);
    for (const char* option : {"energy-systems", "b7-systems", "s1-systems", "s2-systems"})
      if (vm[option].as<long>() < 1) bad(option, "must be >= 1");
    const double stop_after = vm["s2-stop-after"].as<double>();
    if (!(stop_after >= 0) || !std::isfinite(stop_after)) bad("s2-stop-after", "must be >= 0 and finite");
    if (vm["s2-chunks"].as<int>() < 1) bad("s2-chunks", "must be >= 1");
    const int t = vm["threads"].as<int>();
    if (t < 0 || t > kMaxThreads) bad("threads", "must be 0 (all cores) to " + std::to_string(kMaxThreads));
    const std::string only_text = vm["only"].as<std::string>();
    std::stringstream names(only_text);
    int count = 0;
    for (std::string name; std::getline(names, name, ',');) {
      static const std::set<std::string> known = {"B1", "B2", "B3", "B4", "B5", "E", "B7", "S1", "S2"};
      if (!known.count(name)) bad("only", "'" + vm["only"].as<std::string>() + "': unknown benchmark '" + name + "'");
      ++count;
    }
    if (count == 0) bad("only", "is empty");
    std::error_code error;
    for (const char* option : {"b7-config", "s1-input"}) {
      const std::string path = vm[option].as<std::string>();
      if (path.empty() || (vm[option].defaulted() && only_text.find("B7") == std::string::npos)) continue;
      if (!fs::is_regular_file(path, error)) bad(option, path + ": not a readable file");
    }
    const std::string s1_output = vm["s1-output"].as<std::string>();
    if (!s1_output.empty()) {
      check_output_path(s1_output, "--s1-output");
      if (fs::exists(s1_output)) bad("s1-output", s1_output + " exists (remove it or choose another)");
    }
    const std::string checkpoint = vm["s2-checkpoint"].as<std::string>();
    if (!checkpoint.empty() && fs::exists(checkpoint) && H5Fis_hdf5(checkpoint.c_str()) <= 0)
      bad("s2-checkpoint", checkpoint + ": not an HDF5 file (remove it to start again)");
    if (vm.count("b7-set"))
      for (const std::string& item : vm["b7-set"].as<std::vector<std::string>>()) {
        const auto equals = item.find('=');
        if (equals == std::string::npos || equals == 0) bad("b7-set", "'" + item + "': expected KEY=VALUE");
        boost::program_options::options_description known;
        known.add(model_keys()).add(fit_keys());
        if (!known.find_nothrow(item.substr(0, equals), false))
          bad("b7-set", "'" + item + "': unknown key '" + item.substr(0, equals) + "'");
        std::map<std::string, Setting> one = {{item.substr(0, equals), Setting{item.substr(equals + 1), "--b7-set"}}};
        po::variables_map values;
        try {
          store_settings(one, known, values);
        } catch (const InputError& e) {
          throw InputError(std::string("command line: ") + e.what());
        }
      }
  }
  const std::string only = "," + vm["only"].as<std::string>() + ",";
  auto want = [&](const char* b) { return only.find(std::string(",") + b + ",") != std::string::npos; };
  std::vector<std::string> backends;
  const std::string backend = vm["backend"].as<std::string>();
  if (backend == "auto") {
    if (cuda_available()) backends.push_back("cuda");
    backends.push_back("cpu");
  } else if (backend == "cpu" || backend == "cuda") {
    if (backend == "cuda" && !cuda_available()) throw InputError("command line: backend cuda: " + cuda_device_name());
    backends.push_back(backend);
  } else {
    throw InputError("command line: backend must be cpu, cuda or auto");
  }
  const double scale = vm["scale"].as<double>();
  const std::string b2_integrator = vm["b2-integrator"].as<std::string>();
  if (!find_integrator(b2_integrator))
    throw InputError("command line: b2-integrator: unknown integrator '" + b2_integrator + "'");
  const int threads = vm["threads"].as<int>();
  RunSettings settings;
  settings.threads = threads;
  settings.reproducible = vm["reproducible"].as<bool>();
  const std::string layout = vm["cuda-layout"].as<std::string>();
  if (layout == "system") {
    settings.cuda_layout = CudaLayout::kThreadPerSystem;
  } else if (layout == "body") {
    settings.cuda_layout = CudaLayout::kThreadPerBody;
  } else if (layout != "auto") {
    throw InputError("command line: cuda-layout must be auto, system or body");
  }
  std::cout << "swarmfit bench: CPU SIMD width " << cpu_simd_width() << ", threads " << (threads ? threads : 0)
            << " (0 = all), GPU " << cuda_device_name() << "\n";
  std::vector<Row> rows;
  for (const std::string& b : backends) {
    const double size = scale * (b == "cuda" ? 1.0 : 1.0 / 8);
    auto systems = [&](long full) { return std::max(1L, static_cast<long>(full * size)); };
    if (want("B1")) {
      rows.push_back(run("B1", b, "hermite", 3, systems(131072), 1e-3, 1.0, settings));
      rows.push_back(run("B1", b, "hermite", 3, systems(131072), 1e-4, 1.0, settings));
    }
    if (want("B2"))
      for (int n : {3, 4, 5, 6, 8, 10, 12, 16})
        rows.push_back(
            run("B2", b, b2_integrator, n, systems(131072), 1e-3, b == "cuda" || n <= 8 ? 1.0 : 0.1, settings));
    if (want("B3"))
      for (int k = 0; k <= 10; k += 2)
        rows.push_back(run("B3", b, "hermite", 3,
                           std::max(1L, static_cast<long>((1024L << k) * (b == "cuda" ? 1 : 0.125))), 1e-3, 1.0,
                           settings));
    if (want("B4")) rows.push_back(run("B4", b, "hermite_adaptive", 3, systems(131072) / 8, 0.0, 10.0, settings));
    if (want("B5"))
      for (int n : {3, 6})
        for (double dt : {1e-2, 1e-3}) rows.push_back(run("B5", b, "mvs", n, systems(131072) / 8, dt, 10.0, settings));
    if (want("E")) {
      // Swarm-NG Table 1 (n = 3, 0.45e6 time units) with the step parameters of its sample
      // configurations: hermite_adaptive tau 0.017 in [1e-5, 0.01]; mvs dt 1e-3; rkck_adaptive in
      // [1e-4, 1e-3]. Published |dE/E|: 2.9e-11, 5.0e-11, 3.7e-11.
      const double t = vm["energy-time"].as<double>();
      const long m = vm["energy-systems"].as<long>();
      StepParams hermite;
      hermite.min_time_step = 1e-5;
      hermite.max_time_step = 0.01;
      rows.push_back(run("E", b, "hermite_adaptive", 3, m, 1e-3, t, settings, 0.017, &hermite));
      rows.push_back(run("E", b, "mvs", 3, m, 1e-3, t, settings));
      StepParams rkck;
      rkck.min_time_step = 1e-4;
      rkck.max_time_step = 1e-3;
      rkck.error_tolerance = 1e-13;
      rows.push_back(run("E", b, "rkck_adaptive", 3, m, 1e-4, t, settings, 0.017, &rkck));
    }
  }
  if (!rows.empty()) print(rows, vm["peak"].as<double>());
  const std::string megno = vm["s1-megno"].as<std::string>();
  if (megno != "on" && megno != "off" && megno != "both")
    throw InputError("command line: s1-megno must be on, off or both");
  for (const char* name : {"S1", "S2"})
    if (want(name))
      for (const std::string& b : backends) {
        const bool s1 = std::string(name) == "S1";
        ScreenSettings screen;
        screen.name = name;
        const long full = vm[s1 ? "s1-systems" : "s2-systems"].as<long>();
        screen.systems = std::max(1L, static_cast<long>(full * scale * (b == "cuda" ? 1.0 : 0.125)));
        screen.orbits = vm[s1 ? "s1-orbits" : "s2-orbits"].as<double>();
        screen.input = vm["s1-input"].as<std::string>();
        screen.output = vm["s1-output"].as<std::string>();
        // S2 confirms survival (no tangent) unless asked; S1 times MEGNO on against off.
        screen.megno = megno == "on"           ? std::vector<bool>{true}
                       : megno == "off" || !s1 ? std::vector<bool>{false}
                                               : std::vector<bool>{true, false};
        screen.backend = b;
        screen.threads = threads;
        if (!s1) {
          screen.checkpoint = vm["s2-checkpoint"].as<std::string>();
          screen.chunks = vm["s2-chunks"].as<int>();
          screen.stop_after = vm["s2-stop-after"].as<double>();
          if (screen.chunks < 1) throw InputError("command line: s2-chunks must be at least 1");
        }
        bench_screen(screen);
      }
  if (want("B7"))
    bench_likelihood(vm["b7-config"].as<std::string>(),
                     vm.count("b7-set") ? vm["b7-set"].as<std::vector<std::string>>() : std::vector<std::string>{},
                     std::max(1L, static_cast<long>(vm["b7-systems"].as<long>() * scale)), backends, threads);
  return 0;
}

}  // namespace swarmfit::app
