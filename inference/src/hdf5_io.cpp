#include "swarmfit/inference/hdf5_io.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <stdexcept>
#include <thread>

namespace swarmfit::h5 {

void check(herr_t status, const std::string& what) {
  if (status < 0) throw std::runtime_error("HDF5 failed: " + what);
}
hid_t checked(hid_t id, const std::string& what) {
  if (id < 0) throw std::runtime_error("HDF5 failed: " + what);
  return id;
}

Handle::~Handle() {
  switch (H5Iget_type(id_)) {
    case H5I_FILE: H5Fclose(id_); break;
    case H5I_GROUP: H5Gclose(id_); break;
    case H5I_DATASET: H5Dclose(id_); break;
    case H5I_DATASPACE: H5Sclose(id_); break;
    case H5I_DATATYPE: H5Tclose(id_); break;
    case H5I_ATTR: H5Aclose(id_); break;
    case H5I_GENPROP_LST: H5Pclose(id_); break;
    default: break;
  }
}

namespace {

void write_typed(hid_t where, const std::string& name, hid_t type, const std::vector<hsize_t>& dims, const void* data) {
  Handle space(H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr), name);
  Handle set(H5Dcreate2(where, name.c_str(), type, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), name);
  bool empty = false;
  for (hsize_t d : dims) empty = empty || d == 0;
  if (!empty) check(H5Dwrite(set, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data), name);
}

hid_t string_type() {
  const hid_t type = H5Tcopy(H5T_C_S1);
  H5Tset_size(type, H5T_VARIABLE);
  H5Tset_cset(type, H5T_CSET_UTF8);
  return type;
}

void attribute_typed(hid_t where, const std::string& name, hid_t type, hid_t space, const void* data) {
  if (H5Aexists(where, name.c_str()) > 0) H5Adelete(where, name.c_str());
  Handle attr(H5Acreate2(where, name.c_str(), type, space, H5P_DEFAULT, H5P_DEFAULT), name);
  check(H5Awrite(attr, type, data), name);
}

template <typename T>
std::vector<T> read_typed(hid_t where, const std::string& name, hid_t type, std::vector<hsize_t>* dims) {
  const std::vector<hsize_t> shape = dataset_dims(where, name);
  Handle set(H5Dopen2(where, name.c_str(), H5P_DEFAULT), name);
  hsize_t count = 1;
  for (hsize_t d : shape) {
    // A damaged file may declare any shape: refuse what no run file holds (2^34 values, 128 GB).
    if (d > 0 && count > (hsize_t{1} << 34) / d)
      throw std::runtime_error("dataset '" + name + "' is implausibly large");
    count *= d;
  }
  std::vector<T> out(count);
  if (count > 0) check(H5Dread(set, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, out.data()), name);
  if (dims) *dims = shape;
  return out;
}

std::vector<std::string> read_vlen_strings(hid_t object, hid_t space, bool attribute, const std::string& name) {
  const hssize_t count = H5Sget_simple_extent_npoints(space);
  std::vector<char*> raw(count > 0 ? count : 0);
  Handle type(string_type());
  if (count > 0) {
    const herr_t status = attribute ? H5Aread(object, type, raw.data())
                                    : H5Dread(object, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, raw.data());
    if (status < 0) {  // a read that failed part-way has allocated some strings (found by fuzz_run_file)
      for (char* s : raw) H5free_memory(s);
      check(status, name);
    }
  }
  std::vector<std::string> out;
  for (char* s : raw) {
    out.emplace_back(s ? s : "");
    H5free_memory(s);
  }
  return out;
}

}  // namespace

