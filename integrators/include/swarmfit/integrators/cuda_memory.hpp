// Device and pinned host buffers that grow and are kept (host code of CUDA compilation units).
#pragma once

#include <cstddef>
#include <vector>

#include "swarmfit/integrators/portability.hpp"

namespace swarmfit {

// A grow-only buffer (freed with it): device memory, or pinned host memory. Neither synchronises
// the device, which would make the calling thread wait for every kernel in flight, other
// threads' too (a catalog's packed launches: bench/RESULTS.md, sixth session): device
// memory comes from the stream-ordered allocator (cudaMallocAsync and cudaFreeAsync on the
// calling thread's stream, where cudaMalloc and cudaFree synchronise), and a pinned buffer that is
// outgrown is kept until the buffer is released (cudaFreeHost synchronises).
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
      if (pinned) {
        SWARMFIT_CUDA_CHECK(cudaMallocHost(&ptr, count * sizeof(V)));
      } else {
        SWARMFIT_CUDA_CHECK(cudaMallocAsync(&ptr, count * sizeof(V), cudaStreamPerThread));
        // (Usable by the other streams once the allocation is made: this thread's work so far.)
        SWARMFIT_CUDA_CHECK(cudaStreamSynchronize(cudaStreamPerThread));
      }
      bytes = count * sizeof(V);
    }
    return static_cast<V*>(ptr);
  }
  // The buffer's users have waited for their streams: the memory is free for reuse once this
  // thread's stream gets there.
  void release() {
    if (ptr) pinned ? cudaFreeHost(ptr) : cudaFreeAsync(ptr, cudaStreamPerThread);  // no throwing from a destructor
    for (void* p : outgrown) cudaFreeHost(p);
    outgrown.clear();
    ptr = nullptr;
    bytes = 0;
  }
  ~GrowBuffer() { release(); }
};

// A synchronous upload of `count` values into a grow-only device buffer (null stays null), on
// the calling thread's stream: on the legacy default stream, which every thread shares, it
// waited for any kernel another thread had queued there.
template <class V>
const V* upload_into(GrowBuffer& buffer, const V* host, std::size_t count) {
  if (!host || count == 0) return nullptr;
  V* device = buffer.get<V>(count);
  SWARMFIT_CUDA_CHECK(cudaMemcpyAsync(device, host, count * sizeof(V), cudaMemcpyHostToDevice, cudaStreamPerThread));
  SWARMFIT_CUDA_CHECK(cudaStreamSynchronize(cudaStreamPerThread));
  return device;
}

// A synchronous download of `count` values (the calling thread's stream, as upload_into).
template <class V>
void download_from(V* host, const V* device, std::size_t count) {
  if (!host || !device || count == 0) return;
  SWARMFIT_CUDA_CHECK(cudaMemcpyAsync(host, device, count * sizeof(V), cudaMemcpyDeviceToHost, cudaStreamPerThread));
  SWARMFIT_CUDA_CHECK(cudaStreamSynchronize(cudaStreamPerThread));
}

}  // namespace swarmfit
