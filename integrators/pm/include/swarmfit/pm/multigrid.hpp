// Multigrid V-cycles for the 7-point Poisson equation lap(phi) = f on a periodic, cell-centred
// n^3 mesh (n a power of two): red-black Gauss-Seidel smoothing (as Aubert, Amini & David 2009),
// restriction by the mean of a coarse cell's 8 children, prolongation by trilinear interpolation
// of the coarse correction (Trottenberg, Oosterlee & Schueller 2001, "Multigrid", sec. 2.8 and
// 4.3 for the cell-centred transfers). f must have zero mean (the periodic problem's condition);
// phi is returned with zero mean.
#pragma once

#include <vector>

namespace swarmfit::pm {

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
