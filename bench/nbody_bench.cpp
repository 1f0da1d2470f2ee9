// B8 (../shared/design/BENCHMARKS.md): the large-N engine's force kernel and production block
// steps. Usage:
//   nbody_bench force N ORDER BACKEND [REPS [NI]]  one force pass timed: NI active bodies (every
//                                                  N/NI-th; default all) summed over all N
//   nbody_bench plummer N ORDER ETA T BACKEND [EPS [MAX_STEP]]  block steps on a Plummer sphere
//                                                  to time T (EPS default 4/N, MAX_STEP 1/16)
//   nbody_bench shared N ORDER STEPS BACKEND        seed 003's workload: a Plummer sphere, STEPS
//                                                  shared steps of every body (dt 1/1024)
//   nbody_bench solar YEARS BACKEND [BELT]         the Sun and eight planets (order 6, eta 0.1,
//                                                  max_step 1/64 yr): energy error, each planet's
//                                                  sidereal period against the JPL table
//   nbody_bench belt YEARS NBELT BACKEND [CHUNK [CSV]]
//                                                  a Kuiper belt of NBELT test particles with the
//                                                  giant planets (order 6, eta 0.05, max_step 1 yr):
//                                                  the planets on the CPU, the particles through
//                                                  their recorded field (particles.hpp) on BACKEND,
//                                                  CHUNK years at a time (default 1000); the final
//                                                  heliocentric elements to CSV
// BACKEND: cpu or cuda. Prints one line of key=value pairs. Interactions per second count the
// pairs (active x massive); flops use the customary 60 (order 4) and 97 (order 6) per pair
// (Nitadori & Makino 2008).
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "swarmfit/nbody/engine.hpp"
#include "swarmfit/nbody/initial_conditions.hpp"
#include "swarmfit/nbody/particles.hpp"

using namespace swarmfit::nbody;

