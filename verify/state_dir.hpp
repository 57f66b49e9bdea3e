#pragma once
// The state folder (config state_dir: reverify.db, work/, scratch/): who owns it and the runs in
// it, and its store, which is never made anew where the folder shows it held one, and never taken
// back from an older copy in silence.
//
// Owners. Each lock is a flock(2), which the kernel drops when the holder ends, however it ends
// (kill -9 included), so a live holder is told from a dead one without trusting pids. No lock can
// be defeated by deleting a file (operators remove "stale" lock files):
//   - reverifyd holds the state_dir folder itself exclusively for its whole life
//     (StateLock::whole), and `reverify restore` while it replaces the store: a second reverifyd,
//     or a restore beside a running one, is refused, naming the holder. The folder cannot go
//     while it holds the store; <state_dir>/reverifyd.lock only names the holder (pid and what it
//     is), and where it is gone the holder is named from the kernel's table of locks.
//   - `reverify run --config` owns the model version it verifies while its process lives
//     (StateLock::version: a flock on <state_dir>/owners/<model>@<version>.lock), taken before it
//     writes its row running. A lock file deleted while held stays held: the kernel's table of
//     locks and the holder's open files still show it (verify/flock_holders.hpp), so the version
//     stays owned (run_owner names the holder), and a lock is taken only on the file at the path
//     when nobody holds one deleted from there. It does not take the daemon's lock: it runs beside
//     a reverifyd on the same state_dir (`gate` and the status page see its verdict at once), and
//     the two never act on the same row, because reverifyd leaves a running row of `reverify run`
//     (trigger cli) to its owner while the owner lives, and reconciles it (reattach, or
//     error:runner-lost) once the owner is gone, holding the version's lock while it does
//     (daemon/daemon.hpp); the next `reverify run` of that version does the same before it starts.
//   - `reverify calibrate --config` takes no lock: it writes only the calibration row it creates,
//     which nobody else writes; the newest calibration of a version counts.
//
// History. Every writer (reverifyd, `reverify run/calibrate --config`, `reverify restore`) keeps
// the marker <state_dir>/reverify.store-id (verify/store_marker.hpp): the store's id, and the
// highest verification and page ids handed out in this folder, written after each commit that
// hands one out and before the call returns (Store::keep_high_water).
//   - A store that is missing or empty (0 bytes) while the folder shows that it held one (the
//     marker, or entries left in the work or scratch folders) is refused, never made anew in
//     silence: its verifications and its page numbering would be gone.
//   - A store whose file has handed out fewer ids than the marker records was put back from an
//     older copy (a file-system snapshot, a copied file) and is refused: going on would hand out
//     verification ids that earlier pages link to other verifications, and page keys receivers
//     already hold for other pages. A backup copy put in place (adopted at open: a restore) is not
//     refused: its ids continue after the marker's.
// Each refusal names the path and the ways on: put the newest file back, restore a backup
// (`reverify restore --config FILE BACKUP`, which takes any intact store file) or start over on
// purpose (`reverify restore --config FILE --empty`). A restored or new store gets an id of its
// own (store/store.hpp) and continues the ids after the marker's, so no id and no page key repeats
// in a state folder while its marker lives.
//
// Blocking (file locks, /proc, SQLite): call from a worker thread or a command, never the event
// loop.

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
  // this process in <state_dir>/reverifyd.lock. conflict, naming the holder's pid, when another
  // process holds it.
  static Result<StateLock> whole(const std::filesystem::path& state_dir, std::string_view holder);
  // A `reverify run`'s hold on one model version, or reverifyd's while it reconciles a run whose
  // owner is gone. Waits up to `patience` (a reconciler's check holds the lock for an instant);
  // conflict, naming the holder, when another process keeps it (its lock file deleted or not).
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

// Who holds a version's lock ("pid 1234 (reverify run)"), its lock file deleted or not; "" when
// nobody does: a running row of `reverify run` of that version is then an orphan, its process
// gone.
std::string run_owner(const std::filesystem::path& state_dir, const std::string& model,
                      const std::string& version);

// The versions a live `reverify run` owns: "m@v (pid 1234 (reverify run))".
std::vector<std::string> live_run_owners(const std::filesystem::path& state_dir);

// Whether a missing or empty store may be made anew, and one behind the marker continued.
enum class NewStore {
  refuse_where_history,  // every process that writes (reverifyd, `reverify run/calibrate`)
  allow,                 // `reverify restore`: a new or restored store is what was asked
};

// The state_dir's store, migrated, for writing; refused (conflict) when it is missing or empty
// where the folder shows history, or older than the marker (above, "History"). Keeps the marker.
Result<std::unique_ptr<Store>> open_state_store(
    const Config& config, ClockFn clock, NewStore new_store = NewStore::refuse_where_history);

// `reverify backup`: the state_dir's store, read-only, refused (conflict) where a writer's open
// would be (missing or empty where the folder shows history, older than the marker) and when it
// is missing or empty at all: a backup of nothing (no verification, no store id) would rotate the
// good copies out.
Result<std::unique_ptr<Store>> open_state_store_to_copy(const Config& config, ClockFn clock);

// `reverify restore`: replaces the state_dir's store with a copy of `backup` (a file `reverify
// backup` wrote, or any intact store file), or with a new, empty store when `backup` is nullopt.
// Holds the state_dir's lock while it works (refused while reverifyd runs) and is refused while a
// `reverify run` owns a version, when the backup is not a readable, intact store, and when the
// store in place holds verifications (restore never overwrites history: move it aside first).
// The restored store gets an id of its own (store/store.hpp) and its ids continue after the
// marker's. Returns it, opened.
Result<std::unique_ptr<Store>> restore_state_store(
    const Config& config, const std::optional<std::filesystem::path>& backup, ClockFn clock);

}  // namespace reverify
