#pragma once
// Runs a program the way a user's shell would (argv, no shell in between) and returns its exit
// status, stdout and stderr: the one launcher the tests of the command-line tools share.

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>

#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include "tests/support/files.hpp"

extern char** environ;

namespace reverify::test {

struct Ran {
  int exit_code = -1;  // 128 + the signal when a signal ended it
  std::string out, err;
};

// Runs argv (argv[0] looked up on the PATH) with stdout and stderr captured through files in
// `scratch` (removed afterwards).
inline Ran run_program(const std::vector<std::string>& argv, const std::filesystem::path& scratch) {
  const auto out_path = scratch / ".stdout", err_path = scratch / ".stderr";
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                   0600);
  posix_spawn_file_actions_addopen(&actions, 2, err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                   0600);
  std::vector<char*> args;
  for (const std::string& arg : argv)
    args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  const int spawned = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0)
    throw std::runtime_error("cannot start " + argv[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  Ran ran;
  ran.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  ran.out = read_file(out_path);
  ran.err = read_file(err_path);
  std::filesystem::remove(out_path);
  std::filesystem::remove(err_path);
  return ran;
}

// The built `reverify` (REVERIFY_CLI) with these arguments.
inline Ran run_cli(std::vector<std::string> args, const std::filesystem::path& scratch) {
  args.insert(args.begin(), env_or_throw("REVERIFY_CLI"));
  return run_program(args, scratch);
}

// The built `reverifyd` with these arguments, run to its exit (--help, --check-config, ...).
inline Ran run_reverifyd(std::vector<std::string> args, const std::filesystem::path& scratch) {
  args.insert(args.begin(), (build_dir() / "daemon/reverifyd").string());
  return run_program(args, scratch);
}

}  // namespace reverify::test
