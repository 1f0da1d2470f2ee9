#include "swarmfit/integrators/registry.hpp"

#include <sstream>

#include "swarmfit/integrators/schemes.hpp"

namespace swarmfit {

namespace {

std::vector<std::string> words(const char* text) {
  std::istringstream in(text);
  std::vector<std::string> out;
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

template <std::size_t K>
void add_entries(std::vector<IntegratorInfo>& registry, SchemeId scheme, const IntegratorEntry (&entries)[K]) {
  for (const IntegratorEntry& e : entries)
    registry.push_back({e.name, scheme, e.adaptive, e.order, e.symplectic, e.force_evaluations, e.planet_pairs_only,
                        e.citation, e.description, words(e.parameters)});
}

}  // namespace

const std::vector<IntegratorInfo>& integrator_registry() {
  static const std::vector<IntegratorInfo> registry = [] {
    std::vector<IntegratorInfo> r;
#define SWARMFIT_ADD_SCHEME(Type) add_entries(r, SchemeId::k##Type, Type<2, double>::kIntegrators);
    SWARMFIT_SCHEMES(SWARMFIT_ADD_SCHEME)
#undef SWARMFIT_ADD_SCHEME
    return r;
  }();
  return registry;
}

const IntegratorInfo* find_integrator(const std::string& name) {
  for (const auto& entry : integrator_registry()) {
    if (entry.name == name) return &entry;
  }
  return nullptr;
}

std::string integrator_names() {
  std::string names;
  for (const auto& entry : integrator_registry()) names += (names.empty() ? "" : ", ") + entry.name;
  return names;
}

const char* status_name(int code) {
  switch (code) {
    case kStatusOk: return "ok";
    case kStatusCloseEncounter: return "close_encounter";
    case kStatusEjected: return "ejected";
    case kStatusCollision: return "collision";
    case kStatusNonFinite: return "non_finite";
    case kStatusStepBudget: return "step_budget";
    case kStatusKeplerFailure: return "kepler_failure";
    case kStatusStepUnderflow: return "step_underflow";
    case kStatusPadding: return "padding";
    default: return "unknown";
  }
}

}  // namespace swarmfit
