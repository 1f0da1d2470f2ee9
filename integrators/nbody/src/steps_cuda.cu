// The block steps' predictor and corrector on the GPU: hermite.hpp's predict and correct, a thread
// a body. This file is built with -fmad=false (integrators/CMakeLists.txt): no multiply-add
// contraction, so that the device's predictions and corrections are the host's bit for bit (the
// host is built with -ffp-contract=off; IEEE division and square root on both). The forces alone
// then differ between the CPU and GPU backends, and the GPU backend's own steps equal the host's.
// One exception: order 6's step criterion takes a cube root, which neither libm's nor CUDA's
// rounds correctly, so a wanted step may differ in its last bit; that changes a body's block step
// only where it lies within an ulp of a power of two (the states do not depend on it otherwise).
#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

#include "steps_cuda.hpp"
#include "swarmfit/nbody/force_backend.hpp"
#include "swarmfit/nbody/hermite.hpp"

namespace swarmfit::nbody::device {

namespace {

void launched(const char* what) {
  const cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess) throw std::runtime_error(std::string("CUDA (nbody ") + what + "): " + cudaGetErrorString(e));
}

__global__ void predict_active_kernel(const double* fields, const double* time, long n, const int* index, int count,
                                      double t, double* ibody) {
  const int k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k >= count) return;
  const long i = index[k];
  const BodyState b = load_fields(fields, n, i);
  double* out = ibody + static_cast<long>(k) * 12;
  predict(b, t - time[i], out, out + 3, out + 6);
  for (int d = 0; d < 3; ++d) out[9 + d] = 0.0;
}

template <int Order>
__global__ void correct_active_kernel(double* fields, double* time, long n, const int* index, int count, double t,
                                      const double* sums, double eta, double max_step, double* wanted,
                                      double* next_step) {
  const int k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k >= count) return;
  const long i = index[k];
  BodyState b = load_fields(fields, n, i);
  const double* row = sums + static_cast<long>(k) * packed_width(Order);
  // h = t - time[i] is the body's block step exactly (both are multiples of it).
  const double h = t - time[i];
  wanted[k] = correct<Order>(b, h, row, row + 3, Order == 6 ? row + 6 : nullptr, eta);
  next_step[k] = quantise_step(wanted[k], h, t, max_step);
  store_fields(fields, n, i, b);
  time[i] = t;
}

}  // namespace

void predict_active(const double* fields, const double* time, long n, const int* index, int count, double t,
                    double* ibody) {
  if (count == 0) return;
  predict_active_kernel<<<(count + 127) / 128, 128>>>(fields, time, n, index, count, t, ibody);
  launched("predict active");
}

void correct_active(int order, double* fields, double* time, long n, const int* index, int count, double t,
                    const double* sums, double eta, double max_step, double* wanted, double* next_step) {
  if (count == 0) return;
  const unsigned blocks = (count + 127) / 128;
  if (order == 6)
    correct_active_kernel<6><<<blocks, 128>>>(fields, time, n, index, count, t, sums, eta, max_step, wanted, next_step);
  else
    correct_active_kernel<4><<<blocks, 128>>>(fields, time, n, index, count, t, sums, eta, max_step, wanted, next_step);
  launched("correct active");
}

}  // namespace swarmfit::nbody::device
