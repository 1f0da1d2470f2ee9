// libFuzzer target: the parameter CSV of `swarmfit predict --params` and `swarmfit stability
// --params` (read_parameter_sets, issue 37 "hostile input"). The model is the demo's truth
// (examples/demo/truth.cfg: two planets), loaded once; the input is the CSV file, whose header
// names parameters. It must return count sets of num_parameters() values or throw InputError.
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_support.hpp"
#include "swarmfit/models/model_config.hpp"

namespace {

const swarmfit::ModelConfig& model_config() {
  static const swarmfit::ModelConfig config =
      swarmfit::load_model_config(SWARMFIT_SOURCE_DIR "/examples/demo/truth.cfg", {}, swarmfit::ConfigUse::kModelOnly);
  return config;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace swarmfit;
  const ModelConfig& config = model_config();
  const std::string path = fuzz::write_file("params.csv", data, size);
  fuzz::expect_input_error("fuzz_params", [&] {
    long count = -1;
    const std::vector<double> sets = read_parameter_sets(path, config, count);
    if (count < 1 || sets.size() != static_cast<std::size_t>(count) * config.model->num_parameters())
      fuzz::finding("fuzz_params", "read_parameter_sets returned " + std::to_string(sets.size()) + " values for " +
                                       std::to_string(count) + " sets");
  });
  return 0;
}
