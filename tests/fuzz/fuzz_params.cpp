// libFuzzer target: the parameter CSV of `swarmfit predict --params` and `swarmfit stability
// --params` (read_parameter_sets, issue 37 "hostile input"). The model is the demo's truth
// (examples/demo/truth.cfg: a star and two planets, Jacobi elements), built here from its values
// rather than loaded (load_model_config checks the integration step, which needs the kernels:
// this target links the model's parameterisation only); the input is the CSV file, whose header
// names parameters. It must return count sets of num_parameters() values or throw InputError.
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>

#include "fuzz_support.hpp"
#include "swarmfit/models/model_config.hpp"

namespace {

const swarmfit::ModelConfig& model_config() {
  static const swarmfit::ModelConfig config = [] {
    swarmfit::ModelConfig c;
    swarmfit::ModelOptions options;
    options.reference_epoch = 2460000.0;
    c.model = std::make_unique<swarmfit::PlanetaryModel>(std::vector<std::string>{"b", "c"}, std::vector<std::string>{},
                                                         options);
    // examples/demo/truth.cfg
    const std::map<std::string, double> truth = {
        {"star_mass", 1.0},  {"period_b", 9.8},  {"mass_b", 25.0},    {"secosw_b", 0.2},  {"sesinw_b", 0.1},
        {"tc_b", 2460003.7}, {"inc_b", 89.5},    {"node_b", 0.0},     {"period_c", 19.9}, {"mass_c", 40.0},
        {"secosw_c", -0.1},  {"sesinw_c", 0.15}, {"tc_c", 2460011.2}, {"inc_c", 89.7},    {"node_c", 0.0}};
    c.values.assign(c.model->num_parameters(), 0.0);
    for (const auto& p : c.model->parameters()) {
      const auto it = truth.find(p.name);
      if (it == truth.end()) swarmfit::fuzz::finding("fuzz_params", "the demo truth has no value for " + p.name);
      c.values[c.model->index(p.name)] = it->second;
    }
    return c;
  }();
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
