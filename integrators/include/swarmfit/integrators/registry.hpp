// Every integrator is a self-describing entry (name, citation, parameters, order): the CLI, the
// docs (`swarmfit integrate --help`) and the registry/parity/energy tests iterate over this list.
#pragma once

#include <string>
#include <vector>

#include "swarmfit/integrators/parameters.hpp"

namespace swarmfit {

enum class SchemeId : int { kHermite = 0, kMvs = 1, kRkck = 2, kLeapfrog = 3, kHermiteAdaptive = 4 };

struct IntegratorInfo {
  std::string name;
  SchemeId scheme;
  bool adaptive;    // variable step size
  int order;        // global order of accuracy in the step
  bool symplectic;  // bounded energy error, no secular drift
  std::string citation;
  std::string description;
  std::vector<std::string> parameters;  // configuration keys the integrator reads
};

const std::vector<IntegratorInfo>& integrator_registry();
// nullptr if no integrator has this name.
const IntegratorInfo* find_integrator(const std::string& name);

}  // namespace swarmfit
