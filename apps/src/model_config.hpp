// The model configuration lives in swarmfit/models/model_config.hpp; this header keeps the name
// app::ModelConfig for the commands that still spell it (bench_command.cpp).
#pragma once

#include "config.hpp"
#include "swarmfit/models/model_config.hpp"

namespace swarmfit::app {

using swarmfit::ModelConfig;

}  // namespace swarmfit::app
