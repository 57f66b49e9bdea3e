#pragma once
// Builds the configured Runner. Unknown kinds are an invalid_argument error naming the field.

#include <memory>

#include "core/result.hpp"
#include "runners/runner.hpp"
#include "runners/runner_config.hpp"

namespace reverify {

Result<std::unique_ptr<Runner>> make_runner(const RunnerConfig& config);

}  // namespace reverify
