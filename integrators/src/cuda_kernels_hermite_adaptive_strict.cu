// The reproducible build of cuda_kernels_hermite_adaptive.cu (namespace strict_kernels): compiled with
// nvcc -fmad=false and SWARMFIT_STRICT_FP=1 (integrators/CMakeLists.txt; cuda_kernels.cuh says why).
#include "cuda_kernels_hermite_adaptive.cu"