void write(hid_t where, const std::string& name, const std::vector<hsize_t>& dims, const double* data) {
  write_typed(where, name, H5T_NATIVE_DOUBLE, dims, data);
}
void write(hid_t where, const std::string& name, const std::vector<hsize_t>& dims, const int* data) {
  write_typed(where, name, H5T_NATIVE_INT, dims, data);
}
void write(hid_t where, const std::string& name, const std::vector<hsize_t>& dims, const long* data) {
  write_typed(where, name, H5T_NATIVE_LONG, dims, data);
}
void write_strings(hid_t where, const std::string& name, const std::vector<std::string>& values) {
  std::vector<const char*> raw;
  for (const auto& v : values) raw.push_back(v.c_str());
  Handle type(string_type());
  write_typed(where, name, type, {static_cast<hsize_t>(values.size())}, raw.data());
}

void attribute(hid_t where, const std::string& name, const std::string& value) {
  Handle type(string_type());
  Handle space(H5Screate(H5S_SCALAR));
  const char* raw = value.c_str();
  attribute_typed(where, name, type, space, &raw);
}
void attribute(hid_t where, const std::string& name, double value) {
  Handle space(H5Screate(H5S_SCALAR));
  attribute_typed(where, name, H5T_NATIVE_DOUBLE, space, &value);
}
void attribute(hid_t where, const std::string& name, long value) {
  Handle space(H5Screate(H5S_SCALAR));
  attribute_typed(where, name, H5T_NATIVE_LONG, space, &value);
}
void attribute(hid_t where, const std::string& name, const std::vector<double>& values) {
  const hsize_t n = values.size();
  Handle space(H5Screate_simple(1, &n, nullptr));
  attribute_typed(where, name, H5T_NATIVE_DOUBLE, space, values.data());
}
void attribute(hid_t where, const std::string& name, const std::vector<std::string>& values) {
  std::vector<const char*> raw;
  for (const auto& v : values) raw.push_back(v.c_str());
  const hsize_t n = values.size();
  Handle type(string_type());
  Handle space(H5Screate_simple(1, &n, nullptr));
  attribute_typed(where, name, type, space, raw.data());
}

bool exists(hid_t where, const std::string& name) { return H5Lexists(where, name.c_str(), H5P_DEFAULT) > 0; }

std::vector<hsize_t> dataset_dims(hid_t where, const std::string& name) {
  if (!exists(where, name)) throw std::runtime_error("missing dataset '" + name + "'");
  Handle set(H5Dopen2(where, name.c_str(), H5P_DEFAULT), name);
  Handle space(H5Dget_space(set), name);
  const int rank = H5Sget_simple_extent_ndims(space);
  std::vector<hsize_t> shape(rank > 0 ? rank : 0);
  if (rank > 0) H5Sget_simple_extent_dims(space, shape.data(), nullptr);
  return shape;
}

std::vector<double> read_doubles(hid_t where, const std::string& name, std::vector<hsize_t>* dims) {
  return read_typed<double>(where, name, H5T_NATIVE_DOUBLE, dims);
}
std::vector<long> read_longs(hid_t where, const std::string& name, std::vector<hsize_t>* dims) {
  return read_typed<long>(where, name, H5T_NATIVE_LONG, dims);
}
std::vector<int> read_ints(hid_t where, const std::string& name, std::vector<hsize_t>* dims) {
  return read_typed<int>(where, name, H5T_NATIVE_INT, dims);
}
std::vector<std::string> read_strings(hid_t where, const std::string& name) {
  if (!exists(where, name)) throw std::runtime_error("missing dataset '" + name + "'");
  Handle set(H5Dopen2(where, name.c_str(), H5P_DEFAULT), name);
  Handle space(H5Dget_space(set), name);
  return read_vlen_strings(set, space, false, name);
}

namespace {
hid_t open_attribute(hid_t where, const std::string& name) {
  if (H5Aexists(where, name.c_str()) <= 0) throw std::runtime_error("missing attribute '" + name + "'");
  return H5Aopen(where, name.c_str(), H5P_DEFAULT);
}
}  // namespace

