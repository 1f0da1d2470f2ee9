// Status codes of a model evaluation: the engine's (integrators/parameters.hpp, 0-7) and the
// likelihood's own, from kFirstObserverStatus on. Codes are stable: they are written to run files.
#pragma once

#include "swarmfit/integrators/parameters.hpp"

namespace swarmfit {

// An observed transit has no model transit (no conjunction, or not across the star).
constexpr int kStatusMissedTransit = kFirstObserverStatus;
// The parameters give no bound orbit (e >= 1, mass <= 0, ...); not integrated.
constexpr int kStatusInvalidParameters = kFirstObserverStatus + 1;
// A fit's proposal outside its prior's support; not integrated.
constexpr int kStatusOutsidePrior = kFirstObserverStatus + 2;

// A proposal that failed the fit's stability constraint (stability = amd, hill, megno, integrate).
constexpr int kStatusUnstable = kFirstObserverStatus + 3;

// The name of any status code of a model evaluation (the engine's and the likelihood's).
const char* model_status_name(int code);

}  // namespace swarmfit
