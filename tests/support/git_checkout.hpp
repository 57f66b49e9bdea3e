#pragma once
// A code checkout for tests of commands that read one (capture): `dir` made a git repository
// with everything in it committed once, by a test identity, unsigned.

#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include "tests/support/run_program.hpp"

namespace reverify::test {

// `git` is the executable to use (a fixed path when the test's PATH has no git).
inline void commit_all(const std::filesystem::path& dir, const std::string& git = "git") {
  for (std::vector<std::string> args :
       {std::vector<std::string>{"init", "--quiet"},
        {"add", "--all"},
        {"-c", "user.name=test", "-c", "user.email=test@reverify.invalid", "-c",
         "commit.gpgsign=false", "commit", "--quiet", "-m", "trainer"}}) {
    args.insert(args.begin(), {git, "-C", dir.string()});
    const Ran ran = run_program(args, dir.parent_path());
    if (ran.exit_code != 0)
      throw std::runtime_error("committing " + dir.string() + " failed: " + ran.err);
  }
}

}  // namespace reverify::test
