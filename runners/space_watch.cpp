#include "runners/space_watch.hpp"

#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "runners/log_tail.hpp"

namespace reverify {
namespace {

// The nearest existing folder at or above `path` (a job's out folder may not exist yet).
std::filesystem::path existing(std::filesystem::path path) {
  std::error_code ec;
  path = std::filesystem::absolute(path, ec);
  while (!path.empty() && !std::filesystem::exists(path, ec) && path != path.root_path())
    path = path.parent_path();
  return path;
}

struct Space {
  std::uint64_t total_bytes = 0;
  std::uint64_t free_bytes = 0;
  std::uint64_t free_inodes = 0;
  bool has_inodes = false;
  bool read_only = false;
};

// Free to the job's user: the job runs as the daemon's uid, and only root may use the blocks a
// file system reserves for it.
std::optional<Space> space_of(const std::filesystem::path& path) {
  struct statvfs vfs {};
  if (::statvfs(path.c_str(), &vfs) != 0)
    return std::nullopt;
  const bool root = ::geteuid() == 0;
  Space space;
  space.total_bytes = static_cast<std::uint64_t>(vfs.f_blocks) * vfs.f_frsize;
  space.free_bytes = static_cast<std::uint64_t>(root ? vfs.f_bfree : vfs.f_bavail) * vfs.f_frsize;
  space.has_inodes = vfs.f_files > 0;
  space.free_inodes = root ? vfs.f_ffree : vfs.f_favail;
  space.read_only = (vfs.f_flag & ST_RDONLY) != 0;
  return space;
}

const char* errno_name(int error_number) {
  switch (error_number) {
    case ENOSPC:
      return "ENOSPC";
    case EDQUOT:
      return "EDQUOT";
    case EROFS:
      return "EROFS";
    default:
      return nullptr;
  }
}

bool is_space_errno(int error_number) {
  return errno_name(error_number) != nullptr;
}

std::string mib(std::uint64_t bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f MiB", static_cast<double>(bytes) / (1024.0 * 1024.0));
  return text;
}

}  // namespace

std::string describe_errno(int error_number) {
  const char* name = errno_name(error_number);
  std::string text = std::strerror(error_number);
  return name ? text + " (" + name + ")" : text;
}

SpaceWatch::SpaceWatch(const std::vector<std::filesystem::path>& paths,
                       const SpaceWatchConfig& config)
    : config_(config) {
  for (const auto& given : paths) {
    if (given.empty())
      continue;
    const auto path = existing(given);
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0)
      continue;
    const bool known = std::any_of(watched_.begin(), watched_.end(),
                                   [&](const Watched& w) { return w.device == st.st_dev; });
    if (!known)
      watched_.push_back(Watched{given, st.st_dev});
  }
}

Status SpaceWatch::check_before_start() const {
  for (const auto& w : watched_) {
    const auto space = space_of(existing(w.path));
    if (!space)
      continue;
    const std::string where = w.path.string() + ": ";
    if (space->read_only) {
      return make_error(ErrorCode::infra,
                        where + "the file system is read-only; the job cannot write there");
    }
    if (space->free_bytes < config_.min_free_bytes) {
      return make_error(ErrorCode::infra,
                        where + mib(space->free_bytes) + " free of " + mib(space->total_bytes) +
                            ", under the " + mib(config_.min_free_bytes) +
                            " a job needs to start (runner.space.min_free_bytes)");
    }
    if (space->has_inodes && space->free_inodes < config_.min_free_inodes) {
      return make_error(ErrorCode::infra,
                        where + std::to_string(space->free_inodes) + " inodes free, under the " +
                            std::to_string(config_.min_free_inodes) +
                            " a job needs to start (runner.space.min_free_inodes)");
    }
  }
  return {};
}

void SpaceWatch::sample() {
  for (auto& w : watched_) {
    const auto space = space_of(existing(w.path));
    if (!space)
      continue;
    if (!w.sampled) {
      w.lowest_free_bytes = space->free_bytes;
      w.lowest_free_inodes = space->free_inodes;
    }
    w.sampled = true;
    w.total_bytes = space->total_bytes;
    w.has_inodes = space->has_inodes;
    w.lowest_free_bytes = std::min(w.lowest_free_bytes, space->free_bytes);
    w.lowest_free_inodes = std::min(w.lowest_free_inodes, space->free_inodes);
    w.read_only = w.read_only || space->read_only;
  }
}

std::optional<PlatformFault> SpaceWatch::fault(
    std::string_view log_tail, const std::optional<LogWriteError>& log_error) const {
  nlohmann::json evidence = nlohmann::json::object();
  std::vector<std::string> reasons;
  nlohmann::json file_systems = nlohmann::json::array();
  bool read_only = false;  // else full
  for (const auto& w : watched_) {
    if (!w.sampled)
      continue;
    const bool full =
        w.lowest_free_bytes < kFullBelowBytes || (w.has_inodes && w.lowest_free_inodes == 0);
    if (!full && !w.read_only)
      continue;
    file_systems.push_back({{"path", w.path.string()},
                            {"read_only", w.read_only},
                            {"lowest_free_bytes", w.lowest_free_bytes},
                            {"lowest_free_inodes", w.lowest_free_inodes},
                            {"total_bytes", w.total_bytes}});
    read_only = read_only || w.read_only;
    if (w.read_only) {
      reasons.push_back("the file system of " + w.path.string() +
                        " was read-only while the job ran");
    } else {
      reasons.push_back("the file system of " + w.path.string() + " was full while the job ran (" +
                        std::to_string(w.lowest_free_bytes) + " bytes and " +
                        std::to_string(w.lowest_free_inodes) + " inodes free at the lowest, of " +
                        mib(w.total_bytes) + ")");
    }
  }
  if (!file_systems.empty())
    evidence["file_systems"] = file_systems;
  if (log_error && is_space_errno(log_error->error_number)) {
    read_only = read_only || log_error->error_number == EROFS;
    evidence["log_write"] = {{"path", log_error->path.string()},
                             {"error", describe_errno(log_error->error_number)},
                             {"bytes_written", log_error->written}};
    reasons.push_back("writing the job's log " + log_error->path.string() +
                      " failed: " + describe_errno(log_error->error_number));
  }
  const std::string_view last = last_lines(log_tail, 10);
  for (int error_number : {ENOSPC, EDQUOT, EROFS}) {
    const std::string words = std::strerror(error_number);
    if (last.find(words) != std::string_view::npos) {
      evidence["kernel_said"] = describe_errno(error_number);
      read_only = read_only || error_number == EROFS;
      reasons.push_back("the kernel answered the job's writes " + describe_errno(error_number) +
                        " (its last log lines say so)");
      break;
    }
  }
  if (reasons.empty())
    return std::nullopt;
  std::string reason = "the platform failed under the job, not the job itself: ";
  for (std::size_t i = 0; i < reasons.size(); ++i)
    reason += (i ? "; " : "") + reasons[i];
  evidence["kind"] = read_only ? "read_only_file_system" : "disk_full";
  return PlatformFault{reason, evidence};
}

}  // namespace reverify
