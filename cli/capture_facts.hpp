#pragma once
// What `reverify capture` reads from the machine and the code checkout it runs in: git state,
// interpreter and framework versions, accelerator facts, determinism variables. Blocking.

#include <filesystem>
#include <map>
#include <optional>
#include <string>

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

// nvidia-smi when present (GPU model, count, driver); otherwise the CPU model with count 0.
Accelerator read_accelerator();

std::string host_name();

// `<python> -c ...`: the interpreter's version, and a module's __version__.
Result<std::string> python_version(const std::string& python);
Result<std::string> module_version(const std::string& python, const std::string& module);

// The variables of the current environment that change numerics (thread counts, hash seed,
// cuBLAS workspace, ...): recorded so the rebuild gets them too.
std::map<std::string, std::string> determinism_env();

}  // namespace reverify::cli
