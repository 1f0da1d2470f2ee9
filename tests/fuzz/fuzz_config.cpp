// libFuzzer target: the configuration readers of observations/ (issue 37, "hostile input"). The
// input is a configuration file; the part after a line "%%", if any, becomes other.cfg next to it,
// so that "include = other.cfg" (and a data section's "file = other.cfg") reaches a second fuzzed
// file. It goes through both readers the commands build on:
//  - the flat reader: read_config_file with a fixed set of keys of every value type the commands
//    use (string, double, int, long, uint64, bool; defaults or none), then store_settings, which
//    converts each value;
//  - the sectioned reader: read_sectioned_config (sections, include nesting), then
//    add_data_section on every [rv NAME] / [transits NAME] section and Dataset::finish, as
//    read_config_data does, so the data files are read with the fuzzed keys.
// Each must return or throw InputError. The target links observations/ alone: the commands' own
// key lists (apps/, models/) would bring in the SIMD kernels, too slow to build under the
// sanitizers for `make fuzz-smoke` (tests/fuzz/README.md).
#include <cstddef>
#include <cstdint>
#include <set>
#include <string>

#include "fuzz_support.hpp"
#include "swarmfit/observations/config_file.hpp"
#include "swarmfit/observations/dataset.hpp"

namespace {

namespace po = boost::program_options;

// Keys of each value type, like those of apps/src/integrate_settings.cpp and models/ (near names
// too, so that closest_key's suggestions are exercised).
const po::options_description& flat_keys() {
  static const po::options_description keys = [] {
    po::options_description k("fuzzed keys");
    k.add_options()("integrator", po::value<std::string>()->default_value("hermite"), "a string with a default")(
        "output", po::value<std::string>(), "a string without one")(
        "time_step", po::value<double>()->default_value(1e-3), "a double")(
        "destination_time", po::value<double>()->default_value(1.0), "a double")(
        "nsys", po::value<long>()->default_value(16), "a long")("nbod", po::value<int>()->default_value(3), "an int")(
        "seed", po::value<std::uint64_t>()->default_value(1), "an unsigned 64-bit integer")(
        "overwrite", po::value<bool>()->default_value(false), "a bool")(
        "stop_on_unbound", po::value<bool>()->default_value(false), "a bool")(
        "threads", po::value<int>()->default_value(0), "an int")("G", po::value<double>()->default_value(1.0),
                                                                 "a double");
    return k;
  }();
  return keys;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace swarmfit;
  const std::string input(reinterpret_cast<const char*>(data), size);
  std::string main_text = input, other_text;
  const std::size_t split = input.find("\n%%\n");
  if (split != std::string::npos) {
    main_text = input.substr(0, split + 1);
    other_text = input.substr(split + 4);
  }
  fuzz::write_file("other.cfg", other_text);
  const std::string path = fuzz::write_file("fuzz.cfg", main_text);

  fuzz::expect_input_error("fuzz_config/flat", [&] {
    const auto settings = read_config_file(path, flat_keys());
    boost::program_options::variables_map vm;
    store_settings(settings, flat_keys(), vm);
  });
  fuzz::expect_input_error("fuzz_config/sectioned", [&] {
    const SectionedConfig config = read_sectioned_config(path);
    Dataset dataset;
    std::set<std::string> names;  // the commands refuse a section given twice (model_config.cpp)
    for (const ConfigSection& section : config.sections)
      if (names.insert(section.type + " " + section.name).second && is_data_section(section))
        add_data_section(section, dataset);
    dataset.finish();
  });
  return 0;
}
