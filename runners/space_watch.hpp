#pragma once
// The space a job needs (its scratch and out folder, the scratch root, the daemon's state_dir):
// checked before the job starts and sampled while it runs, so that a job failing on a full or
// read-only file system is reported as the platform's fault (error:infra) with the evidence —
// which path, how much was left, what the kernel said — never as the job's (docs/design.md, verdict
// classes: a full state volume must never page the model's owner as error:job).
//
// Evidence, any one of which makes a failed job the platform's fault:
// - a watched file system that was full (under 1 MiB, or no inode, free to the job's user) or
//   read-only at some sample while the job ran, or when it ended;
// - a write of the job's own log that the kernel refused with ENOSPC, EDQUOT or EROFS;
// - the kernel's words for those errors ("No space left on device", ...) in the job's last log
//   lines: the job was told so by the kernel, wherever it wrote (a host /tmp, say).
// Not thread-safe: one thread samples; fault() is read after that thread is done.

#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.hpp"
#include "runners/runner.hpp"
#include "runners/runner_config.hpp"

namespace reverify {

// Free space below this (to the job's user) counts as full: a write that needs a block fails.
inline constexpr std::uint64_t kFullBelowBytes = 1024 * 1024;

// A write of the job's log that the kernel refused.
struct LogWriteError {
  int error_number = 0;        // errno: ENOSPC, EDQUOT, EROFS, EIO ...
  std::filesystem::path path;  // job.log
  std::uint64_t written = 0;   // bytes of the log on disk before it
};

class SpaceWatch {
 public:
  // Watches `paths` (those that do not exist yet are watched through their nearest existing
  // parent); one statvfs per distinct file system per sample.
  SpaceWatch(const std::vector<std::filesystem::path>& paths, const SpaceWatchConfig& config);

  // error infra naming the path when a watched file system is read-only or has less than
  // config.min_free_bytes / min_free_inodes free: a job started there would fail for it.
  Status check_before_start() const;
  // Records each file system's free space; keeps the lowest seen and whether it was read-only.
  void sample();
  // The platform's fault behind a failed job, from the samples, a refused log write and the job's
  // last log lines (see above); nullopt when there is no such evidence.
  std::optional<PlatformFault> fault(std::string_view log_tail,
                                     const std::optional<LogWriteError>& log_error) const;

 private:
  struct Watched {
    std::filesystem::path path;  // the first path given on this file system
    dev_t device = 0;
    bool sampled = false;
    std::uint64_t total_bytes = 0;
    std::uint64_t lowest_free_bytes = 0;
    std::uint64_t lowest_free_inodes = 0;
    bool has_inodes = false;  // the file system counts inodes (f_files > 0)
    bool read_only = false;
  };
  SpaceWatchConfig config_;
  std::vector<Watched> watched_;
};

// "No space left on device (ENOSPC)" for the errors a full or read-only file system gives; the
// plain strerror text for any other.
std::string describe_errno(int error_number);

}  // namespace reverify
