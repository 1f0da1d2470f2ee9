// Bad input is refused before any work starts: one line naming the file, line, column or key,
// and exit code 2 (design/ARCHITECTURE.md, "Errors").
#pragma once

#include "swarmfit/observations/input_error.hpp"

namespace swarmfit::app {

constexpr int kExitBadInput = 2;
constexpr int kExitMismatch = 3;  // --reference comparison failed

using swarmfit::InputError;

}  // namespace swarmfit::app
