// Bad input is refused before any work starts: one line naming the file, line, column or key,
// and exit code 2 (design/ARCHITECTURE.md, "Errors").
#pragma once

#include <stdexcept>
#include <string>

namespace swarmfit::app {

constexpr int kExitBadInput = 2;
constexpr int kExitMismatch = 3;  // --reference comparison failed

struct InputError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

}  // namespace swarmfit::app
