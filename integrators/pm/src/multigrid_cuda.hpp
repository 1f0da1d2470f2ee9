// The multigrid Poisson solver on the GPU, for the CUDA backend (pm_cuda.cu): the CPU's V-cycles
// (multigrid.cpp) kernel for kernel, in FP64 whatever the particles' precision, with the per-cell
// arithmetic of multigrid.hpp. Periodic meshes only (PmSettings::check refuses the others).
#pragma once

#include <vector>

#include "swarmfit/pm/multigrid.hpp"
#include "swarmfit/pm/pm.hpp"

namespace swarmfit::pm {

class CudaMultigrid {
 public:
  // Device memory for every level, allocated once here and reused by every solve.
  explicit CudaMultigrid(const PmSettings& s);
  ~CudaMultigrid();
  CudaMultigrid(const CudaMultigrid&) = delete;
  CudaMultigrid& operator=(const CudaMultigrid&) = delete;

  // `mesh` (n^3 cells on the device, row-major x, y, z) holds the density and receives the
  // potential of lap(phi) = 4 pi G (rho - mean rho), as the CPU backend's solve: from zero, V-cycles
  // until the residual's norm is below the tolerance times the source's (or max_cycles). Waits for
  // the device once a cycle (the stopping rule's norm).
  template <class Real>
  MultigridResult solve(Real* mesh);

 private:
  struct Level {
    int n = 0;
    double h = 0;
    double *f = nullptr, *phi = nullptr, *r = nullptr;  // source, solution (a correction below the top), residual
    long cells() const { return static_cast<long>(n) * n * n; }
  };
  void release();
  void smooth(const Level& a, int sweeps);
  void residual(const Level& a);
  void v_cycle(std::size_t level);
  template <class T>
  void sum(const T* v, long size, bool squares);  // into total_ (on the device)
  void remove_mean(double* v, long size);
  double norm(const double* v, long size);

  std::vector<Level> levels_;  // n, n/2, ... down to kMultigridCoarsest
  double four_pi_G_, tolerance_;
  int max_cycles_;
  double *partial_ = nullptr, *total_ = nullptr;  // the reduction's per-block sums and its result
};

}  // namespace swarmfit::pm
