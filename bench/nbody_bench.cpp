// B8 (../shared/design/BENCHMARKS.md): the large-N engine's force kernel and production block
// steps. Usage:
//   nbody_bench force N ORDER BACKEND [REPS]       every body active, one force pass timed
//   nbody_bench plummer N ORDER ETA T BACKEND [EPS] block steps on a Plummer sphere to time T
// BACKEND: cpu or cuda. Prints one line of key=value pairs. Interactions per second count the
// pairs (active x massive); flops use the customary 60 (order 4) and 97 (order 6) per pair
// (Nitadori & Makino 2008).
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "swarmfit/nbody/engine.hpp"
#include "swarmfit/nbody/initial_conditions.hpp"

using namespace swarmfit::nbody;

namespace {

double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

std::unique_ptr<ForceBackend> backend(const std::string& name) {
  return name == "cuda" ? make_cuda_backend() : make_cpu_backend();
}

int usage() {
  std::fprintf(stderr,
               "usage: nbody_bench force N ORDER BACKEND [REPS] | nbody_bench plummer N ORDER ETA T BACKEND [EPS]\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 5) return usage();
  const std::string mode = argv[1];
  const long n = std::atol(argv[2]);
  const int order = std::atoi(argv[3]);
  try {
    if (mode == "force") {
      const std::string be = argv[4];
      const int reps = argc > 5 ? std::atoi(argv[5]) : 5;
      Bodies b = plummer_sphere(n, 1);
      std::unique_ptr<ForceBackend> f = backend(be);
      std::vector<double> gm(n, 1.0 / n), time(n, 0.0);
      f->load(b.state, time, gm);
      IBatch batch;
      batch.index.resize(n);
      batch.x.resize(3 * n);
      batch.v.resize(3 * n);
      batch.a.assign(3 * n, 0.0);
      for (long i = 0; i < n; ++i) {
        batch.index[i] = static_cast<int>(i);
        for (int d = 0; d < 3; ++d) {
          batch.x[3 * i + d] = b.state[i].x[d];
          batch.v[3 * i + d] = b.state[i].v[d];
        }
      }
      ForceResult r;
      r.resize(static_cast<int>(n), order);
      f->forces(0.0, order, 1e-4, JSlice{}, batch, r);  // warm-up
      double best = 1e300;
      for (int k = 0; k < reps; ++k) {
        r.resize(static_cast<int>(n), order);
        const double t0 = now();
        f->forces(0.0, order, 1e-4, JSlice{}, batch, r);
        best = std::min(best, now() - t0);
      }
      const double pairs = static_cast<double>(n) * n;
      std::printf("mode=force backend=%s N=%ld order=%d seconds=%.6g interactions_per_s=%.4g gflops=%.4g\n", be.c_str(),
                  n, order, best, pairs / best, pairs / best * (order == 6 ? 97 : 60) * 1e-9);
    } else if (mode == "plummer" && argc >= 7) {
      const double eta = std::atof(argv[4]), t_end = std::atof(argv[5]);
      const std::string be = argv[6];
      const double eps = argc > 7 ? std::atof(argv[7]) : 4.0 / n;
      NbodySettings s;
      s.order = order;
      s.eta = eta;
      s.softening = eps;
      s.max_step = 0.0625;
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
    } else {
      return usage();
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "nbody_bench: %s\n", e.what());
    return 1;
  }
  return 0;
}
