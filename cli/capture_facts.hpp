#pragma once
// What `reverify capture` reads from the machine and the code checkout it runs in: git state,
// interpreter and framework versions, accelerator facts, determinism variables. Blocking.

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/manifest.hpp"
#include "core/result.hpp"

namespace reverify::cli {

struct GitFacts {
  std::string commit;                 // HEAD, 40 hex
  bool dirty = false;                 // tracked files differ from HEAD
  std::optional<std::string> diff;    // `git diff --binary HEAD` when dirty
  std::optional<std::string> remote;  // remote.origin.url when configured
};
Result<GitFacts> read_git_facts(const std::filesystem::path& checkout);

// nvidia-smi's GPUs (model, count, driver); nullopt on a machine without one (a CPU job records
// no accelerator).
std::optional<Accelerator> read_accelerator();

std::string host_name();

// `<python> -c ...`: the interpreter's version, and a module's __version__.
Result<std::string> python_version(const std::string& python);
Result<std::string> module_version(const std::string& python, const std::string& module);

// The facts only the job itself can see, reported in result.json's "environment" (same shape as
// the manifest's: framework, determinism flags as set, thread counts and data-loader workers, the
// GPU, CUDA and cuDNN it used, env): validated like a manifest and merged over what capture probed
// from outside (the job's values win; a job that names its framework and no GPU used none, so
// nvidia-smi's GPUs are dropped). image and lockfile are refused there: capture hashes those
// itself. Returns one line per fact worth telling the user (what was taken, what is absent).
Result<std::vector<std::string>> merge_job_environment(const nlohmann::json& result,
                                                       Environment& env);

// The variables of the current environment that change numerics (thread counts, hash seed,
// cuBLAS workspace, ...): recorded so the rebuild gets them too.
std::map<std::string, std::string> determinism_env();

}  // namespace reverify::cli
