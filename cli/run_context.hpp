#pragma once
// What `reverify run` and `reverify calibrate` share: the config (a file, or the embedded
// default: process runner, no store), the model version's manifest from a directory registry,
// the runner, and the VerificationRequest for the pipeline.

#include <memory>
#include <string>
#include <vector>

#include "cli/command.hpp"
#include "core/result.hpp"
#include "daemon/config.hpp"
#include "daemon/pipeline.hpp"
#include "daemon/store.hpp"
#include "runners/runner.hpp"

namespace reverify::cli {

// Options every command built on a RunContext accepts (value options, without "--").
std::vector<std::string> run_context_options();

struct RunContext {
  Config config;
  std::unique_ptr<Runner> runner;
  std::unique_ptr<Store> store;  // opened when --config names a state_dir; null otherwise
  VerificationRequest request;
  std::filesystem::path temp_work_root;  // a work root made for this command; removed by the dtor

  RunContext() = default;
  RunContext(RunContext&&) = default;
  ~RunContext();
};

// positionals()[0] is MODEL@VERSION. The manifest is --manifest FILE, or
// <root>/<model>/<version>/manifest.json under --registry DIR or a directory source of --config.
Result<RunContext> make_run_context(const Args& args);

}  // namespace reverify::cli
