#pragma once
// Who holds an flock(2), as the kernel tells it (/proc/locks, /proc/<pid>/fd, /proc/<pid>/comm):
// for the state folder's locks (verify/state_dir.hpp), whose holders must be found and named even
// when the file a holder locked was deleted while it held it (an operator removing a "stale" lock
// file), which leaves no path to ask. Linux only. A process whose /proc/<pid>/fd cannot be read
// (another user's, without privilege) is not seen: reverify's processes on one state folder run
// as one user.
//
// Blocking (reads /proc): call from a worker thread or a command, never the event loop.

#include <sys/types.h>

#include <filesystem>
#include <string>
#include <vector>

namespace reverify {

// The processes that hold an flock on the file or folder `path` names now.
std::vector<pid_t> flock_holders(const std::filesystem::path& path);

// A lock file deleted while a live process held an exclusive flock on it: where it was, and who.
struct DeletedLockHeld {
  std::filesystem::path path;  // as it was, absolute
  pid_t pid = 0;
};
// Those that were files directly in `folder`.
std::vector<DeletedLockHeld> deleted_locks_held(const std::filesystem::path& folder);

// "pid 1234 (reverifyd)": the pid and the process's name (/proc/<pid>/comm), or the pid alone.
std::string process_named(pid_t pid);

}  // namespace reverify
