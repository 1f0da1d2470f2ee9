#include "swarmfit/integrators/registry.hpp"

namespace swarmfit {

const std::vector<IntegratorInfo>& integrator_registry() {
  static const std::vector<IntegratorInfo> registry = {
      {"hermite",
       SchemeId::kHermite,
       false,
       4,
       false,
       "Makino & Aarseth 1992 (PASJ 44, 141); Hut, Makino & McMillan 1995 (ApJ 443, L93); "
       "Swarm-NG: Dindar et al. 2013 (New Astron. 23, 6)",
       "Hermite 4th order P(EC)^2, fixed step",
       {"time_step"}},
      {"hermite_adaptive",
       SchemeId::kHermiteAdaptive,
       true,
       4,
       false,
       "as hermite; step from Swarm-NG eq. 5, h = tau [sum |j|^2/|a|^2]^(-1/2), time-symmetrised as in "
       "Hut, Makino & McMillan 1995; compensated summation (Kahan 1965); position corrector with the jerks "
       "(Kokubo & Makino 2004, PASJ 56, 861)",
       "Hermite 4th order P(EC)^2, adaptive time-symmetric step",
       {"time_step_factor", "min_time_step", "max_time_step"}},
      {"mvs",
       SchemeId::kMvs,
       false,
       2,
       true,
       "Wisdom & Holman 1991 (AJ 102, 1528); Duncan, Levison & Lee 1998 (AJ 116, 2067); "
       "Rein & Tamayo 2015 (MNRAS 452, 376)",
       "mixed-variable symplectic (Wisdom-Holman), democratic heliocentric or Jacobi coordinates",
       {"time_step", "mvs_coordinates", "mvs_splitting"}},
      {"rkck",
       SchemeId::kRkck,
       false,
       5,
       false,
       "Cash & Karp 1990 (ACM TOMS 16, 201)",
       "Runge-Kutta-Cash-Karp 5(4), fixed step",
       {"time_step"}},
      {"rkck_adaptive",
       SchemeId::kRkck,
       true,
       5,
       false,
       "Cash & Karp 1990 (ACM TOMS 16, 201); Press et al. 1992 sec. 16.2",
       "Runge-Kutta-Cash-Karp 5(4), adaptive step",
       {"time_step", "error_tolerance", "min_time_step", "max_time_step"}},
      {"leapfrog",
       SchemeId::kLeapfrog,
       false,
       2,
       true,
       "Verlet 1967 (Phys. Rev. 159, 98)",
       "leapfrog, velocity Verlet (kick-drift-kick)",
       {"time_step"}},
  };
  return registry;
}

const IntegratorInfo* find_integrator(const std::string& name) {
  for (const auto& entry : integrator_registry()) {
    if (entry.name == name) return &entry;
  }
  return nullptr;
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
    case kStatusMissedTransit: return "missed_transit";
    case kStatusInvalidParameters: return "invalid_parameters";
    case kStatusOutsidePrior: return "outside_prior";
    case kStatusPadding: return "padding";
    default: return "unknown";
  }
}

}  // namespace swarmfit
