// The keys of `swarmfit integrate` and the integration they ask for, read and checked in one place
// for both faces: the command (integrate_command.cpp) and the Python package's
// swarmfit.integrate (apps/python/bindings.cpp), so that bad input gets the same one-line message
// from either.
#pragma once

#include <boost/program_options.hpp>
#include <cmath>
#include <map>
#include <string>
#include <vector>

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

// A command's keys: the configuration file named by --config (if any), then the command line's
// key=value overrides, stored into `vm` (InputError naming file, line and key); `text` is the
// file's text followed by the overrides, as a run records what it was asked.
struct LoadedKeys {
  KeyOrigins origins;
  boost::program_options::variables_map vm;
  std::string text;
};
LoadedKeys load_keys(const boost::program_options::variables_map& args, const std::vector<std::string>& overrides,
                     const boost::program_options::options_description& keys);

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

// A status of the command's own, after the run (written to its outputs like the engine's codes):
// the system reached the destination time, but its relative energy error exceeds
// energy_tolerance, so its states are not to be trusted (a step too large, a close encounter).
constexpr int kStatusEnergyError = 32;
// status_name() with the command's own code.
const char* integrate_status_name(int code);

// The work a run will take, estimated before it starts (system-steps: steps per system, summed):
// fixed-step schemes take (destination - start) / time_step steps; adaptive ones at least
// span / max_time_step, and about span / (0.01 tau) where tau = min over pairs of
// sqrt(r^3 / (G (m_i + m_j))) is the system's shortest dynamical time at the start. Past
// work_limit the run is refused, naming the key (or the two bodies) that make it so. With
// max_steps = 0 an adaptive run gets an automatic budget per system: 1000 times its estimate, at
// least 1e6 steps (status step_budget where it is spent), so a step that collapses later (an
// encounter) cannot run forever.
struct WorkPlan {
  double system_steps = 0;         // the estimate, summed over systems
  double automatic_max_steps = 0;  // 0: none set
};
WorkPlan plan_work(const Ensemble& e, RunRequest& request, double work_limit, const KeyOrigins& o);

// Memory the ensemble takes (bytes, an upper estimate) against the machine's: refused naming
// `key` past 80% of the physical memory, before anything is allocated.
void check_memory(double systems, double bodies, const std::string& key, const KeyOrigins& o);

}  // namespace swarmfit::app