std::string read_string_attribute(hid_t where, const std::string& name) {
  Handle attr(open_attribute(where, name), name);
  Handle space(H5Aget_space(attr), name);
  const std::vector<std::string> v = read_vlen_strings(attr, space, true, name);
  if (v.size() != 1) throw std::runtime_error("attribute '" + name + "' is not one string");
  return v[0];
}
double read_double_attribute(hid_t where, const std::string& name) {
  const std::vector<double> v = read_double_attributes(where, name);
  if (v.size() != 1) throw std::runtime_error("attribute '" + name + "' is not one number");
  return v[0];
}
long read_long_attribute(hid_t where, const std::string& name) {
  Handle attr(open_attribute(where, name), name);
  // One value, or HDF5 writes them all into `value` (a damaged file overflowing the stack; found
  // by tests/fuzz/fuzz_run_file).
  Handle space(H5Aget_space(attr), name);
  if (H5Sget_simple_extent_npoints(space) != 1) throw std::runtime_error("attribute '" + name + "' is not one integer");
  // Stored as an integer: HDF5 would convert 1.5 to 1 without a word.
  Handle type(H5Aget_type(attr), name);
  if (H5Tget_class(type) != H5T_INTEGER) throw std::runtime_error("attribute '" + name + "' is not one integer");
  long value = 0;
  check(H5Aread(attr, H5T_NATIVE_LONG, &value), name);
  return value;
}
std::vector<double> read_double_attributes(hid_t where, const std::string& name) {
  Handle attr(open_attribute(where, name), name);
  Handle space(H5Aget_space(attr), name);
  std::vector<double> out(H5Sget_simple_extent_npoints(space));
  if (!out.empty()) check(H5Aread(attr, H5T_NATIVE_DOUBLE, out.data()), name);
  return out;
}
std::vector<std::string> read_string_attributes(hid_t where, const std::string& name) {
  Handle attr(open_attribute(where, name), name);
  Handle space(H5Aget_space(attr), name);
  return read_vlen_strings(attr, space, true, name);
}

namespace {
// The partial files of this process, for remove_partials_on_signals(): fixed storage that a signal
// handler can read without allocating (only unlink, async-signal-safe, is called there).
constexpr int kMaxPartials = 64;
constexpr std::size_t kMaxPartialPath = 4096;
char g_partials[kMaxPartials][kMaxPartialPath];
volatile std::sig_atomic_t g_partial_used[kMaxPartials];
std::mutex g_partials_mutex;

int register_partial(const std::string& path) {
  if (path.size() >= kMaxPartialPath) return -1;
  const std::lock_guard<std::mutex> lock(g_partials_mutex);
  for (int k = 0; k < kMaxPartials; ++k)
    if (!g_partial_used[k]) {
      std::memcpy(g_partials[k], path.c_str(), path.size() + 1);
      g_partial_used[k] = 1;
      return k;
    }
  return -1;
}
void unregister_partial(int slot) {
  if (slot < 0) return;
  const std::lock_guard<std::mutex> lock(g_partials_mutex);
  g_partial_used[slot] = 0;
}

extern "C" void remove_partials_and_reraise(int signal) {
  for (int k = 0; k < kMaxPartials; ++k)
    if (g_partial_used[k]) unlink(g_partials[k]);
  std::signal(signal, SIG_DFL);
  std::raise(signal);
}
}  // namespace

void remove_partials_on_signals() {
  // A signal the process was started ignoring (nohup's SIGHUP, a background job's SIGINT) stays
  // ignored.
  for (int signal : {SIGINT, SIGTERM, SIGHUP}) {
    struct sigaction current {};
    if (sigaction(signal, nullptr, &current) == 0 && current.sa_handler == SIG_IGN) continue;
    std::signal(signal, remove_partials_and_reraise);
  }
}

