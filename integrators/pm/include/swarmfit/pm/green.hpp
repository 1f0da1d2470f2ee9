// The Fourier multipliers of the FFT Poisson solve, made once on the host (FFTW) and used by the
// CPU and GPU backends alike: the same numbers on both.
#pragma once

#include <array>
#include <vector>

#include "swarmfit/pm/pm.hpp"

namespace swarmfit::pm {

// The side of the FFT mesh: the mesh (periodic) or twice it (isolated: Hockney & Eastwood's
// doubled mesh, on which the cyclic convolution is the free-space one for the original octant).
int fft_side(const PmSettings& s);

// The potential's multiplier of the r2c spectrum ([m][m][m/2 + 1]), normalisation 1 / m^3
// included. Periodic: 4 pi G over the 7-point Laplacian's eigenvalue (zero for the mean: the
// periodic problem's mean density is taken out, the "Jeans swindle"). Isolated: the transform of
// G(r) = -G / r on the doubled mesh (images at the nearest periodic distance, G(0) the cell's mean
// of 1/r), times the cell volume. Optionally divided by the assignment window squared (periodic).
std::vector<double> green_multiplier(const PmSettings& s);

// Isolated: the force kernels -G x_d / r^3 on the doubled mesh (zero at r = 0: no self-force; zero
// on the Nyquist plane of d, which no pair of the mesh's octant reaches), transformed, times the
// cell volume and 1 / m^3. Each is real and odd along d, so its transform is imaginary: the
// imaginary parts.
std::array<std::vector<double>, 3> force_kernel_multipliers(const PmSettings& s);

}  // namespace swarmfit::pm
