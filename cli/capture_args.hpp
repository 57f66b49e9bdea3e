#pragma once
// reverify capture's arguments, shared by its files: cmd_capture.cpp (the command, stage by
// stage), capture_options.cpp (its flags), capture_context.cpp (code, environment, data, run),
// capture_release.cpp (the files copied into the release folder, the scoring spec) and
// capture_tolerance.cpp (seed runs, same-seed runs, detect and floor, the subsample reference).

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli/scoring_flags.hpp"

namespace reverify::cli {

struct CaptureArguments {
  std::string out, model, version, owner;
  std::optional<std::string> result;
  ReproLevel level = ReproLevel::equivalent;
  std::string code = ".";
  std::optional<std::string> repo, data, data_uri, eval, eval_uri, config, seeds, split_rule,
      split_salt, lockfile, framework, image, workdir, started_at, ci_runner, seed_runs,
      same_seed_runs, subsample_out, subsample_seed_runs, subsample_salt, subsample_key;
  std::optional<double> subsample_fraction, subsample_duration_s;
  std::vector<std::string> detect, floor;  // CHECK=NUMBER
  std::string python = "python3";
  std::int64_t world_size = 1;
  std::optional<double> duration_s;
  bool lower_is_better = false;
  ScoringArguments scoring;
  std::vector<std::string> entrypoint;
};

// Defines capture's flags on `app`, filling `args` (capture_options.cpp).
void define_capture_options(CLI::App& app, CaptureArguments& args);

}  // namespace reverify::cli
