// The configuration of a model fitted to data (predict, fit, data commands): global keys for the
// star, the model conventions and the integration; [planet NAME] sections with parameter values;
// [instrument NAME] sections with RV offsets and jitters; [rv NAME] and [transits NAME] data
// sources (observations/dataset.hpp). Keys are listed by `swarmfit predict --help`.
#pragma once

#include <boost/program_options.hpp>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "swarmfit/inference/prior.hpp"
#include "swarmfit/models/likelihood.hpp"
#include "swarmfit/models/stability.hpp"
#include "swarmfit/models/step_check.hpp"
#include "swarmfit/observations/config_file.hpp"

namespace swarmfit {

boost::program_options::options_description model_keys();
// The keys of `swarmfit fit` (accepted, and ignored, by the other commands so one file serves all).
boost::program_options::options_description fit_keys();
// The keys of [planet], [instrument] sections, with meanings, for --help.
std::string section_help();

enum class ConfigUse { kModelAndData, kDataOnly, kModelOnly };

struct ModelConfig {
  std::string path;  // the configuration file
  SectionedConfig file;
  std::map<std::string, Setting> settings;  // global keys, overrides applied
  boost::program_options::variables_map vm;
  Dataset data;
  std::unique_ptr<PlanetaryModel> model;
  std::vector<double> values;             // the parameter values given in the sections
  const ConfigSection* priors = nullptr;  // the [priors] section, if any
  LikelihoodSettings likelihood;
  StabilityConstraint stability;  // the fit's (key `stability`); none by default
  // The integration-error check at the configuration's values (step_check.hpp): with data, the
  // step settled (likelihood.time_step set where the default had to be refined) and checked.
  StepCheck step_check;
};

// Reads and validates everything (the data files included); throws InputError naming the file,
// line and key. kDataOnly: no model is needed (the `data` command); kModelOnly: no data (the
// `simulate` command makes them).
ModelConfig load_model_config(const std::string& path, const std::vector<std::string>& overrides,
                              ConfigUse use = ConfigUse::kModelAndData);

// The [priors] section: every model parameter needs exactly one prior line. Throws InputError
// naming the line (or the section) and the parameter.
ParameterSpace read_priors(const ModelConfig& config);

// Reads parameter sets from a CSV file whose header names parameters; missing columns take the
// configuration's values. Returns columns of model.num_parameters() values.
std::vector<double> read_parameter_sets(const std::string& path, const ModelConfig& config, long& count);

}  // namespace swarmfit
