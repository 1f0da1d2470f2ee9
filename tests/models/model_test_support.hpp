// Helpers for the model tests: fixture files, parameter sets, synthetic data made by the model.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "swarmfit/integrators/parameters.hpp"
#include "swarmfit/models/likelihood.hpp"
#include "swarmfit/models/units.hpp"

namespace swarmfit::testing {

// The repository's files; the environment's SWARMFIT_SOURCE_DIR, when set, stands for the
// build's (test binaries run from a bundle on another machine, with ../shared/data next to it).
inline std::string source_path(const std::string& relative) {
  const char* moved = std::getenv("SWARMFIT_SOURCE_DIR");
  return std::string(moved && *moved ? moved : SWARMFIT_SOURCE_DIR) + "/" + relative;
}
inline bool shared_data_present() { return std::filesystem::exists(source_path("../shared/data/README.md")); }

// A small CSV with a header line, as rows of name -> text.
inline std::vector<std::map<std::string, std::string>> read_fixture_csv(const std::string& path) {
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << "missing fixture " << path;
  std::string line;
  std::getline(in, line);
  std::vector<std::string> header;
  {
    std::stringstream s(line);
    std::string cell;
    while (std::getline(s, cell, ',')) header.push_back(cell);
  }
  std::vector<std::map<std::string, std::string>> rows;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    std::stringstream s(line);
    std::string cell;
    std::map<std::string, std::string> row;
    for (std::size_t k = 0; std::getline(s, cell, ','); ++k) row[header.at(k)] = cell;
    rows.push_back(row);
  }
  return rows;
}

// The parameter vector of `model` from a one-row params.csv (unlisted parameters keep `base`).
inline std::vector<double> fixture_parameters(const PlanetaryModel& model, const std::string& path,
                                              std::vector<double> base) {
  const auto rows = read_fixture_csv(path);
  EXPECT_EQ(rows.size(), 1u);
  for (const auto& [name, text] : rows.at(0)) {
    const int k = model.index(name);
    EXPECT_GE(k, 0) << name;
    if (k >= 0) base[k] = std::stod(text);
  }
  return base;
}

// Transit times and RVs of the model itself, as a Dataset with the given errors: transits of the
// planets listed in `transiting` for every epoch in [t_ref, t_end), RVs on a regular grid.
inline Dataset synthetic_dataset(const PlanetaryModel& model, const std::vector<double>& params,
                                 const LikelihoodSettings& settings, double t_end, const std::vector<int>& transiting,
                                 int num_rv, double transit_error, double rv_error) {
  const double t_ref = model.options().reference_epoch;
  // First pass: epochs from the osculating periods with loose errors, to learn the times.
  Dataset guess;
  std::vector<PlanetState> states;
  model.planet_states(params.data(), states);
  for (int p : transiting) {
    guess.planets.push_back(model.planets()[p]);
    const double period = params[model.planet_parameter(p, 0)];
    const double tc = params[model.planet_parameter(p, 4)];
    const long first = static_cast<long>(std::ceil((t_ref + 0.25 * period - tc) / period));
    for (long e = first; tc + e * period < t_end; ++e)
      guess.transits.push_back({static_cast<int>(guess.planets.size()) - 1, e, tc + e * period, 1.0, "synthetic"});
  }
  LikelihoodProblem first(guess, model, settings, params);
  std::vector<double> lnl(1);
  std::vector<int> status(1);
  ModelCurves curves;
  first.evaluate(params.data(), 1, lnl.data(), status.data(), &curves);
  Dataset data;
  data.planets = guess.planets;
  for (std::size_t r = 0; r < first.transit_rows().size(); ++r) {
    TransitObservation o = first.transit_rows()[r];  // o.planet indexes data.planets (= guess.planets)
    o.time = curves.transits[r];
    o.error = transit_error;
    if (std::isfinite(o.time) && o.time < t_end) data.transits.push_back(o);
  }
  if (num_rv > 0) {
    std::vector<double> times;
    for (int k = 0; k < num_rv; ++k) times.push_back(t_ref + 1.0 + (t_end - t_ref - 2.0) * k / num_rv);
    std::vector<double> rv;
    first.rv_curve(params.data(), 1, times, rv, status);
    data.instruments.push_back("synthetic");
    for (int k = 0; k < num_rv; ++k) data.rv.push_back({times[k], rv[k], rv_error, 0, "synthetic"});
  }
  data.finish();
  return data;
}

}  // namespace swarmfit::testing
