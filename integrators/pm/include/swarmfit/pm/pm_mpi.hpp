// The particle-mesh forces over MPI ranks on CPU cores: a slab decomposition of the mesh along x
// with FFTW-MPI's parallel transforms (Frigo & Johnson 2005; the slab decomposition of FastPM and
// Gadget's PM part). Rank r owns the particles whose cell lies in its slab of the mesh's x planes
// [n r / R, n (r + 1) / R), deposits their mass into its slab and one ghost plane each side, and
// the planes are summed into FFTW-MPI's own slabs of the (periodic or doubled) FFT mesh; the
// potential comes back to each rank's slab with the ghost planes its differences and stencils
// reach. Results agree with one rank's to round-off (the transforms and the sums over ghost planes
// are other orders of the same additions). Built where CMake finds MPI and FFTW-MPI.
#pragma once

#include <mpi.h>

#include <memory>

#include "swarmfit/pm/pm.hpp"

namespace swarmfit::pm {

// FFT solver only (the multigrid solver runs in one process); throws std::invalid_argument if the
// mesh has fewer x planes than there are ranks. Collective: every rank of `comm` must call it.
template <class Real>
std::unique_ptr<MeshForces<Real>> make_slab_mesh_forces(const PmSettings& settings, MPI_Comm comm);

}  // namespace swarmfit::pm
