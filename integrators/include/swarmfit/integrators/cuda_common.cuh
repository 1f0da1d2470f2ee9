// What every CUDA kernel header shares (nvcc only). Each scheme's kernels are built twice: as nvcc
// builds them (namespace fast_kernels: a*b+c contracted into FMAs, 1/r from rsqrt), and for
// reproducible runs (RunRequest::reproducible; namespace strict_kernels) with nvcc -fmad=false
// and SWARMFIT_STRICT_FP=1 (1/r an IEEE square root and division, lanes.hpp): the arithmetic of
// the CPU backend (built with -ffp-contract=off), so that the two give the same bits.
#pragma once

#include "swarmfit/integrators/backend.hpp"
#include "swarmfit/integrators/dispatch.hpp"
#include "swarmfit/integrators/schemes.hpp"

#if SWARMFIT_STRICT_FP
#define SWARMFIT_KERNELS strict_kernels
#else
#define SWARMFIT_KERNELS fast_kernels
#endif

namespace swarmfit {

constexpr int kCudaBlock = 128;
// Blocks per multiprocessor the register allocation must allow (__launch_bounds__): 1 lets the
// n = 3 Hermite kernel keep its state in registers; more caps them, for occupancy, with spills.
// Set with -DSWARMFIT_CUDA_MIN_BLOCKS (bench/RESULTS.md run 3).
#ifndef SWARMFIT_CUDA_MIN_BLOCKS
#define SWARMFIT_CUDA_MIN_BLOCKS 1
#endif

}  // namespace swarmfit
