#include "verify/run_owner.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

namespace reverify {
namespace {

// Model and version names are validated ([A-Za-z0-9][A-Za-z0-9._-]*): safe in a file name.
std::filesystem::path lock_path(const std::filesystem::path& state_dir, const std::string& model,
                                const std::string& version) {
  return state_dir / "owners" / (model + "@" + version + ".lock");
}

}  // namespace

Result<RunOwnership> RunOwnership::acquire(const std::filesystem::path& state_dir,
                                           const std::string& model, const std::string& version) {
  const auto path = lock_path(state_dir, model, version);
  std::error_code ec;
  std::filesystem::create_directories(path.parent_path(), ec);
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0640);
  if (fd < 0) {
    return make_error(ErrorCode::io, path.string() + ": cannot open: " + std::strerror(errno));
  }
  // A reconciler's check holds the lock shared for an instant: try for a moment before refusing.
  int error = 0;
  for (int tries = 0; tries < 100; ++tries) {
    if (::flock(fd, LOCK_EX | LOCK_NB) == 0)
      return RunOwnership(fd);
    error = errno;
    if (error != EWOULDBLOCK)
      break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  {
    ::close(fd);
    if (error == EWOULDBLOCK) {
      return make_error(ErrorCode::conflict, "another `reverify run` of " + model + "@" + version +
                                                 " is in progress on this state_dir");
    }
    return make_error(ErrorCode::io, path.string() + ": cannot lock: " + std::strerror(error));
  }
}

RunOwnership::RunOwnership(RunOwnership&& other) noexcept : fd_(other.fd_) {
  other.fd_ = -1;
}

RunOwnership::~RunOwnership() {
  if (fd_ >= 0)
    ::close(fd_);  // releases the lock
}

bool run_owner_alive(const std::filesystem::path& state_dir, const std::string& model,
                     const std::string& version) {
  const int fd = ::open(lock_path(state_dir, model, version).c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return false;  // never owned, or owned before this file existed: nobody holds it
  const bool held = ::flock(fd, LOCK_SH | LOCK_NB) != 0 && errno == EWOULDBLOCK;
  ::close(fd);
  return held;
}

bool is_orphaned_cli_run(const VerificationRow& row, const std::filesystem::path& state_dir) {
  return row.state == VerificationState::running && row.trigger == VerificationTrigger::cli &&
         !run_owner_alive(state_dir, row.model, row.version);
}

}  // namespace reverify
