// All schemes, and SchemeId -> scheme template dispatch for the backends.
#pragma once

#include "swarmfit/integrators/hermite.hpp"
#include "swarmfit/integrators/leapfrog.hpp"
#include "swarmfit/integrators/mvs.hpp"
#include "swarmfit/integrators/registry.hpp"
#include "swarmfit/integrators/rkck.hpp"

namespace swarmfit {

template <template <int, class> class Scheme>
struct SchemeTag {};

template <class F>
decltype(auto) dispatch_scheme(SchemeId id, F&& f) {
  switch (id) {
    case SchemeId::kHermite: return f(SchemeTag<Hermite>{});
    case SchemeId::kHermiteAdaptive: return f(SchemeTag<HermiteAdaptive>{});
    case SchemeId::kMvs: return f(SchemeTag<Mvs>{});
    case SchemeId::kRkck: return f(SchemeTag<Rkck>{});
    default: return f(SchemeTag<Leapfrog>{});
  }
}

}  // namespace swarmfit
