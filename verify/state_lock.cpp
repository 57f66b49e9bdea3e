// The owners of a state folder (verify/state_dir.hpp): reverifyd's lock on the folder itself and
// a `reverify run`'s lock on its model version, each found and named even when a file that names
// it was deleted.
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <thread>

#include "verify/flock_holders.hpp"
#include "verify/state_dir.hpp"

namespace reverify {
namespace {

namespace fs = std::filesystem;

// Names whoever holds the whole state_dir: reverifyd writes it here, but the lock is the folder's.
fs::path whole_label_path(const fs::path& state_dir) {
  return state_dir / "reverifyd.lock";
}

// Model and version names are validated ([A-Za-z0-9][A-Za-z0-9._-]*): safe in a file name.
fs::path version_lock_path(const fs::path& state_dir, const std::string& model,
                           const std::string& version) {
  return state_dir / "owners" / (model + "@" + version + ".lock");
}

// What a lock file (or the folder's label) says of its holder: "1234 reverifyd".
struct Label {
  pid_t pid = 0;
  std::string what;
};
std::optional<Label> label_in(const fs::path& path) {
  std::ifstream in(path);
  Label label;
  long pid = 0;
  if (!(in >> pid) || pid <= 0)
    return std::nullopt;
  label.pid = pid_t(pid);
  std::getline(in >> std::ws, label.what);
  return label;
}
std::string named(const Label& label) {
  return "pid " + std::to_string(label.pid) + (label.what.empty() ? "" : " (" + label.what + ")");
}

// Only to name the holder in someone else's refusal: a failed write costs nothing else.
void write_label(int fd, std::string_view holder) {
  const std::string line = std::to_string(::getpid()) + " " + std::string(holder) + "\n";
  if (::ftruncate(fd, 0) == 0)
    (void)!::pwrite(fd, line.data(), line.size(), 0);
}

// Whether another open file description holds the lock on `path` (a shared lock taken and
// dropped at once).
bool held_by_another(const fs::path& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return false;  // never taken, or deleted: deleted_holder() looks for a holder of the old file
  const bool held = ::flock(fd, LOCK_SH | LOCK_NB) != 0 && errno == EWOULDBLOCK;
  ::close(fd);
  return held;
}

// Who holds a version's lock file that was deleted while held: "" when nobody does.
std::string deleted_holder(const fs::path& lock_path) {
  for (const auto& held : deleted_locks_held(lock_path.parent_path())) {
    if (held.path.filename() == lock_path.filename()) {
      return process_named(held.pid) + ", whose lock file " + held.path.string() +
             " was deleted while it held it";
    }
  }
  return {};
}

// Whether `fd` is the file at `path` now (not one deleted or replaced after it was opened).
bool is_at(int fd, const fs::path& path) {
  struct stat held {
  }, there{};
  return ::fstat(fd, &held) == 0 && ::stat(path.c_str(), &there) == 0 &&
         held.st_dev == there.st_dev && held.st_ino == there.st_ino;
}

// An exclusive flock on the version's lock file, tried for `patience`. Taken only when the file
// locked is the one at the path and no live process holds one that was deleted from there.
Result<int> lock_version_file(const fs::path& path, std::string_view holder,
                              std::chrono::milliseconds patience, const std::string& what) {
  std::error_code ec;
  fs::create_directories(path.parent_path(), ec);
  const auto deadline = std::chrono::steady_clock::now() + patience;
  for (;;) {
    const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0640);
    if (fd < 0)
      return make_error(ErrorCode::io, path.string() + ": cannot open: " + std::strerror(errno));
    std::string holder_now;
    if (::flock(fd, LOCK_EX | LOCK_NB) == 0) {
      if (is_at(fd, path)) {
        holder_now = deleted_holder(path);
        if (holder_now.empty()) {
          write_label(fd, holder);
          return fd;
        }
      }  // else replaced between the open and the lock: lock the file there now
    } else if (errno != EWOULDBLOCK) {
      const int error = errno;
      ::close(fd);
      return make_error(ErrorCode::io, path.string() + ": cannot lock: " + std::strerror(error));
    } else {
      const auto label = label_in(path);
      holder_now = label ? named(*label) : "a process that has not written its pid yet";
    }
    ::close(fd);
    if (std::chrono::steady_clock::now() >= deadline && !holder_now.empty())
      return make_error(ErrorCode::conflict, what + " is held by " + holder_now);
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

// Who holds the folder's lock: its label when the kernel agrees, else the kernel's holder.
std::string whole_holder(const fs::path& state_dir) {
  const auto holders = flock_holders(state_dir);
  const auto label = label_in(whole_label_path(state_dir));
  for (pid_t pid : holders) {
    if (label && label->pid == pid)
      return named(*label);
  }
  return holders.empty() ? "another process" : process_named(holders.front());
}

}  // namespace

Result<StateLock> StateLock::whole(const fs::path& state_dir, std::string_view holder) {
  std::error_code ec;
  fs::create_directories(state_dir, ec);
  // The folder itself is locked: no file in it can be deleted to free it.
  const int fd = ::open(state_dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) {
    return make_error(ErrorCode::io,
                      "state_dir " + state_dir.string() + ": cannot open: " + std::strerror(errno));
  }
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int error = errno;
    ::close(fd);
    if (error != EWOULDBLOCK) {
      return make_error(ErrorCode::io, "state_dir " + state_dir.string() +
                                           ": cannot lock: " + std::strerror(error));
    }
    return make_error(ErrorCode::conflict,
                      "state_dir " + state_dir.string() + " is held by " + whole_holder(state_dir));
  }
  const int label = ::open(whole_label_path(state_dir).c_str(),
                           O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0640);
  if (label >= 0) {
    write_label(label, holder);
    ::close(label);
  }
  return StateLock(fd);
}

Result<StateLock> StateLock::version(const fs::path& state_dir, const std::string& model,
                                     const std::string& version, std::string_view holder,
                                     std::chrono::milliseconds patience) {
  auto fd = lock_version_file(version_lock_path(state_dir, model, version), holder, patience,
                              model + "@" + version + " on this state_dir");
  if (!fd.ok())
    return fd.error();
  return StateLock(*fd);
}

StateLock::StateLock(StateLock&& other) noexcept : fd_(other.fd_) {
  other.fd_ = -1;
}

StateLock::~StateLock() {
  if (fd_ >= 0)
    ::close(fd_);  // releases the lock
}

std::string run_owner(const fs::path& state_dir, const std::string& model,
                      const std::string& version) {
  const fs::path path = version_lock_path(state_dir, model, version);
  if (held_by_another(path)) {
    const auto label = label_in(path);
    return label ? named(*label) : "a process that has not written its pid yet";
  }
  return deleted_holder(path);
}

std::vector<std::string> live_run_owners(const fs::path& state_dir) {
  std::vector<std::string> owners;
  const fs::path folder = state_dir / "owners";
  std::error_code ec;
  for (auto it = fs::directory_iterator(folder, ec); !ec && it != fs::directory_iterator();
       it.increment(ec)) {
    if (it->path().extension() == ".lock" && held_by_another(it->path())) {
      const auto label = label_in(it->path());
      owners.push_back(it->path().stem().string() + " (" +
                       (label ? named(*label) : std::string("a process")) + ")");
    }
  }
  for (const auto& held : deleted_locks_held(folder)) {
    owners.push_back(held.path.stem().string() + " (" + process_named(held.pid) +
                     ", its lock file deleted)");
  }
  return owners;
}

}  // namespace reverify
