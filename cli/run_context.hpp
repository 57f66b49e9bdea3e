#pragma once
// What `reverify run` and `reverify calibrate` share: the config (a file, or the embedded
// default: process runner, no store), the model version's manifest from a directory registry,
// the runner, and the VerificationRequest for the pipeline.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cli/command.hpp"
#include "core/result.hpp"
#include "runners/runner.hpp"
#include "settings/config.hpp"
#include "store/store.hpp"
#include "verify/pipeline.hpp"

namespace reverify::cli {

// The arguments every command built on a RunContext accepts (run, calibrate).
struct RunArguments {
  std::string target;  // MODEL@VERSION
  std::optional<std::string> config, registry, manifest, timeout, work_dir;
  std::optional<RunnerKind> runner;
  RebuildMode mode = RebuildMode::full;
  std::optional<std::int64_t> max_steps;
  std::vector<std::string> code_mirrors;  // "URL=PATH", repeated or comma-separated
  // false: nothing is recorded in the config's state_dir (a throwaway store gets a copy of the
  // stored calibration): a fresh-seed rerun judged as a rebuild is an experiment, not a verdict.
  bool record = true;
};

// Declares RunArguments on `app`, each with its help text, units and default.
void add_run_arguments(CLI::App& app, RunArguments& arguments);

// Only the options that say where rebuilds run and find their inputs (--config, --registry,
// --runner, --timeout, --work-dir, --code-mirror), for a command with positionals of its own
// (bisect).
void add_rebuild_options(CLI::App& app, RunArguments& arguments);

// A released manifest, valid and describing the version it was looked up for.
struct ReleaseManifest {
  Manifest manifest;
  std::string location;  // path or URL it was read from (relative URIs)
};

// The manifest of `target` (MODEL@VERSION): --manifest FILE, or
// <root>/<model>/<version>/manifest.json under --registry DIR or a directory source of `config`.
Result<ReleaseManifest> load_release(const RunArguments& args, const Config& config,
                                     const std::string& target);

struct RunContext {
  Config config;
  std::unique_ptr<Runner> runner;
  // The state_dir's store with --config; otherwise a throwaway one in a temp folder, so that a
  // run always goes through the same store-backed path as the daemon's.
  std::unique_ptr<Store> store;
  bool store_is_throwaway = false;
  VerificationRequest request;
  std::vector<std::filesystem::path> temp_dirs;  // made for this command; removed by the dtor

  RunContext() = default;
  RunContext(RunContext&&) = default;
  ~RunContext();
};

// The manifest is load_release's.
Result<RunContext> make_run_context(const RunArguments& args);

}  // namespace reverify::cli
