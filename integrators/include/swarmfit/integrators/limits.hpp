// Limits on what a run may ask for, checked where the input is read (one clear line instead of a
// crash or a runaway).
#pragma once

namespace swarmfit {

// The most CPU threads a run may ask for (OpenMP crashed at start when asked for 100,000).
constexpr int kMaxThreads = 1024;

}  // namespace swarmfit
