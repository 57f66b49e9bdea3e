#include "verify/flock_holders.hpp"

#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <fstream>
#include <map>
#include <set>
#include <sstream>

namespace reverify {
namespace {

namespace fs = std::filesystem;

struct HeldFlock {
  pid_t pid = 0;
  ino_t inode = 0;
};

// The flocks /proc/locks lists on `device` ("1: FLOCK  ADVISORY  WRITE 1234 fe:00:5678 0 EOF":
// major and minor in hex, the inode in decimal); exclusive ones only when `exclusive`. A waiter
// ("1: -> FLOCK ...") holds nothing.
std::vector<HeldFlock> flocks_on(dev_t device, bool exclusive) {
  std::vector<HeldFlock> held;
  std::ifstream locks("/proc/locks");
  for (std::string line; std::getline(locks, line);) {
    std::istringstream in(line);
    std::string number, type, advisory, access, where;
    long pid = 0;
    if (!(in >> number >> type >> advisory >> access >> pid >> where) || type != "FLOCK" ||
        (exclusive && access != "WRITE")) {
      continue;
    }
    unsigned major_number = 0, minor_number = 0;
    unsigned long long inode = 0;
    if (std::sscanf(where.c_str(), "%x:%x:%llu", &major_number, &minor_number, &inode) != 3)
      continue;
    if (major_number == major(device) && minor_number == minor(device) && pid > 0)
      held.push_back({pid_t(pid), ino_t(inode)});
  }
  return held;
}

}  // namespace

std::vector<pid_t> flock_holders(const fs::path& path) {
  struct stat st {};
  std::vector<pid_t> pids;
  if (::stat(path.c_str(), &st) != 0)
    return pids;
  for (const auto& lock : flocks_on(st.st_dev, false)) {
    if (lock.inode == st.st_ino)
      pids.push_back(lock.pid);
  }
  return pids;
}

std::vector<DeletedLockHeld> deleted_locks_held(const fs::path& folder) {
  std::vector<DeletedLockHeld> found;
  std::error_code ec;
  const fs::path where = fs::weakly_canonical(fs::absolute(folder, ec), ec);
  struct stat st {};
  if (ec || ::stat(where.c_str(), &st) != 0)
    return found;
  std::map<pid_t, std::set<ino_t>> by_pid;
  for (const auto& lock : flocks_on(st.st_dev, true))
    by_pid[lock.pid].insert(lock.inode);
  constexpr std::string_view kDeleted = " (deleted)";
  for (const auto& [pid, inodes] : by_pid) {
    const fs::path fds = "/proc/" + std::to_string(pid) + "/fd";
    for (auto it = fs::directory_iterator(fds, ec); !ec && it != fs::directory_iterator();
         it.increment(ec)) {
      struct stat target {};
      if (::stat(it->path().c_str(), &target) != 0 || target.st_dev != st.st_dev ||
          !inodes.count(target.st_ino)) {
        continue;
      }
      std::error_code link_error;
      const std::string link = fs::read_symlink(it->path(), link_error).string();
      if (link_error || link.size() <= kDeleted.size() ||
          link.compare(link.size() - kDeleted.size(), kDeleted.size(), kDeleted) != 0) {
        continue;
      }
      const fs::path was = link.substr(0, link.size() - kDeleted.size());
      if (was.parent_path() == where)
        found.push_back({was, pid});
    }
    ec.clear();
  }
  return found;
}

std::string process_named(pid_t pid) {
  std::ifstream comm("/proc/" + std::to_string(pid) + "/comm");
  std::string name;
  std::getline(comm, name);
  return "pid " + std::to_string(pid) + (name.empty() ? "" : " (" + name + ")");
}

}  // namespace reverify
