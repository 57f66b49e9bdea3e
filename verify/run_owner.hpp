#pragma once
// Who owns a verification that `reverify run --config` wrote running (trigger "cli"): the CLI
// process, for as long as it lives. It holds an exclusive flock on
// <state_dir>/owners/<model>@<version>.lock; the kernel releases it when the process ends,
// however it ends (kill -9 included), so a reconciler tells a live run from a dead one without
// trusting pids. A row whose owner is gone is an orphan: reverifyd reconciles it on its next
// tick and the next `reverify run` of that version before it starts (reattach or
// error:runner-lost), so no row outlives its process without a verdict or a reconciler.

#include <filesystem>
#include <string>

#include "core/result.hpp"
#include "store/store.hpp"

namespace reverify {

class RunOwnership {
 public:
  // conflict when another live process owns a run of this version.
  static Result<RunOwnership> acquire(const std::filesystem::path& state_dir,
                                      const std::string& model, const std::string& version);
  RunOwnership(RunOwnership&& other) noexcept;
  RunOwnership& operator=(RunOwnership&&) = delete;
  RunOwnership(const RunOwnership&) = delete;
  ~RunOwnership();

 private:
  explicit RunOwnership(int fd) : fd_(fd) {}
  int fd_;
};

// True while a live process owns a `reverify run` of this version.
bool run_owner_alive(const std::filesystem::path& state_dir, const std::string& model,
                     const std::string& version);

// A row a `reverify run` wrote running and whose process has ended.
bool is_orphaned_cli_run(const VerificationRow& row, const std::filesystem::path& state_dir);

}  // namespace reverify