AtomicFile::AtomicFile(std::string path) : path_(std::move(path)) {
  partial_ = path_ + ".partial." + std::to_string(getpid());
  slot_ = register_partial(partial_);
}
AtomicFile::~AtomicFile() {
  if (!committed_) std::remove(partial_.c_str());
  unregister_partial(slot_);
}
void AtomicFile::commit() {
  const int fd = open(partial_.c_str(), O_RDONLY);
  if (fd < 0 || fsync(fd) != 0) {
    if (fd >= 0) close(fd);
    throw std::runtime_error("cannot flush " + partial_ + " to disk");
  }
  close(fd);
  if (std::rename(partial_.c_str(), path_.c_str()) != 0)
    throw std::runtime_error("cannot rename " + partial_ + " to " + path_);
  committed_ = true;
  unregister_partial(slot_);
  slot_ = -1;
  const std::size_t slash = path_.rfind('/');
  const std::string folder = slash == std::string::npos ? "." : path_.substr(0, slash + 1);
  const int dir = open(folder.c_str(), O_RDONLY | O_DIRECTORY);
  if (dir >= 0) {
    fsync(dir);
    close(dir);
  }
}

namespace {
// NAME.partial.PID of a process that is gone.
bool stale_partial(const std::string& name, const std::string& prefix) {
  if (name.rfind(prefix, 0) != 0) return false;
  const std::size_t at = name.rfind(".partial.");
  if (at == std::string::npos) return false;
  const std::string pid = name.substr(at + 9);
  if (pid.empty() || pid.size() > 9 || pid.find_first_not_of("0123456789") != std::string::npos) return false;
  return kill(static_cast<pid_t>(std::stol(pid)), 0) != 0 && errno == ESRCH;
}
}  // namespace

std::string run_isolated(const std::function<void()>& work, int seconds) {
#if defined(SWARMFIT_FUZZING)
  (void)work;
  (void)seconds;
  return "";
#endif
  std::fflush(nullptr);  // the child must not write the parent's buffered output a second time
  const pid_t pid = fork();
  if (pid < 0) return "";
  if (pid == 0) {
    // The child: the parent's signal handlers (removing its partial files) are not its business;
    // a terminal's Ctrl-C reaches the whole process group. _exit: no atexit handlers, no flushes
    // of files the parent has open.
    for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGALRM}) std::signal(sig, SIG_DFL);
    alarm(static_cast<unsigned>(seconds));
    try {
      work();
    } catch (...) {
    }
    _exit(0);
  }
  int status = 0;
  // Polling keeps the parent free of SIGALRM (it may use alarms of its own); the child's alarm
  // ends it, and the parent's deadline is a second later.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds + 1);
  for (;;) {
    const pid_t r = waitpid(pid, &status, WNOHANG);
    if (r == pid) break;
    if (r < 0 && errno != EINTR) return "";
    if (std::chrono::steady_clock::now() > deadline) {
      kill(pid, SIGKILL);
      while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
      return "did not finish in " + std::to_string(seconds) + " s";
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  if (WIFSIGNALED(status)) {
    if (WTERMSIG(status) == SIGALRM) return "did not finish in " + std::to_string(seconds) + " s";
    return "crashed (signal " + std::to_string(WTERMSIG(status)) + ")";
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) != 0)  // a sanitizer's report ends the child this way
    return "crashed (exit status " + std::to_string(WEXITSTATUS(status)) + ")";
  return "";
}

void remove_stale_partials(const std::string& path) {
  const std::filesystem::path p(path);
  const std::filesystem::path folder = p.has_parent_path() ? p.parent_path() : std::filesystem::path(".");
  const std::string prefix = p.filename().string() + ".partial.";
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(folder, ec))
    if (stale_partial(entry.path().filename().string(), prefix)) std::filesystem::remove(entry.path(), ec);
}

void remove_stale_partials_under(const std::string& folder) {
  std::error_code ec;
  std::vector<std::filesystem::path> stale;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(folder, ec))
    if (entry.is_regular_file(ec) && stale_partial(entry.path().filename().string(), "")) stale.push_back(entry.path());
  for (const auto& path : stale) std::filesystem::remove(path, ec);
}

}  // namespace swarmfit::h5
