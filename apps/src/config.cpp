#include "config.hpp"

#include <csignal>
#include <filesystem>

#include "errors.hpp"

namespace po = boost::program_options;

namespace swarmfit::app {

std::string key_help(const std::string& title, const po::options_description& keys) {
  std::string out = title + ":\n";
  for (const auto& o : keys.options()) {
    std::string param = o->format_parameter();  // "arg (=0)"
    if (param.rfind("arg", 0) == 0) param = param.substr(3);
    std::string head = "  " + o->long_name() + "=VALUE" + param;
    head += head.size() < 38 ? std::string(38 - head.size(), ' ') : "\n" + std::string(38, ' ');
    out += head + o->description() + "\n";
  }
  return out;
}

void parse_command_line(int argc, char** argv, const po::options_description& options,
                        std::vector<std::string>* overrides, po::variables_map& vm) {
  po::options_description hidden;
  if (overrides) hidden.add_options()("override", po::value<std::vector<std::string>>(), "key=value");
  po::options_description all;
  all.add(options).add(hidden);
  po::positional_options_description positional;
  if (overrides) positional.add("override", -1);
  try {
    po::store(po::command_line_parser(argc, argv).options(all).positional(positional).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    throw InputError(std::string("command line: ") + e.what());
  }
  if (overrides && vm.count("override")) {
    const auto& given = vm["override"].as<std::vector<std::string>>();
    overrides->insert(overrides->end(), given.begin(), given.end());
  }
}

void parse_command_line_with_file(int argc, char** argv, const po::options_description& options, const char* positional,
                                  po::variables_map& vm) {
  po::positional_options_description file;
  file.add(positional, 1);
  try {
    po::store(po::command_line_parser(argc, argv).options(options).positional(file).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    throw InputError(std::string("command line: ") + e.what());
  }
}

void check_output_path(const std::string& path, const std::string& what) {
  namespace fs = std::filesystem;
  if (path.empty()) throw InputError("command line: " + what + " is empty");
  std::error_code error;
  if (fs::is_directory(path, error)) throw InputError("command line: " + what + " " + path + " is a folder");
  const fs::path parent = fs::path(path).has_parent_path() ? fs::path(path).parent_path() : fs::path(".");
  if (!fs::is_directory(parent, error))
    throw InputError("command line: " + what + " " + path + ": folder '" + parent.string() + "' does not exist");
}

namespace {
volatile std::sig_atomic_t g_stop_signal = 0;
extern "C" void on_stop_signal(int signal) { g_stop_signal = signal; }
}  // namespace

void catch_stop_signals() {
  std::signal(SIGINT, on_stop_signal);
  std::signal(SIGTERM, on_stop_signal);
}
int stop_signal() { return g_stop_signal; }

}  // namespace swarmfit::app
