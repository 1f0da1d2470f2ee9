// The particle-mesh engine's physics, written once for the host and the device: the assignment
// stencils, the finite-difference gradient, the Green's functions' pieces and the leapfrog's
// kick and drift. Everything here is per particle or per cell; the loops live in the backends.
//
// The mesh is cell-centred: cell c of a side covers [c h, (c + 1) h) from the mesh origin, its
// centre at (c + 1/2) h. Assignment schemes (Hockney & Eastwood 1981, "Computer Simulation Using
// Particles", sec. 5-3): nearest grid point (NGP), cloud in cell (CIC) and triangular-shaped
// cloud (TSC), of orders p = 1, 2, 3; forces are interpolated back with the same stencil, which,
// with a centred difference of the potential, gives no self-force and conserves momentum (sec.
// 5-5).
#pragma once

#include <cmath>

#include "swarmfit/integrators/portability.hpp"

namespace swarmfit::pm {

enum class Assignment { ngp = 1, cic = 2, tsc = 3 };

// The width of a scheme's stencil per dimension (1, 2, 3 cells).
SWARMFIT_HD constexpr int stencil_width(Assignment a) { return static_cast<int>(a); }

// The stencil of a particle at s (its coordinate in cell units from the mesh origin) along one
// dimension: the first cell and the weights of the width cells from it (they sum to 1).
// NGP: the cell holding s. CIC: the two cells whose centres bracket s, linear weights.
// TSC: the nearest cell and its neighbours, d = s - centre in [-1/2, 1/2):
// w = (1/2 - d)^2 / 2, 3/4 - d^2, (1/2 + d)^2 / 2 (Hockney & Eastwood eq. 5-139).
template <Assignment A, class Real>
SWARMFIT_HD void stencil(Real s, int& first, Real w[3]) {
  if constexpr (A == Assignment::ngp) {
    first = static_cast<int>(std::floor(s));
    w[0] = Real(1);
  } else if constexpr (A == Assignment::cic) {
    const Real t = s - Real(0.5);
    const Real f = std::floor(t);
    first = static_cast<int>(f);
    w[1] = t - f;
    w[0] = Real(1) - w[1];
  } else {
    const Real c = std::floor(s);
    const Real d = s - c - Real(0.5);
    first = static_cast<int>(c) - 1;
    w[0] = Real(0.5) * (Real(0.5) - d) * (Real(0.5) - d);
    w[1] = Real(0.75) - d * d;
    w[2] = Real(0.5) * (Real(0.5) + d) * (Real(0.5) + d);
  }
}

// The Fourier transform of a scheme's window along one dimension, W = sinc(pi m / n)^p for the
// m-th frequency of an n-cell side (Hockney & Eastwood eq. 7-7): the Green's function divided by
// W^2 (assignment and interpolation) undoes the smoothing of both.
SWARMFIT_HD double window(int m, int n, int p) {
  if (m == 0) return 1.0;
  const double x = M_PI * m / n;
  return std::pow(std::sin(x) / x, p);
}

// The eigenvalue of the 7-point Laplacian for frequency (mx, my, mz) on an n^3 periodic mesh of
// spacing h: -(4 / h^2) sum_d sin^2(pi m_d / n). The FFT solver divides by it, so that it solves
// the same discrete equation as the multigrid solver (and the finite differences that follow see
// a potential consistent with them).
SWARMFIT_HD double discrete_laplacian(int mx, int my, int mz, int n, double h) {
  const double sx = std::sin(M_PI * mx / n), sy = std::sin(M_PI * my / n), sz = std::sin(M_PI * mz / n);
  return -4.0 / (h * h) * (sx * sx + sy * sy + sz * sz);
}

// The mean of 1/r over a cube of side 1 about its centre: the free-space Green's function's value
// in its own cell, G(0) = -G 2.3800772 / h (the potential of a cell's uniform mass at its centre
// averaged over the cell; Hockney & Eastwood sec. 6-5-2 leave G(0) to the user, the cell average
// keeps the sum finite and the forces beyond a cell unaffected).
constexpr double kMeanInverseDistanceInUnitCube = 2.3800772;

// Minus the gradient of the potential at cell (i, j, k) along dimension d by a centred difference
// of order 2, -(phi[+1] - phi[-1]) / 2h, or 4, -(8 (phi[+1] - phi[-1]) - (phi[+2] - phi[-2])) / 12h.
// `at(i, j, k)` reads the potential (periodic wrap or not: the caller's); `inv_h` is 1 / h (a
// product, not a division: the GPU's gradient was bound by its three divisions a cell).
template <int Order, class At>
SWARMFIT_HD double minus_gradient(const At& at, int i, int j, int k, int d, double inv_h) {
  const int di = d == 0, dj = d == 1, dk = d == 2;
  const double p1 = at(i + di, j + dj, k + dk), m1 = at(i - di, j - dj, k - dk);
  if constexpr (Order == 2) {
    return -(p1 - m1) * (0.5 * inv_h);
  } else {
    const double p2 = at(i + 2 * di, j + 2 * dj, k + 2 * dk), m2 = at(i - 2 * di, j - 2 * dj, k - 2 * dk);
    return -(8.0 * (p1 - m1) - (p2 - m2)) * (inv_h * (1.0 / 12.0));
  }
}

// A coordinate of a periodic box [lower, lower + box) brought back into it. (The division only for
// a coordinate outside: a step moves few particles across the box's faces, and the quotient of
// one inside is 0 anyway.)
SWARMFIT_HD double periodic_wrap(double x, double lower, double box) {
  double u = x - lower;
  if (u >= 0 && u < box) return lower + u;
  u -= box * std::floor(u / box);
  if (u >= box) u = 0;  // rounding at the upper edge
  return lower + u;
}

// Kick-drift-kick leapfrog (Hockney & Eastwood sec. 4-4; Springel 2005 for KDK): v += a dt/2,
// x += v dt, new a, v += a dt/2. Symplectic and time-reversible for a fixed step.
template <class Real>
SWARMFIT_HD void kick(Real& v, Real a, Real half_step) {
  v += a * half_step;
}
template <class Real>
SWARMFIT_HD void drift(Real& x, Real v, Real step) {
  x += v * step;
}

}  // namespace swarmfit::pm
