// What the libFuzzer targets of tests/fuzz share (issue 37, "hostile input"): a private temporary
// folder per process (the readers take paths, so each input is written to a file first) and the
// contract every reader must keep on any input: return, or throw swarmfit::InputError with a
// message. Anything else (another exception type, an empty message) is reported and abort()s, so
// libFuzzer saves the input as a crash; ASan and UBSan reports end the process themselves.
#pragma once

#include <cxxabi.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <fstream>
#include <string>
#include <typeinfo>

#include "swarmfit/observations/input_error.hpp"

namespace swarmfit::fuzz {

// A folder of this process's own, removed at exit; /dev/shm where there is one (no disk writes).
inline const std::string& temporary_folder() {
  static const std::string folder = [] {
    const char* base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
    std::string pattern = std::string(base) + "/swarmfit_fuzz_XXXXXX";
    if (!mkdtemp(pattern.data())) {
      std::perror("mkdtemp");
      std::abort();
    }
    static std::string removal;
    removal = pattern;
    std::atexit([] {
      const std::string command = "rm -rf '" + removal + "'";
      if (std::system(command.c_str()) != 0) std::fprintf(stderr, "could not remove %s\n", removal.c_str());
    });
    return pattern;
  }();
  return folder;
}

// Writes `size` bytes to NAME in the temporary folder and returns its path.
inline std::string write_file(const std::string& name, const void* data, std::size_t size) {
  const std::string path = temporary_folder() + "/" + name;
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(static_cast<const char*>(data), static_cast<std::streamsize>(size));
  out.close();
  if (!out) {
    std::fprintf(stderr, "cannot write %s\n", path.c_str());
    std::abort();
  }
  return path;
}
inline std::string write_file(const std::string& name, const std::string& text) {
  return write_file(name, text.data(), text.size());
}

inline std::string type_name(const std::exception& e) {
  int status = 0;
  char* demangled = abi::__cxa_demangle(typeid(e).name(), nullptr, nullptr, &status);
  std::string name = status == 0 && demangled ? demangled : typeid(e).name();
  std::free(demangled);
  return name;
}

[[noreturn]] inline void finding(const char* target, const std::string& what) {
  std::fprintf(stderr, "\n==== swarmfit fuzz finding (%s): %s\n", target, what.c_str());
  std::fflush(stderr);
  std::abort();
}

// Runs `read`; InputError with a message is the documented refusal. `also_accepted` names another
// exception type a reader documents (read_run: exactly std::runtime_error), or is null.
template <class Read>
void expect_input_error(const char* target, Read&& read, const std::type_info* also_accepted = nullptr) {
  try {
    read();
  } catch (const InputError& e) {
    if (std::strlen(e.what()) == 0) finding(target, "InputError without a message");
  } catch (const std::exception& e) {
    if (also_accepted && typeid(e) == *also_accepted) {
      if (std::strlen(e.what()) == 0) finding(target, type_name(e) + " without a message");
      return;
    }
    finding(target, "exception " + type_name(e) + ": " + e.what());
  } catch (...) {
    finding(target, "an exception of unknown type");
  }
}

}  // namespace swarmfit::fuzz
