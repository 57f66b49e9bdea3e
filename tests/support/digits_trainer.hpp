#pragma once
// The digits example's trainer repository at its released commit, built into `dest` by
// examples/digits/build_trainer_repo.sh, for tests that rebuild the released example
// (examples/registry/digits-mlp/2026.11.1; its code_mirrors entry points at `dest`).

#include <filesystem>
#include <stdexcept>
#include <string>

#include "tests/support/files.hpp"
#include "tests/support/run_program.hpp"

namespace reverify::test {

inline constexpr const char* kDigitsRepoUrl = "https://git.example/vision/digits-trainer.git";

inline void build_digits_trainer(const std::filesystem::path& dest) {
  const Ran built = run_program(
      {"bash", (source_dir() / "examples/digits/build_trainer_repo.sh").string(), dest.string()},
      dest.parent_path());
  if (built.exit_code != 0)
    throw std::runtime_error("building the digits trainer repository failed: " + built.err);
}

}  // namespace reverify::test
