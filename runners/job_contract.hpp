#pragma once
// The runner side of the rebuild contract (docs/design.md, "The rebuild contract"), shared by every
// runner: the input files a job reads and the environment it gets.

#include <array>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "core/result.hpp"
#include "runners/runner.hpp"

namespace reverify {

// Where the job sees each contract path: host paths for the process runner, container paths for
// docker. data and eval stay unset when the spec has none.
struct ContractPaths {
  std::string config;  // REVERIFY_CONFIG
  std::string seeds;   // REVERIFY_SEEDS
  std::string out;     // REVERIFY_OUT
  std::string data;    // REVERIFY_DATA, "" = not given
  std::string eval;    // REVERIFY_EVAL, "" = not given
};

// Writes in_dir/config.json (the manifest's resolved config, {} when absent) and in_dir/seeds.json.
Status write_contract_inputs(const RebuildSpec& spec, const std::filesystem::path& in_dir);

// The job's whole environment: the manifest's environment.env, then the contract's variables,
// which win over a manifest entry of the same name (a manifest cannot redirect REVERIFY_OUT).
std::map<std::string, std::string> contract_environment(const RebuildSpec& spec,
                                                        const ContractPaths& paths);

// The job's two inputs, each with the variable it gets, the manifest field it comes from and
// whether preflight fetched it.
struct JobInput {
  const char* variable;  // "REVERIFY_DATA"
  const char* field;     // "data.snapshot.uri"
  const std::optional<std::filesystem::path>& path;
  bool fetched;
};
std::array<JobInput, 2> job_inputs(const RebuildSpec& spec);

// ErrorCode::provision for a fetched input that `runner` cannot show its job, `why` said: names
// the manifest field first, then the variable and the copy.
Error fetched_input_unseen(const JobInput& input, const std::string& runner,
                           const std::string& why);

// error:provision when the spec's data or eval path would show the job one of the verifier's own
// files (check_not_verifier_own() in job_sandbox.hpp), naming REVERIFY_DATA or REVERIFY_EVAL.
Status check_inputs_not_verifier_own(const RebuildSpec& spec,
                                     const std::vector<std::filesystem::path>& verifier_paths);

// The job's working folder in a checkout of its code: run.workdir when relative (inside the
// checkout), else the checkout root (an absolute workdir names a folder of the original image,
// e.g. /src).
std::filesystem::path job_workdir(const RebuildSpec& spec, const std::filesystem::path& checkout);

// After the checkout, before the job: job_workdir with every symlink in it resolved (a symlinked
// folder or parent included) must still be inside the resolved checkout, or the job would run in
// a folder the checkout only points at. ErrorCode::manifest_invalid naming run.workdir and where
// it leads when it leaves. Whether the folder exists is the caller's to check.
Result<std::filesystem::path> resolved_job_workdir(const RebuildSpec& spec,
                                                   const std::filesystem::path& checkout);

// The scratch folder of a rebuild: spec.work_dir, or scratch_root/<rebuild id> when it is empty.
// An id that is not [A-Za-z0-9._-]+ (or is "." / "..") is an invalid_argument error.
Result<std::filesystem::path> scratch_dir(const std::string& rebuild_id,
                                          const std::filesystem::path& work_dir,
                                          const std::filesystem::path& scratch_root);

}  // namespace reverify
