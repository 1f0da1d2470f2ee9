// The one place that spells the CUDA qualifiers and the CUDA error check
// (habit 1 of design/STYLE.md; after Kokkos_Macros.hpp / AMReX_GpuQualifiers.H).
#pragma once

// SWARMFIT_CONSTANT: a table the physics reads (`static SWARMFIT_CONSTANT double t[] = ...`):
// constant memory in the device pass, not declared const there so that the values stay loads
// from the constant bank (operands of the FMAs) instead of being folded into literal operands;
// const on the host.
#if defined(__CUDA_ARCH__)
#define SWARMFIT_CONSTANT __constant__
#else
#define SWARMFIT_CONSTANT const
#endif

// SWARMFIT_HD_COLD: rarely executed host/device code (observations, correctors) kept out of
// line, so the hot loop stays small and the compiler does not inline it at every call site.
// SWARMFIT_FLATTEN (host only; nvcc inlines every SWARMFIT_HD function already): the integration
// loop inlines everything it calls except the cold functions, which are flattened themselves.
// Left to its heuristics, g++ kept the Kepler solver's parts, the monitors and even a one-
// instruction square root out of line in the larger loops (the observed one above all), and every
// such call spilled the caller's live SIMD registers (bench/RESULTS.md, "Flattened integration
// loops"). Forcing every SWARMFIT_HD function inline instead multiplied the compile time (every
// cold function inlining whole steps at each call).
#if defined(__CUDACC__)
#define SWARMFIT_HD __host__ __device__ __forceinline__
#define SWARMFIT_HD_COLD __host__ __device__ __noinline__
#define SWARMFIT_GLOBAL __global__
#else
#define SWARMFIT_HD inline
#define SWARMFIT_HD_COLD inline __attribute__((noinline, flatten))
#define SWARMFIT_GLOBAL
#endif
#if defined(__CUDACC__)
#define SWARMFIT_FLATTEN
#else
#define SWARMFIT_FLATTEN __attribute__((flatten))
#endif

// SWARMFIT_UNROLL: loops over bodies (compile-time trip counts; registers need constant indices).
// SWARMFIT_ROLLED: iteration loops (Kepler solver) that must stay loops, for code size.
// SWARMFIT_UNROLL_BODIES(N): loops over the N bodies. On the GPU they are unrolled (state in
// registers) up to 8 bodies; beyond, the state spills to local memory anyway and unrolled code
// only multiplies ptxas time (minutes per kernel), so the loops stay rolled.
// SWARMFIT_UNROLL_IF(condition): on the GPU, unroll where a compile-time condition holds (the
// host compiler decides for itself). Loops over pairs run
// j over all N with `if (j <= i) continue;`: constant trip counts let NVVM unroll them fully
// (a variable bound j = i+1..N is runtime-unrolled innermost-first, which sends the state to
// local memory).
#define SWARMFIT_PRAGMA(x) _Pragma(#x)
#if defined(__CUDACC__)
#define SWARMFIT_UNROLL _Pragma("unroll")
#define SWARMFIT_ROLLED _Pragma("unroll 1")
#define SWARMFIT_UNROLL_BODIES(n) SWARMFIT_PRAGMA(unroll((n) <= 8 ? (n) : 1))
#define SWARMFIT_UNROLL_IF(condition) SWARMFIT_PRAGMA(unroll((condition) ? 16 : 1))
#else
#define SWARMFIT_UNROLL _Pragma("GCC unroll 16")
#define SWARMFIT_ROLLED _Pragma("GCC unroll 1")
#define SWARMFIT_UNROLL_BODIES(n) _Pragma("GCC unroll 16")
#define SWARMFIT_UNROLL_IF(condition)
#endif

#if defined(__CUDACC__) || defined(SWARMFIT_WITH_CUDA_RUNTIME)
#include <cuda_runtime.h>

#include <sstream>
#include <stdexcept>
// Every CUDA call goes through this: a device failure becomes an exception at the host boundary.
#define SWARMFIT_CUDA_CHECK(call)                                                                                    \
  do {                                                                                                               \
    cudaError_t swarmfit_err_ = (call);                                                                              \
    if (swarmfit_err_ != cudaSuccess) {                                                                              \
      std::ostringstream swarmfit_msg_;                                                                              \
      swarmfit_msg_ << "CUDA error " << cudaGetErrorName(swarmfit_err_) << " (" << cudaGetErrorString(swarmfit_err_) \
                    << ") at " << __FILE__ << ":" << __LINE__ << " in " #call;                                       \
      throw std::runtime_error(swarmfit_msg_.str());                                                                 \
    }                                                                                                                \
  } while (0)
#endif
