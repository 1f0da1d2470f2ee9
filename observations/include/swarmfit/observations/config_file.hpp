// Configuration files: Swarm-NG-style "key = value" files plus key=value overrides, and files with
// [type name] sections and include = FILE. Boost.Program_options holds the definitions of flat keys
// (types, defaults, help text); our own line reader keeps file and line numbers so that every
// error names them. The data sections ([rv NAME], [transits NAME]) are read here too, so the data
// of a configuration load without a model.
#pragma once

#include <boost/program_options.hpp>
#include <map>
#include <string>
#include <vector>

#include "swarmfit/observations/dataset.hpp"

namespace swarmfit {

struct Setting {
  std::string value;
  std::string origin;  // "FILE:LINE" or "command line"
};

// Parses `key = value` lines ('#' and ';' start comments; blank lines ignored). Throws
// InputError("FILE:LINE: ...") for malformed lines or unknown keys (with the closest key).
std::map<std::string, Setting> read_config_file(const std::string& path,
                                                const boost::program_options::options_description& known);
// Applies "key=value" overrides on top of `settings`.
void apply_overrides(std::map<std::string, Setting>& settings, const std::vector<std::string>& overrides,
                     const boost::program_options::options_description& known);
// Converts every setting through Boost.Program_options into `vm` (defaults for the rest).
// Conversion failures name the origin and key.
void store_settings(const std::map<std::string, Setting>& settings,
                    const boost::program_options::options_description& known,
                    boost::program_options::variables_map& vm);

// The closest known key by edit distance, or "" if nothing is close.
std::string closest_key(const std::string& key, const boost::program_options::options_description& known);

// A configuration with sections: global "key = value" lines first, then sections opened by
// "[type name]" lines (e.g. [planet b], [rv HARPS-N], [transits b]). "include = FILE" (relative to
// the including file) reads another file in its place. Keys inside sections are checked by
// whoever interprets the section.
struct ConfigSection {
  std::string type;
  std::string name;
  std::string origin;  // FILE:LINE of the header
  std::string base_dir;
  std::vector<ConfigEntry> entries;
};
struct SectionedConfig {
  std::vector<ConfigEntry> globals;
  std::vector<ConfigSection> sections;
  std::string text;  // every file read, concatenated (stored with results)
};
SectionedConfig read_sectioned_config(const std::string& path);

// [rv NAME] and [transits NAME] sections.
bool is_data_section(const ConfigSection& section);
// Reads the file a data section describes into `data` (every row validated). Throws InputError.
void add_data_section(const ConfigSection& section, Dataset& data);
// The data of a configuration file alone: every data section read and checked, the dataset
// finished. Global keys and the other sections are left to whoever interprets them (a model).
Dataset read_config_data(const std::string& path);

}  // namespace swarmfit
