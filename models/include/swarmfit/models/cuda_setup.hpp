// The GPU sets up its own batches: parameters -> initial conditions (system_setup.hpp) in a
// kernel, so that a likelihood batch sends only its parameters to the device and the host does
// no per-system work. Built with the CUDA backend; the
// CPU-only build's versions throw.
#pragma once

#include "swarmfit/integrators/ensemble.hpp"
#include "swarmfit/models/likelihood_observer.hpp"
#include "swarmfit/models/system_setup.hpp"

namespace swarmfit {

// Per-instrument centres subtracted from the offsets (LikelihoodProblem's rv_centre).
struct RvCentres {
  double value[kMaxInstruments] = {};
};

// Sets up systems [0, count) of `view` (whose padding slots get a stand-in marked
// kStatusPadding) from `params` (device memory, num_parameters() per system), and, where the
// pointers are not null, offsets[s * ni + j] = offset_j - centre_j and jitters[s * ni + j].
// Invalid parameter sets get a stand-in and kStatusInvalidParameters. Asynchronous on `stream`
// (a cudaStream_t; null = default).
void launch_system_setup(const ModelShape& shape, const RvCentres& centres, const double* params, long count,
                         EnsembleView view, double* offsets, double* jitters, void* stream);

// The same from host parameters into a host ensemble (tests: against PlanetaryModel::initial_state).
void setup_systems_cuda(const ModelShape& shape, const double* params, long count, Ensemble& out);

}  // namespace swarmfit
