// A DEMCMC run in one HDF5 file: the kept chain, the parameters and priors, the sampler's settings
// and its complete state, so the file is both the result and the checkpoint. The file is always
// rewritten whole and atomically (hdf5_io.hpp's AtomicFile): a run killed at any moment leaves
// the previous complete version. Layout (README "Fit output"):
//   /chain/parameters [draw][walker][free parameter], attribute names
//   /chain/{log_prior, log_likelihood, log_posterior, status, accepted} [draw][walker]
//   /chain/generation [draw]
//   /parameters/{names, units, priors, values, free}   all model parameters; free: indices
//   /state/{walkers [column][free parameter], log_prior, log_likelihood, status, accepted,
//           swaps_accepted}, attribute generation
//   root attributes: seed, gamma_scale, gamma_one_every, jitter, snooker, temperatures, thin,
//   walkers, and the caller's string attributes (config text, versions, ...)
#pragma once

#include <functional>
#include <map>
#include <string>

#include "swarmfit/inference/chain.hpp"
#include "swarmfit/inference/hdf5_io.hpp"
#include "swarmfit/inference/prior.hpp"

namespace swarmfit {

struct RunRecord {
  std::vector<std::string> names, units;  // all model parameters
  std::vector<Prior> priors;
  std::vector<double> values;
  std::vector<int> free;  // indices of the sampled parameters
  DemcmcSettings settings;
  long thin = 1;
  Chain chain;
  DemcmcState state;
  std::map<std::string, std::string> attributes;
  long burn_in_draws = -1;  // the fit's first kept draw of its summary (attribute burn_in_draws; -1: none)
};

// Writes everything atomically; `extra` may add groups (data, predictions) to the open file.
void write_run(const std::string& path, const RunRecord& run, const std::function<void(hid_t file)>& extra = {});
// Reads a file written by write_run; throws std::runtime_error naming what is missing, or what
// does not agree (shapes, a value that is not finite).
RunRecord read_run(const std::string& path);
// The configuration text a run file was written with (its "config" attribute); "" when the file
// cannot be read or has none. Cheap: the chain is not read.
std::string read_run_config(const std::string& path);

}  // namespace swarmfit
