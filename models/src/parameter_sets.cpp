// The parameter sets of `predict --params` and `stability --params`: a CSV whose header names
// model parameters, one set per row. Its own file so that the fuzz target (tests/fuzz/fuzz_params)
// links the model's parameterisation without the integration kernels.
#include <algorithm>

#include "swarmfit/models/model_config.hpp"
#include "swarmfit/observations/input_error.hpp"
#include "swarmfit/observations/text_table.hpp"

namespace swarmfit {

std::vector<double> read_parameter_sets(const std::string& path, const ModelConfig& config, long& count) {
  const std::vector<TableRow> rows = read_csv(path);
  if (rows.size() < 2) throw InputError(path + ": expected a header line of parameter names and at least one row");
  const PlanetaryModel& model = *config.model;
  std::vector<int> column_parameter;
  for (const std::string& name : rows[0].fields) {
    const int k = model.index(name);
    if (k >= 0 && std::count(column_parameter.begin(), column_parameter.end(), k) > 0)
      throw InputError(path + ":" + std::to_string(rows[0].line) + ": column '" + name + "' given twice");
    if (k < 0) {
      std::string list;
      for (const auto& p : model.parameters()) list += (list.empty() ? "" : ", ") + p.name;
      throw InputError(path + ":" + std::to_string(rows[0].line) + ": unknown parameter '" + name +
                       "' (the model's: " + list + ")");
    }
    column_parameter.push_back(k);
  }
  std::vector<double> sets;
  count = 0;
  for (std::size_t r = 1; r < rows.size(); ++r) {
    const TableRow& row = rows[r];
    if (row.fields.size() != column_parameter.size())
      throw InputError(path + ":" + std::to_string(row.line) + ": expected " + std::to_string(column_parameter.size()) +
                       " fields, found " + std::to_string(row.fields.size()));
    std::vector<double> values = config.values;
    for (std::size_t k = 0; k < column_parameter.size(); ++k)
      values[column_parameter[k]] = parse_number(row.fields[k], path, row.line, rows[0].fields[k]);
    std::string reason;
    std::vector<PlanetState> states;
    if (!model.planet_states(values.data(), states, &reason))
      throw InputError(path + ":" + std::to_string(row.line) + ": not a valid system: " + reason);
    sets.insert(sets.end(), values.begin(), values.end());
    ++count;
  }
  return sets;
}

}  // namespace swarmfit
