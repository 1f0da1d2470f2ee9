#include "run_folder.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "config.hpp"
#include "errors.hpp"
#include "swarmfit/observations/text_table.hpp"

namespace po = boost::program_options;

namespace swarmfit::app {

bool parse_run_flags(int argc, char** argv, const std::string& command, const std::string& about,
                     const po::options_description& keys, po::variables_map& args,
                     std::vector<std::string>& overrides) {
  po::options_description flags("swarmfit " + command + " options");
  flags.add_options()("help,h", "list every key and its meaning")("config,c", po::value<std::string>(),
                                                                  "configuration file")(
      "resume", "continue the run in the output folder from its saved state")("quiet,q", "no progress line");
  parse_command_line(argc, argv, flags, &overrides, args);
  if (!args.count("help")) return true;
  std::cout << "usage: swarmfit " << command << " --config FILE [--resume] [key=value ...]\n"
            << about << "\n\n"
            << flags << "\n"
            << key_help("Keys", keys);
  return false;
}

void check_output_folder(const KeyOrigins& o, const std::string& output, const std::string& state_path, bool resume,
                         bool overwrite) {
  namespace fs = std::filesystem;
  if (output.empty()) bad_value(o, "output", "must name a folder");
  if (resume) {
    if (!fs::exists(state_path)) throw InputError(output + ": no state.h5 to resume from (run without --resume)");
  } else if (fs::exists(output)) {
    if (!fs::is_directory(output)) bad_value(o, "output", "'" + output + "' is a file, not a folder");
    if (!overwrite && !fs::is_empty(output))
      bad_value(o, "output", "'" + output + "' exists (overwrite=true replaces it, --resume continues it)");
  } else {
    const fs::path parent = fs::path(output).parent_path();
    if (!parent.empty() && !fs::is_directory(parent))
      bad_value(o, "output", "the folder '" + parent.string() + "' does not exist");
  }
}

std::string snapshot_name(long k) {
  char name[48];
  std::snprintf(name, sizeof name, "snapshot_%06ld.h5", k);
  return name;
}

h5::Handle open_state_file(const std::string& path) {
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  const hid_t id = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  if (id < 0) throw std::runtime_error("cannot open as HDF5");
  return h5::Handle(id);
}

std::string log_kept_to(const std::string& path, const std::string& header, long snapshot) {
  std::string log = header;
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  while (std::getline(in, line)) {
    if (std::stol(line.substr(0, line.find(','))) > snapshot) break;
    log += line + "\n";
  }
  return log;
}

std::vector<std::array<double, 7>> read_particle_csv(const std::string& path, bool massless_allowed) {
  std::ifstream in;
  open_text_file(in, path, "an initial-conditions file");
  std::vector<std::array<double, 7>> rows;
  std::string line;
  long number = 0;
  auto where = [&] { return path + ":" + std::to_string(number) + ": "; };
  while (std::getline(in, line)) {
    ++number;
    refuse_nul_bytes(line, path, static_cast<int>(number));
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const auto first = line.find_first_not_of(" \t");
    if (first == std::string::npos || line[first] == '#') continue;
    std::replace(line.begin(), line.end(), ',', ' ');
    std::istringstream fields(line);
    std::array<double, 7> row{};
    std::string token;
    int k = 0;
    bool numeric = true;
    while (fields >> token) {
      if (k >= 7) throw InputError(where() + "more than 7 fields (mass x y z vx vy vz)");
      char* end = nullptr;
      row[k++] = std::strtod(token.c_str(), &end);
      if (*end != '\0') numeric = false;
    }
    if (!numeric && rows.empty() && number == 1) continue;  // a header line
    if (!numeric) throw InputError(where() + "not a number");
    if (k != 7) throw InputError(where() + "7 fields expected (mass x y z vx vy vz)");
    for (double v : row)
      if (!std::isfinite(v)) throw InputError(where() + "a value is not finite");
    if (row[0] < 0) throw InputError(where() + "negative mass");
    if (!massless_allowed && row[0] == 0) throw InputError(where() + "the mass must be positive");
    rows.push_back(row);
  }
  return rows;
}

}  // namespace swarmfit::app
