// Every integrator is a self-describing entry (name, citation, parameters, order, cost): each
// scheme of the list (integrators/schemes.txt) describes the integrators it provides in its
// kIntegrators array, and the registry collects them. The CLI, the docs (`swarmfit integrate
// --help`), the benchmarks and the registry/parity/energy tests iterate over this list.
#pragma once

#include <string>
#include <vector>

#include "swarmfit/integrators/parameters.hpp"
#include "swarmfit/integrators/scheme_list.hpp"

namespace swarmfit {

// One id per scheme of the list, in its order.
enum class SchemeId : int {
#define SWARMFIT_SCHEME_ID(Type) k##Type,
  SWARMFIT_SCHEMES(SWARMFIT_SCHEME_ID)
#undef SWARMFIT_SCHEME_ID
};

struct IntegratorInfo {
  std::string name;
  SchemeId scheme;
  bool adaptive;
  int order;
  bool symplectic;
  int force_evaluations;
  bool planet_pairs_only;
  std::string citation;
  std::string description;
  std::vector<std::string> parameters;
  // Pair evaluations of one step of a system of n bodies.
  double pair_evaluations(int n) const {
    const double pairs = planet_pairs_only ? (n - 1) * (n - 2) / 2.0 : n * (n - 1) / 2.0;
    return force_evaluations * pairs;
  }
};

const std::vector<IntegratorInfo>& integrator_registry();
// nullptr if no integrator has this name.
const IntegratorInfo* find_integrator(const std::string& name);
// The names of every integrator, comma separated (help texts, messages).
std::string integrator_names();

}  // namespace swarmfit
