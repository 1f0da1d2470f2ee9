// Device and pinned host buffers that grow and are kept (host code of CUDA compilation units).
#pragma once

#include <cstddef>
#include <vector>

#include "swarmfit/integrators/portability.hpp"

namespace swarmfit {

// A grow-only buffer (freed with it): device memory, or pinned host memory. A pinned buffer that
// is outgrown is kept until the buffer is released, not freed while it grows: cudaFreeHost
// synchronises the whole device, so a growth would wait for every kernel in flight.
struct GrowBuffer {
  bool pinned = false;
  void* ptr = nullptr;
  std::size_t bytes = 0;
  std::vector<void*> outgrown;
  GrowBuffer() = default;
  explicit GrowBuffer(bool pinned_host) : pinned(pinned_host) {}
  GrowBuffer(const GrowBuffer&) = delete;
  GrowBuffer& operator=(const GrowBuffer&) = delete;
  template <class V>
  V* get(std::size_t count) {
    if (count * sizeof(V) > bytes) {
      if (pinned && ptr)
        outgrown.push_back(ptr);
      else
        release();
      ptr = nullptr;
      SWARMFIT_CUDA_CHECK(pinned ? cudaMallocHost(&ptr, count * sizeof(V)) : cudaMalloc(&ptr, count * sizeof(V)));
      bytes = count * sizeof(V);
    }
    return static_cast<V*>(ptr);
  }
  void release() {
    if (ptr) pinned ? cudaFreeHost(ptr) : cudaFree(ptr);  // no throwing from a destructor
    for (void* p : outgrown) cudaFreeHost(p);
    outgrown.clear();
    ptr = nullptr;
    bytes = 0;
  }
  ~GrowBuffer() { release(); }
};

// A synchronous upload of `count` values into a grow-only device buffer (null stays null).
template <class V>
const V* upload_into(GrowBuffer& buffer, const V* host, std::size_t count) {
  if (!host || count == 0) return nullptr;
  V* device = buffer.get<V>(count);
  SWARMFIT_CUDA_CHECK(cudaMemcpy(device, host, count * sizeof(V), cudaMemcpyHostToDevice));
  return device;
}

}  // namespace swarmfit
