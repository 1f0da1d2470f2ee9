// The command lines of the swarmfit commands: options plus positional key=value overrides. The
// configuration files themselves are read by swarmfit/observations/config_file.hpp.
#pragma once

#include <boost/program_options.hpp>
#include <string>
#include <vector>

#include "swarmfit/observations/config_file.hpp"

namespace swarmfit::app {

// Parses a command line of `options` plus positional "key=value" overrides (appended to
// `overrides`; may be null when the command takes none) into `vm`. Throws InputError naming the
// problem.
void parse_command_line(int argc, char** argv, const boost::program_options::options_description& options,
                        std::vector<std::string>* overrides, boost::program_options::variables_map& vm);
// The same for a command whose one positional argument (a file) is the option `positional`.
void parse_command_line_with_file(int argc, char** argv, const boost::program_options::options_description& options,
                                  const char* positional, boost::program_options::variables_map& vm);

// SIGINT and SIGTERM turned into a request to stop, for the long commands (fit, catalog): they
// save their state and exit 128 + the signal. stop_signal() is the signal caught, 0 while none.
// A configuration's keys for --help as they are given: key=VALUE (default), then the description.
// (boost prints them as --options, which the commands do not take: `--walkers 32` was refused
// though the help listed it.)
std::string key_help(const std::string& title, const boost::program_options::options_description& keys);

void catch_stop_signals();

// An output path checked before any work (InputError naming `what`, e.g. "--csv"): not empty, not a
// folder, in a folder that exists.
void check_output_path(const std::string& path, const std::string& what);
int stop_signal();

}  // namespace swarmfit::app
