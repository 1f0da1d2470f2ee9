// RV series and transit-time tables, read from text files through a declarative description
// (a [rv NAME] or [transits NAME] section of a configuration file; the keys are listed in
// source_keys() and documented in the README). Times are BJD_TDB days, RVs m/s, errors > 0.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "swarmfit/observations/text_table.hpp"

namespace swarmfit {

// One "key = value" line of a configuration section, with where it came from ("FILE:LINE").
struct ConfigEntry {
  std::string key;
  std::string value;
  std::string origin;
};

enum class SourceKind { kRv, kTransits };

// How one data file is read.
struct SourceSpec {
  SourceKind kind = SourceKind::kRv;
  std::string name;    // the section name: the instrument (RV) or a label (transits)
  std::string origin;  // where the section starts, for messages
  std::string file;    // resolved path
  TableFormat format;
  std::vector<std::string> columns;                     // one role per column ("-" = ignored)
  double time_offset = 0.0;                             // added to every time (e.g. 2450000 for BJD-2450000)
  double rv_scale = 1.0;                                // to m/s (1000 for km/s)
  double oc_scale = 1.0;                                // O-C and its error to days (1/1440 for minutes)
  std::string instrument;                               // RV: one instrument for the whole file
  std::map<std::string, std::string> instrument_names;  // RV: instrument column value -> name
  std::string planet;                                   // transits: one planet for the whole file
  std::map<std::string, std::string> planet_names;      // transits: planet column value -> name
  bool allow_duplicates = false;                        // transits: repeated (planet, epoch) pairs
  double period = 0.0;  // transits without an epoch column: epochs from this period (days)
};

// The value of a configuration entry as a finite number; throws InputError naming origin and key.
double parse_config_number(const ConfigEntry& entry);

// Every key a source section accepts, with a one-line meaning (for --help and the README).
const std::vector<std::pair<std::string, std::string>>& source_keys(SourceKind kind);

// Builds a SourceSpec from the entries of one section; relative files are resolved against
// base_dir. Throws InputError naming the entry's origin and key.
SourceSpec parse_source_spec(SourceKind kind, const std::string& name, const std::string& origin,
                             const std::vector<ConfigEntry>& entries, const std::string& base_dir);

struct RvObservation {
  double time;   // BJD_TDB
  double rv;     // m/s
  double error;  // m/s
  int instrument;
  std::string origin;  // FILE:LINE
};

struct TransitObservation {
  int planet;    // index into Dataset::planets
  long epoch;    // transit number as the file numbers it
  double time;   // BJD_TDB
  double error;  // days
  std::string origin;
};

struct Dataset {
  std::vector<std::string> instruments;      // RV instruments, in order of first appearance
  std::vector<RvObservation> rv;             // sorted by time
  std::vector<std::string> planets;          // planets with transit times, in order of first appearance
  std::vector<TransitObservation> transits;  // sorted by planet, then epoch, then time
  std::vector<std::string> notes;            // what was done silently (sorting), for the user

  // Reads one source and appends it (validating every row). Throws InputError.
  void add(const SourceSpec& spec);
  // Checks what needs the whole dataset (duplicates, planets without transits) and sorts.
  void finish();

  int instrument_index(const std::string& name) const;
  int planet_index(const std::string& name) const;
  double first_time() const;
  double last_time() const;

 private:
  std::vector<SourceSpec> sources_;
};

// A straight-line ephemeris t = t0 + period * epoch fitted by least squares (weighted by 1/error^2)
// to one planet's transit times; needs two distinct epochs.
struct LinearEphemeris {
  double t0 = 0.0;
  double period = 0.0;
};
LinearEphemeris fit_linear_ephemeris(const Dataset& data, int planet);

}  // namespace swarmfit
