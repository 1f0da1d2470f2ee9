#include "mpi_work.hpp"

#include <mpi.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <stdexcept>
#include <thread>

#include "swarmfit/integrators/cuda_wait.hpp"

namespace swarmfit::app {

namespace {

constexpr int kRequestTag = 7201, kReplyTag = 7202;

bool under_launcher() {  // Open MPI's and PMI's (MPICH, Slurm) environment
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"})
    if (std::getenv(name)) return true;
  return false;
}

// Waits for a request without spinning: Open MPI's blocking calls busy-poll a core.
void wait(MPI_Request& request) {
  for (int done = 0;;) {
    MPI_Test(&request, &done, MPI_STATUS_IGNORE);
    if (done) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

}  // namespace

// Rank 0's dispatcher: answers each request with the next index, and -1 once they are gone; ends
// after telling every rank -1.
struct MpiWork::Server {
  std::thread thread;
  Server(long count, int size) {
    thread = std::thread([count, size] {
      long next = 0;
      int finished = 0;
      while (finished < size) {
        int asking = 0;
        MPI_Request request;
        MPI_Irecv(&asking, 1, MPI_INT, MPI_ANY_SOURCE, kRequestTag, MPI_COMM_WORLD, &request);
        MPI_Status status;
        for (int done = 0; !done;) {
          MPI_Test(&request, &done, &status);
          if (!done) std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
        const long reply = next < count ? next++ : -1;
        finished += reply < 0;
        MPI_Send(&reply, 1, MPI_LONG, status.MPI_SOURCE, kReplyTag, MPI_COMM_WORLD);
      }
    });
  }
  ~Server() {
    if (thread.joinable()) thread.join();
  }
};

MpiWork::MpiWork(int* argc, char*** argv) {
  if (!under_launcher()) return;
  int provided = 0;
  MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided);
  initialised_ = true;
  if (provided < MPI_THREAD_MULTIPLE) throw std::runtime_error("MPI: this MPI library gives no MPI_THREAD_MULTIPLE");
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
  // One GPU per rank: the rank's index among the ranks that share its host picks the device.
  MPI_Comm host;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &host);
  int local = 0;
  MPI_Comm_rank(host, &local);
  MPI_Comm_size(host, &local_size_);
  MPI_Comm_free(&host);
  cuda_use_device(local);
}

MpiWork::~MpiWork() {
  server_.reset();
  if (initialised_) MPI_Finalize();
}

long MpiWork::next(long count) {
  if (!active()) return -1;
  if (rank_ == 0 && !server_) server_ = std::make_unique<Server>(count, size_);
  const int ask = rank_;
  MPI_Send(&ask, 1, MPI_INT, 0, kRequestTag, MPI_COMM_WORLD);
  long reply = -1;
  MPI_Request request;
  MPI_Irecv(&reply, 1, MPI_LONG, 0, kReplyTag, MPI_COMM_WORLD, &request);
  wait(request);
  return reply;
}

void MpiWork::abort(int code) {
  if (server_) server_->thread.detach();
  MPI_Abort(MPI_COMM_WORLD, code);
  std::_Exit(code);
}

void MpiWork::gather(std::vector<double>& values, std::vector<int>& codes) {
  if (!active()) return;
  const long n = static_cast<long>(values.size());
  std::vector<int> counts(size_), offsets(size_);
  for (int r = 0; r < size_; ++r) {
    offsets[r] = static_cast<int>(n * r / size_);
    counts[r] = static_cast<int>(n * (r + 1) / size_) - offsets[r];
  }
  MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, values.data(), counts.data(), offsets.data(), MPI_DOUBLE,
                 MPI_COMM_WORLD);
  MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, codes.data(), counts.data(), offsets.data(), MPI_INT,
                 MPI_COMM_WORLD);
}

void MpiWork::gather_blocks(std::vector<double>& values, long block) {
  if (!active() || block < 1) return;
  const long n = static_cast<long>(values.size()) / block;
  std::vector<int> counts(size_), offsets(size_);
  for (int r = 0; r < size_; ++r) {
    offsets[r] = static_cast<int>(n * r / size_ * block);
    counts[r] = static_cast<int>(n * (r + 1) / size_ * block) - offsets[r];
  }
  MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, values.data(), counts.data(), offsets.data(), MPI_DOUBLE,
                 MPI_COMM_WORLD);
}

void MpiWork::allreduce_sum(double* values, std::size_t count) {
  if (!active() || count == 0) return;
  MPI_Allreduce(MPI_IN_PLACE, values, static_cast<int>(count), MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
}

bool MpiWork::any(bool flag) {
  if (!active()) return flag;
  int local = flag, global = 0;
  MPI_Allreduce(&local, &global, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
  return global != 0;
}

void MpiWork::barrier() {
  if (!active()) return;
  MPI_Request request;
  MPI_Ibarrier(MPI_COMM_WORLD, &request);
  wait(request);
}

}  // namespace swarmfit::app
