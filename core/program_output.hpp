#pragma once
// Runs a short helper program (git, python3 -c, nvidia-smi) and returns what it printed on
// stdout. argv only, never a shell; argv[0] without a '/' is looked up on PATH. Blocking.

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "core/result.hpp"

namespace reverify {

struct CommandOptions {
  std::optional<std::filesystem::path> cwd;
  std::size_t max_output_bytes = 64 * 1024 * 1024;  // more is an error, not a silent cut
};

// Error (code io) naming the program when it cannot start, exits non-zero or prints too much.
Result<std::string> command_output(const std::vector<std::string>& argv,
                                   const CommandOptions& options = {});

}  // namespace reverify
