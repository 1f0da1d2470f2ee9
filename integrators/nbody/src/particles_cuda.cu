// Test particles through a recorded field on the GPU (particles.hpp): a thread a particle, each
// advancing alone through the tape over the whole interval (the same advance_particle as the CPU
// threads). The tape is small (the massive bodies' states) and read by every thread: it stays in
// the caches. Each thread's cursors into the tape live in local memory (kMaxMassive of them).
#include <cuda_runtime.h>

#include <algorithm>
#include <stdexcept>
#include <string>

#include "swarmfit/nbody/particles.hpp"

namespace swarmfit::nbody {

namespace {

constexpr int kMaxMassive = 64;  // the field's bodies a particle pass takes (planets and a star)

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess)
    throw std::runtime_error(std::string("CUDA (particles ") + what + "): " + cudaGetErrorString(e));
}

template <class V>
struct Buffer {
  V* ptr = nullptr;
  std::size_t size = 0;
  void put(const V* host, std::size_t n) {
    if (n > size) {
      if (ptr) cudaFree(ptr);
      size = std::max<std::size_t>(n, 1);
      check(cudaMalloc(&ptr, size * sizeof(V)), "cudaMalloc");
    }
    if (n) check(cudaMemcpy(ptr, host, n * sizeof(V), cudaMemcpyHostToDevice), "upload");
  }
  void get(V* host, std::size_t n) const {
    if (n) check(cudaMemcpy(host, ptr, n * sizeof(V), cudaMemcpyDeviceToHost), "download");
  }
  ~Buffer() {
    if (ptr) cudaFree(ptr);
  }
};

template <int Order>
__global__ void advance_kernel(BodyState* state, double* time, double* step, double* steps, int* status, long n,
                               TapeView tape, double t1, ParticleRules rules) {
  const long i = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x;
  if (i >= n || status[i] != kParticleAlive) return;
  int cursor[kMaxMassive];
  for (int m = 0; m < tape.num_massive; ++m) cursor[m] = tape.offset[m];
  BodyState b = state[i];
  double t = time[i], dt = step[i], s = steps[i];
  status[i] = advance_particle<Order>(b, t, dt, t1, tape, rules, cursor, s);
  state[i] = b;
  time[i] = t;
  step[i] = dt;
  steps[i] = s;
}

class CudaParticles final : public ParticleBackend {
 public:
  CudaParticles() {
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0)
      throw std::runtime_error("backend=cuda: no CUDA device is available");
  }
  std::string name() const override { return "cuda"; }
  void advance(Particles& p, const ParticleTape& tape, double t1, int order, const ParticleRules& rules) override {
    const TapeView v = tape.view();
    if (v.num_massive > kMaxMassive)
      throw std::runtime_error("backend=cuda: test particles through a recorded field take at most " +
                               std::to_string(kMaxMassive) + " massive bodies");
    const long n = p.size();
    if (n == 0) return;
    time_.put(v.time, v.offset[v.num_massive]);
    tape_state_.put(v.state, 18 * static_cast<std::size_t>(v.offset[v.num_massive]));
    offset_.put(v.offset, v.num_massive + 1);
    gm_.put(v.gm, v.num_massive);
    state_.put(p.state.data(), n);
    ptime_.put(p.time.data(), n);
    step_.put(p.step.data(), n);
    steps_.put(p.steps.data(), n);
    status_.put(p.status.data(), n);
    const TapeView dv{time_.ptr, tape_state_.ptr, offset_.ptr, gm_.ptr, v.num_massive};
    const unsigned blocks = static_cast<unsigned>((n + 127) / 128);
    if (order == 6)
      advance_kernel<6><<<blocks, 128>>>(state_.ptr, ptime_.ptr, step_.ptr, steps_.ptr, status_.ptr, n, dv, t1, rules);
    else
      advance_kernel<4><<<blocks, 128>>>(state_.ptr, ptime_.ptr, step_.ptr, steps_.ptr, status_.ptr, n, dv, t1, rules);
    check(cudaGetLastError(), "launch");
    check(cudaDeviceSynchronize(), "advance");
    state_.get(p.state.data(), n);
    ptime_.get(p.time.data(), n);
    step_.get(p.step.data(), n);
    steps_.get(p.steps.data(), n);
    status_.get(p.status.data(), n);
  }

 private:
  Buffer<double> time_, tape_state_, gm_, ptime_, step_, steps_;
  Buffer<int> offset_, status_;
  Buffer<BodyState> state_;
};

}  // namespace

std::unique_ptr<ParticleBackend> make_cuda_particles() { return std::make_unique<CudaParticles>(); }

}  // namespace swarmfit::nbody
