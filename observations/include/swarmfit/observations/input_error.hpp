// Bad input is refused before any work starts: one line naming the file, line, column or key
// (design/ARCHITECTURE.md, "Errors"). Every layer that reads input throws this type.
#pragma once

#include <stdexcept>
#include <string>

namespace swarmfit {

struct InputError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

}  // namespace swarmfit
