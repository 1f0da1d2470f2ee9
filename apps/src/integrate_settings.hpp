// The keys of `swarmfit integrate` and the integration they ask for, read and checked in one place
// for both faces: the command (integrate_command.cpp) and the Python package's
// swarmfit.integrate (apps/python/bindings.cpp), so that bad input gets the same one-line message
// from either.
#pragma once

#include <boost/program_options.hpp>
#include <cmath>
#include <map>
#include <string>

#include "errors.hpp"
#include "swarmfit/integrators/backend.hpp"
#include "swarmfit/observations/config_file.hpp"

namespace swarmfit::app {

boost::program_options::options_description integrate_keys();

// The settings as given, with where each came from ("FILE:LINE" or "command line"), for messages.
struct KeyOrigins {
  std::map<std::string, Setting> settings;
  std::string of(const std::string& key) const {
    auto it = settings.find(key);
    return it == settings.end() ? "default" : it->second.origin;
  }
};

[[noreturn]] inline void bad_value(const KeyOrigins& o, const std::string& key, const std::string& why) {
  throw InputError(o.of(key) + ": key '" + key + "': " + why);
}

template <class T>
T positive(const boost::program_options::variables_map& vm, const KeyOrigins& o, const std::string& key,
           bool allow_zero = false) {
  const T v = vm[key].template as<T>();
  if (!std::isfinite(static_cast<double>(v))) bad_value(o, key, "must be finite");
  if (allow_zero ? v < 0 : v <= 0) bad_value(o, key, allow_zero ? "must not be negative" : "must be positive");
  return v;
}

struct IntegrateSettings {
  RunRequest request;  // integrator, step, monitors, threads, CUDA layout, reproducible, destination_time
  std::string backend;
};

// The integrator, step, monitor, destination and backend keys, checked (InputError naming the
// key and where it was set).
IntegrateSettings read_integrate_settings(const boost::program_options::variables_map& vm, const KeyOrigins& o);

// Initial conditions, checked before any work: finite, no negative mass, no two bodies of a system
// at one place (InputError naming `origin`, the system and the body), and every system starting
// before destination_time.
void check_initial_conditions(const Ensemble& e, const std::string& origin, double destination_time,
                              const KeyOrigins& o);

}  // namespace swarmfit::app
