// What the simulation commands (`swarmfit nbody`, `swarmfit pm`) share: their flags and help, the
// output folder's checks before any work, snapshot names, the log kept up to a resumed snapshot,
// and the initial-conditions CSV of mass,x,y,z,vx,vy,vz.
#pragma once

#include <array>
#include <boost/program_options.hpp>
#include <string>
#include <vector>

#include "integrate_settings.hpp"
#include "swarmfit/inference/hdf5_io.hpp"

namespace swarmfit::app {

// Parses --config, --resume, -q and the key=value overrides; prints the help and returns false
// for --help.
bool parse_run_flags(int argc, char** argv, const std::string& command, const std::string& about,
                     const boost::program_options::options_description& keys,
                     boost::program_options::variables_map& args, std::vector<std::string>& overrides);

// The output folder before any work: a resumed run needs its state file; a new one needs a
// missing or empty folder (or overwrite) whose parent exists.
void check_output_folder(const KeyOrigins& o, const std::string& output, const std::string& state_path, bool resume,
                         bool overwrite);

std::string snapshot_name(long k);  // snapshot_NNNNNN.h5

// A state file opened for reading with libhdf5's own messages off; std::runtime_error if it is not
// HDF5 (the callers name the file and say what it should have been).
h5::Handle open_state_file(const std::string& path);

// The log's header and its rows up to `snapshot` (a resumed run rewrites the rest).
std::string log_kept_to(const std::string& path, const std::string& header, long snapshot);

// An initial-conditions CSV: rows of mass,x,y,z,vx,vy,vz (a header line and # comments allowed),
// finite, masses >= 0 (> 0 unless `massless_allowed`). Errors name the file and line.
std::vector<std::array<double, 7>> read_particle_csv(const std::string& path, bool massless_allowed);

}  // namespace swarmfit::app
