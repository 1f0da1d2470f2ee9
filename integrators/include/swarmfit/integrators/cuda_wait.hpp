// How host threads wait for the CUDA device, and which device a process uses.
#pragma once

namespace swarmfit {

// Host threads that wait for the device (stream and event synchronisation) sleep instead of
// spinning (cudaDeviceScheduleBlockingSync). For many host threads sharing one card (swarmfit
// catalog --jobs): spinning waiters then take the cores from the threads that would launch the
// next kernels. Takes effect only before the process's first CUDA work; a no-op without CUDA.
void cuda_wait_blocking();

// This process's CUDA device: device `index` modulo the devices present (one MPI rank per GPU:
// the rank's index among the ranks of its host). Before the process's first CUDA work; a no-op
// without CUDA or without a device.
void cuda_use_device(int index);

// The CUDA runtime's current device belongs to a host thread, and a thread the process starts
// begins on device 0: a thread that will do CUDA work calls this first to use the process's device
// (cuda_use_device's; nothing if none was chosen). Without it, every rank's worker threads
// launched on GPU 0. Throws nothing: where the device cannot be set, the thread's own CUDA calls
// fail and report it.
void cuda_bind_thread() noexcept;

}  // namespace swarmfit
