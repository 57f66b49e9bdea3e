#pragma once
// Preflight of a verification: the recorded inputs are re-hashed and compared with the manifest
// before any runner is provisioned (docs/design.md, "Verdict" -> inputs). Blocking (hashing).

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/manifest.hpp"
#include "core/predictions.hpp"
#include "core/result.hpp"
#include "policies/source_condition.hpp"
#include "policies/verdict_model.hpp"

namespace reverify {

struct PreflightReport {
  std::vector<CheckResult> checks;                 // kind input, one per verified input
  std::optional<std::filesystem::path> data_path;  // local dataset snapshot for the job
  std::optional<std::filesystem::path> eval_path;  // local eval set for the job
  // Inputs that could not be verified and why (table formats, lockfile outside a local
  // repository): recorded, never silently skipped.
  std::vector<std::string> unverified;
  nlohmann::json evidence = nlohmann::json::object();  // hashes and moved files per input
  // The verification stops here, before any job, with this verdict naming the field:
  // error:manifest-invalid for a release record that cannot be read whole (its predictions) or a
  // path that leaves its root; error:provision for a remote input that cannot be fetched.
  std::optional<Verdict> refusal;
  // The failed input checks whose input is not at the location its manifest resolves it to (a
  // local path that does not exist): the others that failed found it with another content.
  std::vector<std::string> missing;

  bool drifted() const;      // any check failed
  InputDrift drift() const;  // the failed checks: missing, or changed (all the others)
};

// A file hashes to its sha256, a folder to its file-manifest root (the eval set may be either).
Result<std::string> hash_input(const std::filesystem::path& path);

// Checks, in order: the manifest's paths (core/manifest_parse.hpp path_containment_errors: a
// refusal), dataset snapshot (kind "files": file-manifest root; the changed files are named from
// `snapshot.sha256` beside the manifest), eval set (file sha256 or folder root), reference
// predictions (the released file still hashes to evaluation.predictions.sha256, and is read
// whole: a refusal when it cannot be), lockfile (`git show <commit>:<path>` when code.repo is a
// local git repository), released weights (at an http(s) URI, when the level is bitwise and
// weights.tensor_sha256 is recorded: their tensor hash; otherwise not fetched, noted). Inputs at
// http(s) URIs (a "files" snapshot, the eval set, the released predictions, those weights) are
// fetched into `fetch_dir` and checked there (verify/remote_inputs.hpp); the job gets those
// copies.
PreflightReport run_preflight(const Manifest& manifest, const std::string& manifest_location,
                              const std::filesystem::path& fetch_dir);

// The released predictions (evaluation.predictions) read whole: nullopt when the manifest names
// none; an error naming evaluation.predictions (ErrorCode::manifest_invalid) when they are named
// and cannot be read (missing, not a predictions file, a NaN or infinite value). One at an
// http(s) URI is read from the copy preflight fetched into `fetch_dir`.
Result<std::optional<Predictions>> read_released_predictions(
    const Manifest& manifest, const std::string& manifest_location,
    const std::filesystem::path& fetch_dir);

// The released weights file (weights.uri resolved against the manifest's location): a local one
// when it exists; one at an http(s) URI, the copy preflight fetched into `fetch_dir` while that
// scratch lasts. nullopt when the manifest names none or there is no such file.
std::optional<std::filesystem::path> released_weights(const Manifest& manifest,
                                                      const std::string& manifest_location,
                                                      const std::filesystem::path& fetch_dir);

}  // namespace reverify