namespace {

// Neptune's 3:2 resonant angle phi = 3 lambda - 2 lambda_N - varpi of a particle about the Sun, in
// degrees [0, 360) (Plutinos librate about 180).
double phi32(const BodyState& p, const BodyState& neptune, const BodyState& sun, double mu, double mu_n) {
  const OrbitElements o = state_to_elements(p, sun, mu), n = state_to_elements(neptune, sun, mu_n);
  const double phi = std::fmod(3 * o.lambda() - 2 * n.lambda() - o.varpi(), 2 * M_PI);
  return (phi < 0 ? phi + 2 * M_PI : phi) * 180 / M_PI;
}

double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

std::unique_ptr<ForceBackend> backend(const std::string& name) {
  return name == "cuda" ? make_cuda_backend() : make_cpu_backend();
}

int usage() {
  std::fprintf(stderr,
               "usage: nbody_bench force N ORDER BACKEND [REPS [NI]] | nbody_bench plummer N ORDER ETA T BACKEND [EPS "
               "[MAX_STEP]]\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) return usage();
  const std::string mode = argv[1];
  const long n = std::atol(argv[2]);
  const int order = std::atoi(argv[3]);
  try {
    if (mode == "force") {
      const std::string be = argv[4];
      const int reps = argc > 5 ? std::atoi(argv[5]) : 5;
      const long ni = argc > 6 ? std::max(1L, std::min(n, std::atol(argv[6]))) : n;
      Bodies b = plummer_sphere(n, 1);
      std::unique_ptr<ForceBackend> f = backend(be);
      std::vector<double> gm(n, 1.0 / n), time(n, 0.0);
      f->load(b.state, time, gm);
      IBatch batch;
      batch.index.resize(ni);
      batch.x.resize(3 * ni);
      batch.v.resize(3 * ni);
      batch.a.assign(3 * ni, 0.0);
      for (long k = 0; k < ni; ++k) {
        const long i = k * (n / ni);
        batch.index[k] = static_cast<int>(i);
        for (int d = 0; d < 3; ++d) {
          batch.x[3 * k + d] = b.state[i].x[d];
          batch.v[3 * k + d] = b.state[i].v[d];
        }
      }
      ForceResult r;
      r.resize(static_cast<int>(ni), order);
      f->forces(0.0, order, 1e-4, JSlice{}, batch, r);  // warm-up
      double best = 1e300;
      for (int k = 0; k < reps; ++k) {
        r.resize(static_cast<int>(ni), order);
        const double t0 = now();
        f->forces(0.0, order, 1e-4, JSlice{}, batch, r);
        best = std::min(best, now() - t0);
      }
      const double pairs = static_cast<double>(ni) * n;
      std::printf("mode=force backend=%s N=%ld NI=%ld order=%d seconds=%.6g interactions_per_s=%.4g gflops=%.4g\n",
                  be.c_str(), n, ni, order, best, pairs / best, pairs / best * (order == 6 ? 97 : 60) * 1e-9);
    } else if (mode == "plummer" && argc >= 7) {
      const double eta = std::atof(argv[4]), t_end = std::atof(argv[5]);
      const std::string be = argv[6];
      const double eps = argc > 7 ? std::atof(argv[7]) : 4.0 / n;
      NbodySettings s;
      s.order = order;
      s.eta = eta;
      s.softening = eps;
      s.max_step = argc > 8 ? std::atof(argv[8]) : 0.0625;
      BlockHermite engine(plummer_sphere(n, 1), s, backend(be));
      const double t0 = now();
      engine.initialise();
      const Energy e0 = engine.energy();
      const double t1 = now();
      engine.run_until(t_end);
      const double t2 = now();
      const Energy e1 = engine.energy();
      const NbodyCounters& c = engine.counters();
      std::printf(
          "mode=plummer backend=%s N=%ld order=%d eta=%g eps=%g T=%g seconds=%.6g init_seconds=%.4g "
          "block_steps=%ld body_steps=%.6g interactions=%.6g interactions_per_s=%.4g gflops=%.4g dE=%.3e Q=%.4f "
          "force_seconds=%.4g host_seconds=%.4g\n",
          be.c_str(), n, order, eta, eps, t_end, t2 - t1, t1 - t0, c.block_steps, c.body_steps, c.interactions,
          c.interactions / (t2 - t1), c.interactions / (t2 - t1) * (order == 6 ? 97 : 60) * 1e-9,
          e1.total() / e0.total() - 1, e0.virial_ratio(), c.force_seconds, c.step_seconds - c.force_seconds);
    } else if (mode == "shared" && argc >= 6) {
      // Every body on one fixed step: max_step = min_step = dt and eta large (the criterion never
      // asks for less), so each block step is one force pass of all bodies.
      const int steps = std::atoi(argv[4]);
      NbodySettings s;
      s.order = order;
      s.eta = 1e6;
      s.eta_start = 1e6;
      s.softening = 4.0 / n;
      s.max_step = 1.0 / 1024;
      s.shared_steps = true;
      BlockHermite engine(plummer_sphere(n, 1), s, backend(argv[5]));
      engine.initialise();
      const Energy e0 = engine.energy();
      const double t0 = now();
      for (int k = 0; k < steps; ++k) engine.step();
      const double t1 = now();
      const Energy e1 = engine.energy();
      const NbodyCounters& c = engine.counters();
      std::printf(
          "mode=shared backend=%s N=%ld order=%d steps=%ld seconds=%.6g interactions_per_s=%.4g dE=%.3e "
          "force_seconds=%.4g\n",
          argv[5], n, order, c.block_steps, t1 - t0, c.interactions / (t1 - t0), e1.total() / e0.total() - 1,
          c.force_seconds);
    } else if (mode == "belt" && argc >= 5) {
      const double years = std::atof(argv[2]), chunk = argc > 5 ? std::atof(argv[5]) : 1000.0;
      const long belt = std::atol(argv[3]);
      const std::string be = argv[4];
      NbodySettings s;
      s.order = 6;
      s.eta = 0.05;
      s.G = kSolarSystemG;
      s.max_step = 1.0;
      const Bodies start = solar_system(belt, 1, true);
      // The start's forces and first steps of every body, particles included.
      BlockHermite all(start, s, make_cpu_backend());
      all.initialise();
      Particles p = Particles::from(all.bodies());
      const Bodies giants = massive_only(all.bodies());
      BlockHermite planets(giants, s, make_cpu_backend(1));
      planets.resume();
      const Energy e0 = planets.energy();
      std::unique_ptr<ParticleBackend> pb = be == "cuda" ? make_cuda_particles() : make_cpu_particles();
      ParticleRules rules;
      rules.eta = s.eta;
      rules.max_step = s.max_step;
      rules.min_step = std::ldexp(1.0, -20);
      rules.r_min = 1.0;
      rules.r_max = 1000.0;
      const double mu = s.G * giants.mass[0];
      const double mu_n = s.G * (giants.mass[0] + giants.mass[4]);  // Neptune: body 4 of the giants
      std::vector<double> a0(p.size()), e0s(p.size()), i0(p.size()), phi0(p.size());
      for (long i = 0; i < p.size(); ++i) {
        const OrbitElements el = state_to_elements(p.state[i], giants.state[0], mu);
        a0[i] = el.a;
        e0s[i] = el.e;
        i0[i] = el.i;
        phi0[i] = phi32(p.state[i], giants.state[4], giants.state[0], mu, mu_n);
      }
      TapeCounters tc;
      for (double t = 0; t < years; t += chunk) {  // a progress line a chunk (stderr)
        advance_with_tape(planets, p, *pb, std::min(years, t + chunk), chunk, rules, &tc);
        std::fprintf(stderr, "belt: t = %g yr, planets %.1f s, particles %.1f s\n", planets.time(), tc.massive_seconds,
                     tc.particle_seconds);
      }
      const Energy e1 = planets.energy();
      long counts[4] = {0, 0, 0, 0}, plutinos = 0;
      double particle_steps = 0;
      std::ofstream csv(argc > 6 ? argv[6] : "belt.csv");
      csv << "id,status,time,a0,e0,i0_deg,phi32_0_deg,a,e,i_deg,phi32_deg,steps\n";
      for (long i = 0; i < p.size(); ++i) {
        ++counts[p.status[i]];
        particle_steps += p.steps[i];
        const OrbitElements el = state_to_elements(p.state[i], planets.bodies().state[0], mu);
        if (p.status[i] == kParticleAlive && el.a > 39.0 && el.a < 39.8) ++plutinos;
        const Bodies& g = planets.bodies();
        char line[320];
        std::snprintf(line, sizeof line, "%lld,%d,%.10g,%.8g,%.6g,%.6g,%.5g,%.8g,%.6g,%.6g,%.5g,%.0f\n",
                      static_cast<long long>(p.id[i]), p.status[i], p.time[i], a0[i], e0s[i], i0[i] * 180 / M_PI,
                      phi0[i], el.a, el.e, el.i * 180 / M_PI, phi32(p.state[i], g.state[4], g.state[0], mu, mu_n),
                      p.steps[i]);
        csv << line;
      }
      std::printf(
          "mode=belt backend=%s years=%g particles=%ld chunk=%g planet_seconds=%.4g particle_seconds=%.4g "
          "planet_block_steps=%ld tape_entries=%.6g particle_steps=%.6g dE_planets=%.3e alive=%ld escaped=%ld "
          "inside=%ld encounter=%ld alive_a_39.0_39.8=%ld\n",
          be.c_str(), years, p.size(), chunk, tc.massive_seconds, tc.particle_seconds, planets.counters().block_steps,
          tc.tape_entries, particle_steps, e1.total() / e0.total() - 1, counts[0], counts[1], counts[2], counts[3],
          plutinos);
    } else if (mode == "solar") {
      const double years = std::atof(argv[2]);
      const long belt = argc > 4 ? std::atol(argv[4]) : 0;
      NbodySettings s;
      s.order = 6;
      s.eta = 0.1;
      s.G = kSolarSystemG;
      s.max_step = 1.0 / 64;
      BlockHermite engine(solar_system(belt, 3), s, backend(argv[3]));
      const double t0 = now();
      engine.initialise();
      const Energy e0 = engine.energy();
      LongitudePeriods periods(8);
      for (long k = 1; k <= static_cast<long>(years * 64); ++k) {
        engine.run_until(k / 64.0);
        periods.add(k / 64.0, engine.bodies());
      }
      const Energy e1 = engine.energy();
      std::printf("mode=solar backend=%s years=%g belt=%ld seconds=%.4g block_steps=%ld dE=%.3e", argv[3], years, belt,
                  now() - t0, engine.counters().block_steps, e1.total() / e0.total() - 1);
      for (int p = 1; p < 9; ++p)
        std::printf(" %s=%.6g(%+.2e)", kPlanets[p - 1].name, periods.period(p) * 365.25,
                    periods.period(p) * 365.25 / kPlanets[p - 1].period_days - 1);
      std::printf("\n");
    } else {
      return usage();
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "nbody_bench: %s\n", e.what());
    return 1;
  }
  return 0;
}
