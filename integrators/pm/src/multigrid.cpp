#include "swarmfit/pm/multigrid.hpp"

#include <omp.h>

#include <cmath>
#include <stdexcept>

namespace swarmfit::pm {

namespace {

int threads_or_default(int threads) { return threads > 0 ? threads : omp_get_max_threads(); }

// Red-black Gauss-Seidel sweeps of lap(phi) = f: a cell's update reads only cells of the other
// colour, so each half-sweep is parallel and its result does not depend on the threads.
void smooth(int n, double h, const std::vector<double>& f, std::vector<double>& phi, int sweeps, int threads) {
  const double h2 = h * h;
  for (int s = 0; s < sweeps; ++s)
    for (int colour = 0; colour < 2; ++colour) {
#pragma omp parallel for schedule(static) num_threads(threads) if (n >= 32)
      for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j)
          for (int k = (i + j + colour) & 1; k < n; k += 2)
            phi[mg_cell(n, i, j, k)] = gauss_seidel(phi.data(), f.data(), n, h2, i, j, k);
    }
}

void residual(int n, double h, const std::vector<double>& f, const std::vector<double>& phi, std::vector<double>& r,
              int threads) {
  periodic_laplacian(n, h, phi, r, threads);
  const long size = static_cast<long>(n) * n * n;
#pragma omp parallel for schedule(static) num_threads(threads) if (n >= 32)
  for (long c = 0; c < size; ++c) r[c] = f[c] - r[c];
}

double norm(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x * x;
  return std::sqrt(s);
}

void remove_mean(std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  const double mean = s / static_cast<double>(v.size());
  for (double& x : v) x -= mean;
}

// One V-cycle on level n (spacing h): pre-smoothing, the residual restricted to n/2, a V-cycle
// there from zero, its correction prolonged and added, post-smoothing. The coarsest level (4^3)
// is relaxed to convergence.
void v_cycle(int n, double h, const std::vector<double>& f, std::vector<double>& phi, int threads) {
  if (n <= kMultigridCoarsest) {
    smooth(n, h, f, phi, kMultigridCoarsestSweeps, threads);
    remove_mean(phi);
    return;
  }
  smooth(n, h, f, phi, kMultigridSweeps, threads);
  std::vector<double> r(f.size());
  residual(n, h, f, phi, r, threads);
  const int nc = n / 2;
  std::vector<double> fc(static_cast<std::size_t>(nc) * nc * nc), ec(fc.size(), 0.0);
#pragma omp parallel for schedule(static) num_threads(threads) if (n >= 32)
  for (int I = 0; I < nc; ++I)
    for (int J = 0; J < nc; ++J)
      for (int K = 0; K < nc; ++K) fc[mg_cell(nc, I, J, K)] = restricted(r.data(), n, I, J, K);
  v_cycle(nc, 2 * h, fc, ec, threads);
#pragma omp parallel for schedule(static) num_threads(threads) if (n >= 32)
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j)
      for (int k = 0; k < n; ++k) phi[mg_cell(n, i, j, k)] += prolonged(ec.data(), nc, i, j, k);
  smooth(n, h, f, phi, kMultigridSweeps, threads);
}

}  // namespace

void periodic_laplacian(int n, double h, const std::vector<double>& phi, std::vector<double>& out, int threads) {
  threads = threads_or_default(threads);
  out.resize(phi.size());
  const double inv_h2 = 1.0 / (h * h);
#pragma omp parallel for schedule(static) num_threads(threads) if (n >= 32)
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j)
      for (int k = 0; k < n; ++k) out[mg_cell(n, i, j, k)] = laplacian_at(phi.data(), n, inv_h2, i, j, k);
}

MultigridResult multigrid_solve(int n, double h, const std::vector<double>& f, std::vector<double>& phi,
                                double tolerance, int max_cycles, int threads) {
  if (n < 4 || (n & (n - 1)) != 0) throw std::invalid_argument("multigrid: the mesh must be a power of two >= 4");
  threads = threads_or_default(threads);
  const std::size_t size = static_cast<std::size_t>(n) * n * n;
  if (f.size() != size) throw std::invalid_argument("multigrid: source of the wrong size");
  phi.resize(size, 0.0);
  MultigridResult result;
  const double source = norm(f);
  if (source == 0) {
    std::fill(phi.begin(), phi.end(), 0.0);
    return result;
  }
  std::vector<double> r(size);
  for (result.cycles = 1; result.cycles <= max_cycles; ++result.cycles) {
    v_cycle(n, h, f, phi, threads);
    remove_mean(phi);
    residual(n, h, f, phi, r, threads);
    result.residual = norm(r) / source;
    if (result.residual < tolerance) break;
  }
  if (result.cycles > max_cycles) result.cycles = max_cycles;
  return result;
}

}  // namespace swarmfit::pm
