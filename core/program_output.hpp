#pragma once
// Runs a short helper program (git, python3 -c, nvidia-smi, Slurm's sbatch and squeue) and returns
// what it printed. argv only, never a shell; argv[0] without a '/' is looked up on PATH. Blocking.

#include <cstddef>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/result.hpp"

namespace reverify {

struct CommandOptions {
  std::optional<std::filesystem::path> cwd;
  std::size_t max_output_bytes = 64 * 1024 * 1024;  // more is an error, not a silent cut
  // Set for the program on top of the caller's environment (SLURM_CONF for Slurm's clients), or
  // its whole environment when inherit_env is false.
  std::map<std::string, std::string> env = {};
  bool inherit_env = true;
};

// How a program ended and what it printed.
struct CommandRun {
  int exit_code = -1;  // 128 + N when it was killed by signal N
  std::string out;     // stdout, whole
  std::string err;     // stderr: its first 64 KiB
};

// Error (code io, or not_found when argv[0] is not on PATH) only when the program cannot start or
// prints more than max_output_bytes; a non-zero exit is the caller's to read.
Result<CommandRun> run_command(const std::vector<std::string>& argv,
                               const CommandOptions& options = {});

// run_command's stdout; error (code io) naming the program when it exits non-zero as well.
Result<std::string> command_output(const std::vector<std::string>& argv,
                                   const CommandOptions& options = {});

}  // namespace reverify
