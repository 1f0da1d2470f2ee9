// Every scheme of the list (integrators/schemes.txt), and SchemeId -> scheme template dispatch.
#pragma once

#include <stdexcept>

#include "swarmfit/integrators/registry.hpp"
#include "swarmfit/integrators/scheme_headers.hpp"

namespace swarmfit {

template <template <int, class> class Scheme>
struct SchemeTag {};

// f(SchemeTag<Scheme>{}) for the scheme of `id`.
template <class F>
decltype(auto) dispatch_scheme(SchemeId id, F&& f) {
  switch (id) {
#define SWARMFIT_SCHEME_CASE(Type) \
  case SchemeId::k##Type: return f(SchemeTag<Type>{});
    SWARMFIT_SCHEMES(SWARMFIT_SCHEME_CASE)
#undef SWARMFIT_SCHEME_CASE
  }
  throw std::invalid_argument("unknown scheme id");
}

}  // namespace swarmfit
