#pragma once
// Runs a program the way a user's shell would (argv, no shell in between) and returns its exit
// status, stdout and stderr, or starts it and leaves the test to wait for it later: the one
// launcher the tests of the command-line tools share.

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

// A program started by start_program and not yet waited for.
struct Started {
  pid_t pid = -1;
  std::filesystem::path out_path, err_path;

  // Waits for it to end; its exit status and output (the capture files are removed).
  Ran finish() {
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
};

// Starts argv (argv[0] looked up on the PATH) with stdout and stderr captured through files in
// `scratch` named after `tag` (programs running at once need tags of their own), without waiting.
inline Started start_program(const std::vector<std::string>& argv,
                             const std::filesystem::path& scratch, const std::string& tag = "") {
  Started started{-1, scratch / (".stdout" + tag), scratch / (".stderr" + tag)};
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, started.out_path.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_addopen(&actions, 2, started.err_path.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0600);
  std::vector<char*> args;
  for (const std::string& arg : argv)
    args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);
  const int spawned = posix_spawnp(&started.pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0)
    throw std::runtime_error("cannot start " + argv[0]);
  return started;
}

// Runs argv to its end: start_program, then finish.
inline Ran run_program(const std::vector<std::string>& argv, const std::filesystem::path& scratch) {
  return start_program(argv, scratch).finish();
}

// The built `reverify` (REVERIFY_CLI) with these arguments.
inline Ran run_cli(std::vector<std::string> args, const std::filesystem::path& scratch) {
  args.insert(args.begin(), env_or_throw("REVERIFY_CLI"));
  return run_program(args, scratch);
}
inline Started start_cli(std::vector<std::string> args, const std::filesystem::path& scratch,
                         const std::string& tag) {
  args.insert(args.begin(), env_or_throw("REVERIFY_CLI"));
  return start_program(args, scratch, tag);
}

// The built `reverifyd` with these arguments, run to its exit (--help, --check-config, ...).
inline Ran run_reverifyd(std::vector<std::string> args, const std::filesystem::path& scratch) {
  args.insert(args.begin(), (build_dir() / "daemon/reverifyd").string());
  return run_program(args, scratch);
}

}  // namespace reverify::test
