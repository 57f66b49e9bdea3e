#pragma once
// The state folder (config state_dir: reverify.db, work/, scratch/): who owns it and the runs in
// it, and its store, which is never made anew where the folder shows it held one.
//
// Owners. Each lock is a flock(2) on a file under state_dir, which the kernel drops when the
// holder ends, however it ends (kill -9 included), so a live holder is told from a dead one
// without trusting pids; the file also holds the holder's pid and what it is, to name it.
//   - reverifyd holds <state_dir>/reverifyd.lock exclusively for its whole life
//     (StateLock::whole), and `reverify restore` while it replaces the store: a second reverifyd,
//     or a restore beside a running one, is refused with the holder's pid.
//   - `reverify run --config` owns the model version it verifies while its process lives
//     (StateLock::version: <state_dir>/owners/<model>@<version>.lock), taken before it writes its
//     row running. It does not take the daemon's lock: it runs beside a reverifyd on the same
//     state_dir (`gate` and the status page see its verdict at once), and the two never act on
//     the same row, because reverifyd leaves a running row of `reverify run` (trigger cli) to its
//     owner while the owner lives, and reconciles it (reattach, or error:runner-lost) once the
//     owner is gone, holding the version's lock while it does (daemon/daemon.hpp); the next
//     `reverify run` of that version does the same before it starts.
//   - `reverify calibrate --config` takes no lock: it writes only the calibration row it creates,
//     which nobody else writes; the newest calibration of a version counts.
//
// History. A store that is missing or empty (0 bytes) while the state folder shows that it held
// one (the marker <state_dir>/reverify.store-id, which every writer keeps up to date, or entries
// left in the work or scratch folders) is refused, never made anew in silence: its verifications
// and its page numbering would be gone. The error names the path and the two ways on: restore a
// backup (`reverify restore --config FILE BACKUP`) or start over on purpose (`reverify restore
// --config FILE --empty`).
//
// Blocking (file locks, SQLite): call from a worker thread or a command, never the event loop.

#include <chrono>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.hpp"
#include "core/unix_time.hpp"
#include "settings/config.hpp"
#include "store/store.hpp"

namespace reverify {

class StateLock {
 public:
  // The exclusive hold on the whole state_dir (reverifyd, `reverify restore`); `holder` names
  // this process in the lock file. conflict, naming the holder's pid, when another process holds
  // it.
  static Result<StateLock> whole(const std::filesystem::path& state_dir, std::string_view holder);
  // A `reverify run`'s hold on one model version, or reverifyd's while it reconciles a run whose
  // owner is gone. Waits up to `patience` (a reconciler's check holds the lock for an instant);
  // conflict, naming the holder, when another process keeps it.
  static Result<StateLock> version(const std::filesystem::path& state_dir, const std::string& model,
                                   const std::string& version, std::string_view holder,
                                   std::chrono::milliseconds patience = std::chrono::seconds(1));
  StateLock(StateLock&& other) noexcept;
  StateLock& operator=(StateLock&&) = delete;
  StateLock(const StateLock&) = delete;
  ~StateLock();  // releases it

 private:
  explicit StateLock(int fd) : fd_(fd) {}
  int fd_;
};

// Who holds a version's lock, as its file says ("pid 1234 (reverify run)"); "" when nobody
// does: a running row of `reverify run` of that version is then an orphan, its process gone.
std::string run_owner(const std::filesystem::path& state_dir, const std::string& model,
                      const std::string& version);

// Whether a missing or empty store may be made anew.
enum class NewStore {
  refuse_where_history,  // every process that writes (reverifyd, `reverify run/calibrate`)
  allow,                 // `reverify restore --empty`: starting over is what was asked
};

// The state_dir's store, migrated, for writing; refused (conflict) when it is missing or empty
// where the folder shows history. Keeps the marker <state_dir>/reverify.store-id up to date.
Result<std::unique_ptr<Store>> open_state_store(
    const Config& config, ClockFn clock, NewStore new_store = NewStore::refuse_where_history);

// `reverify restore`: replaces the state_dir's store with a copy of `backup` (a file `reverify
// backup` wrote), or with a new, empty store when `backup` is nullopt. Holds the state_dir's lock
// while it works (refused while reverifyd runs) and is refused while a `reverify run` owns a
// version, when the backup is not a readable, intact store, and when the store in place holds
// verifications (restore never overwrites history: move it aside first). The restored store gets
// an id of its own (store/store.hpp). Returns it, opened.
Result<std::unique_ptr<Store>> restore_state_store(
    const Config& config, const std::optional<std::filesystem::path>& backup, ClockFn clock);

}  // namespace reverify
