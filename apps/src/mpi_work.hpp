// MPI for the command's distributed work (Open MPI; built where CMake finds MPI). A command
// started by mpirun gets one MpiWork for its lifetime: MPI initialised with threads (rank 0 serves
// the work queue from a thread of its own, beside its own share of the work), finalised at the end.
// Started without mpirun (no launcher in the environment) it is a single process: rank 0 of 1.
// Each rank uses the GPU of its index among the ranks of its host (cuda_use_device).
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

namespace swarmfit::app {

class MpiWork {
 public:
  MpiWork(int* argc, char*** argv);  // initialises MPI only under a launcher
  ~MpiWork();
  MpiWork(const MpiWork&) = delete;
  MpiWork& operator=(const MpiWork&) = delete;

  bool active() const { return size_ > 1; }
  int rank() const { return rank_; }
  int size() const { return size_; }
  int local_size() const { return local_size_; }  // the ranks on this host (this one included)
  // The work queue: the next of [0, count) not yet handed to any rank, or -1 when none is left.
  // Every rank must ask until it gets -1 (rank 0's server thread then ends).
  long next(long count);
  // Waits for every rank; polls (a sleeping wait) so that a rank that waits leaves its core to
  // the ranks still working on an oversubscribed host.
  void barrier();
  // Ends every rank at once with this exit code (MPI_Abort), as a rank that stops early must: the
  // others would wait for it forever.
  [[noreturn]] void abort(int code);
  // For a fit shared over the ranks (models/posterior.hpp, BatchSharing): every rank's slice of the
  // n values, rank r's being [n r / size, n (r + 1) / size), gathered into all.
  void gather(std::vector<double>& values, std::vector<int>& codes);
  // The same for n blocks of `block` values (values.size() = n block), rank r's blocks
  // [n r / size, n (r + 1) / size).
  void gather_blocks(std::vector<double>& values, long block);
  // Sums `count` values over the ranks, in place on every rank (MPI_Allreduce): the large-N
  // engine's partial forces, each rank's over its slice of the massive bodies.
  void allreduce_sum(double* values, std::size_t count);
  // True on every rank when it is true on any (a signal seen by one rank stops all together).
  bool any(bool flag);

 private:
  struct Server;
  bool initialised_ = false;
  int rank_ = 0, size_ = 1, local_size_ = 1;
  std::unique_ptr<Server> server_;
};

}  // namespace swarmfit::app
