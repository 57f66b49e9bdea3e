#pragma once
// Preflight of a verification: the recorded inputs are re-hashed and compared with the manifest
// before any runner is provisioned (docs/design.md, "Verdict" -> inputs). Blocking (hashing).

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/manifest.hpp"
#include "core/result.hpp"
#include "policies/verdict_model.hpp"

namespace reverify {

struct PreflightReport {
  std::vector<CheckResult> checks;                 // kind input, one per verified input
  std::optional<std::filesystem::path> data_path;  // local dataset snapshot for the job
  std::optional<std::filesystem::path> eval_path;  // local eval set for the job
  // Inputs that could not be verified and why (remote snapshot, table formats, lockfile outside
  // a local repository): recorded, never silently skipped.
  std::vector<std::string> unverified;
  nlohmann::json evidence = nlohmann::json::object();  // hashes and moved files per input

  bool drifted() const;  // any check failed
};

// A file hashes to its sha256, a folder to its file-manifest root (the eval set may be either).
Result<std::string> hash_input(const std::filesystem::path& path);

// Checks, in order: dataset snapshot (kind "files": file-manifest root; the changed files are
// named from `snapshot.sha256` beside the manifest), eval set (file sha256 or folder root),
// reference predictions (the released file still hashes to evaluation.predictions.sha256),
// lockfile (`git show <commit>:<path>` when code.repo is a local git repository).
PreflightReport run_preflight(const Manifest& manifest, const std::string& manifest_location);

}  // namespace reverify
