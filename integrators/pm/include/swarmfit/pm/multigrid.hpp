// Multigrid V-cycles for the 7-point Poisson equation lap(phi) = f on a periodic, cell-centred
// n^3 mesh (n a power of two): red-black Gauss-Seidel smoothing (as Aubert, Amini & David 2009),
// restriction by the mean of a coarse cell's 8 children, prolongation by trilinear interpolation
// of the coarse correction (Trottenberg, Oosterlee & Schueller 2001, "Multigrid", sec. 2.8 and
// 4.3 for the cell-centred transfers). f must have zero mean (the periodic problem's condition);
// phi is returned with zero mean.
#pragma once

#include <vector>

#include "swarmfit/integrators/portability.hpp"

namespace swarmfit::pm {

// The V-cycle's arithmetic per cell, written once for the CPU (multigrid.cpp) and the GPU
// (pm_cuda.cu): cell (i, j, k) of a periodic n^3 mesh, row-major, wrapped by a mask.
SWARMFIT_HD long mg_cell(int n, int i, int j, int k) {
  const int m = n - 1;  // n is a power of two: periodic wrap by a mask
  return (static_cast<long>(i & m) * n + (j & m)) * n + (k & m);
}
// The sum of a cell's six neighbours (in this order, on both backends).
template <class V>
SWARMFIT_HD double neighbour_sum(const V* phi, int n, int i, int j, int k) {
  return phi[mg_cell(n, i + 1, j, k)] + phi[mg_cell(n, i - 1, j, k)] + phi[mg_cell(n, i, j + 1, k)] +
         phi[mg_cell(n, i, j - 1, k)] + phi[mg_cell(n, i, j, k + 1)] + phi[mg_cell(n, i, j, k - 1)];
}
// A Gauss-Seidel update of lap(phi) = f at a cell: (its neighbours' sum - h^2 f) / 6.
SWARMFIT_HD double gauss_seidel(const double* phi, const double* f, int n, double h2, int i, int j, int k) {
  return (neighbour_sum(phi, n, i, j, k) - h2 * f[mg_cell(n, i, j, k)]) / 6.0;
}
// The 7-point Laplacian at a cell.
SWARMFIT_HD double laplacian_at(const double* phi, int n, double inv_h2, int i, int j, int k) {
  return (neighbour_sum(phi, n, i, j, k) - 6.0 * phi[mg_cell(n, i, j, k)]) * inv_h2;
}
// Restriction: coarse cell (I, J, K) of the n/2 mesh, the mean of its eight children on n.
SWARMFIT_HD double restricted(const double* r, int n, int I, int J, int K) {
  double s = 0;
  for (int a = 0; a < 2; ++a)
    for (int b = 0; b < 2; ++b)
      for (int c = 0; c < 2; ++c) s += r[mg_cell(n, 2 * I + a, 2 * J + b, 2 * K + c)];
  return s / 8.0;
}
// Trilinear prolongation of the coarse correction ec (nc = n/2) to fine cell (i, j, k): a fine
// cell's centre lies a quarter of a coarse cell from its parent's centre, so along each axis it
// takes 3/4 of the parent and 1/4 of the neighbour on its side.
SWARMFIT_HD double prolonged(const double* ec, int nc, int i, int j, int k) {
  const int I = i >> 1, J = j >> 1, K = k >> 1;
  const int si = (i & 1) ? 1 : -1, sj = (j & 1) ? 1 : -1, sk = (k & 1) ? 1 : -1;
  double e = 0;
  for (int a = 0; a < 2; ++a)
    for (int b = 0; b < 2; ++b)
      for (int c = 0; c < 2; ++c) {
        const double w = (a ? 0.25 : 0.75) * (b ? 0.25 : 0.75) * (c ? 0.25 : 0.75);
        e += w * ec[mg_cell(nc, I + a * si, J + b * sj, K + c * sk)];
      }
  return e;
}
// The V-cycle's shape, shared too: sweeps before and after the coarse correction, the coarsest
// mesh's side and the sweeps that relax it.
constexpr int kMultigridSweeps = 2, kMultigridCoarsest = 4, kMultigridCoarsestSweeps = 50;

struct MultigridResult {
  int cycles = 0;
  double residual = 0;  // |f - lap(phi)|_2 / |f|_2 after the last cycle
};

// Solves in place: phi holds the first guess (zeros are fine) and the solution. Stops when the
// relative residual is below `tolerance` or after `max_cycles` V-cycles.
MultigridResult multigrid_solve(int n, double h, const std::vector<double>& f, std::vector<double>& phi,
                                double tolerance, int max_cycles, int threads = 0);

// The 7-point Laplacian of phi (periodic), for the residual and the tests.
void periodic_laplacian(int n, double h, const std::vector<double>& phi, std::vector<double>& out, int threads = 0);

}  // namespace swarmfit::pm
