// Small helpers over the HDF5 C API (datasets and attributes of numbers and strings) and a
// file that appears at its path only when complete: written under a temporary name, flushed
// to disk (fsync) and renamed (rename is atomic on POSIX), so a reader never sees it half-written
// and a killed writer leaves the previous version intact.
#pragma once

#include <hdf5.h>

#include <functional>
#include <string>
#include <vector>

namespace swarmfit::h5 {

void check(herr_t status, const std::string& what);
hid_t checked(hid_t id, const std::string& what);

// Closes an HDF5 object when it goes out of scope.
class Handle {
 public:
  explicit Handle(hid_t id, const std::string& what = "object") : id_(checked(id, what)) {}
  ~Handle();
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  operator hid_t() const { return id_; }

 private:
  hid_t id_;
};

void write(hid_t where, const std::string& name, const std::vector<hsize_t>& dims, const double* data);
void write(hid_t where, const std::string& name, const std::vector<hsize_t>& dims, const int* data);
void write(hid_t where, const std::string& name, const std::vector<hsize_t>& dims, const long* data);
void write_strings(hid_t where, const std::string& name, const std::vector<std::string>& values);
void attribute(hid_t where, const std::string& name, const std::string& value);
void attribute(hid_t where, const std::string& name, double value);
void attribute(hid_t where, const std::string& name, long value);
void attribute(hid_t where, const std::string& name, const std::vector<double>& values);
void attribute(hid_t where, const std::string& name, const std::vector<std::string>& values);

// Readers throw std::runtime_error naming the object when it is missing or of another shape.
// A dataset's shape, without reading it (check it before a read allocates what a damaged file declares).
std::vector<hsize_t> dataset_dims(hid_t where, const std::string& name);
std::vector<double> read_doubles(hid_t where, const std::string& name, std::vector<hsize_t>* dims = nullptr);
std::vector<long> read_longs(hid_t where, const std::string& name, std::vector<hsize_t>* dims = nullptr);
std::vector<int> read_ints(hid_t where, const std::string& name, std::vector<hsize_t>* dims = nullptr);
std::vector<std::string> read_strings(hid_t where, const std::string& name);
std::string read_string_attribute(hid_t where, const std::string& name);
double read_double_attribute(hid_t where, const std::string& name);
long read_long_attribute(hid_t where, const std::string& name);
std::vector<double> read_double_attributes(hid_t where, const std::string& name);
std::vector<std::string> read_string_attributes(hid_t where, const std::string& name);
bool exists(hid_t where, const std::string& name);

// Runs `work` in a forked child process and waits at most `seconds` for it. libhdf5 (Debian 12:
// 1.10.8) can crash or loop forever on a damaged file (tests/fuzz/README.md: the global heap of
// variable-length strings), which no check of ours can see before the library reads it; readers
// of files a user hands in first let a child read the risky parts. Returns "" when the child
// finished, whether `work` threw or not (the caller's own read then says what is wrong), or how
// the library failed: "crashed (signal N)", "did not finish in S s". Returns "" without a child
// where fork fails.
std::string run_isolated(const std::function<void()>& work, int seconds);

class AtomicFile {
 public:
  explicit AtomicFile(std::string path);
  ~AtomicFile();  // removes the partial file unless committed
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;
  const std::string& partial_path() const { return partial_; }
  // fsync the partial file, rename it to the path, fsync the folder.
  void commit();

 private:
  std::string path_, partial_;
  bool committed_ = false;
  int slot_ = -1;  // in the registry remove_partials_on_signals() reads
};

// SIGINT, SIGTERM and SIGHUP remove the partial files of the AtomicFiles alive at the time, then
// end the process as the signal would: a command killed mid-write leaves nothing behind (for
// commands that do not save their state on a signal, as fit does).
void remove_partials_on_signals();

// Partial files (PATH.partial.PID) that writers killed before their commit left behind: removed
// where that process is gone. Every partial file of `path`; or every one under `folder`, at any
// depth. Only for a folder no other machine writes into at the time (the PID is this machine's).
void remove_stale_partials(const std::string& path);
void remove_stale_partials_under(const std::string& folder);

}  // namespace swarmfit::h5
