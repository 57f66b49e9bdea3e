#pragma once
// The process runner's code checkout: `git clone` of code.repo (a local path or a URL), checkout
// of code.commit, and for a dirty manifest the recorded diff, verified and applied. git runs with
// an argv (no shell) and a cleared environment.

#include <filesystem>
#include <string>

#include "core/result.hpp"
#include "runners/runner.hpp"

namespace reverify {

// Clones into dest (which must not exist). Errors:
// - provision: no code.repo, git missing, the repository cannot be cloned;
// - input_drift: code.commit is not in the repository; the diff is missing or its sha256 differs
//   from code.diff_sha256; the diff does not apply;
// - manifest_invalid: code.dirty is true without code.diff_sha256.
// The diff of a dirty manifest is the file "code.diff" next to the manifest (resolved like any
// relative URI of the manifest, so a local folder or an http(s) location).
Status checkout_code(const RebuildSpec& spec, const std::filesystem::path& dest,
                     const std::string& path_env);

}  // namespace reverify
