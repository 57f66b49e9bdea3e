#pragma once
// reverify capture: what a release records besides its own files: the code (git commit, dirty
// flag, diff), the environment (interpreter, framework, accelerator, determinism variables), the
// data and eval set (hashed), the config, the seeds and the run.

#include <optional>
#include <string>

#include "cli/capture_args.hpp"
#include "core/hashing.hpp"
#include "core/manifest.hpp"
#include "core/result.hpp"

namespace reverify::cli {

struct Captured {
  Manifest manifest;
  std::optional<FileManifest> snapshot;
  std::optional<std::string> diff;
};

// Everything but the release files: code, environment, data, run.
Result<Captured> capture_context(const CaptureArguments& args);

}  // namespace reverify::cli
