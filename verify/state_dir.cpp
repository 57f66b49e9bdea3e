#include "verify/state_dir.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <set>
#include <thread>

namespace reverify {
namespace {

namespace fs = std::filesystem;

constexpr const char* kStoreMarker = "reverify.store-id";

fs::path whole_lock_path(const fs::path& state_dir) {
  return state_dir / "reverifyd.lock";
}

// Model and version names are validated ([A-Za-z0-9][A-Za-z0-9._-]*): safe in a file name.
fs::path version_lock_path(const fs::path& state_dir, const std::string& model,
                           const std::string& version) {
  return state_dir / "owners" / (model + "@" + version + ".lock");
}

// The holder a lock file names: "pid 1234 (reverifyd)".
std::string holder_named_in(const fs::path& path) {
  std::ifstream in(path);
  std::string pid, what;
  if (!(in >> pid))
    return "a process that has not written its pid yet";
  std::getline(in >> std::ws, what);
  return "pid " + pid + (what.empty() ? "" : " (" + what + ")");
}

// Whether another process holds the lock on `path` (a shared lock taken and dropped at once).
bool held_by_another(const fs::path& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return false;  // never taken, or taken before this file existed: nobody holds it
  const bool held = ::flock(fd, LOCK_SH | LOCK_NB) != 0 && errno == EWOULDBLOCK;
  ::close(fd);
  return held;
}

// An exclusive flock on `path` (created if needed), tried for `patience`, with this process's pid
// and `holder` written into the file once held. `what` names what the lock guards, for errors.
Result<int> lock_exclusive(const fs::path& path, std::string_view holder,
                           std::chrono::milliseconds patience, const std::string& what) {
  std::error_code ec;
  fs::create_directories(path.parent_path(), ec);
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0640);
  if (fd < 0)
    return make_error(ErrorCode::io, path.string() + ": cannot open: " + std::strerror(errno));
  const auto deadline = std::chrono::steady_clock::now() + patience;
  while (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int error = errno;
    if (error != EWOULDBLOCK) {
      ::close(fd);
      return make_error(ErrorCode::io, path.string() + ": cannot lock: " + std::strerror(error));
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      ::close(fd);
      return make_error(ErrorCode::conflict,
                        what + " is held by " + holder_named_in(path) + " (" + path.string() + ")");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  // Only to name the holder in someone else's refusal: a failed write costs nothing else.
  const std::string line = std::to_string(::getpid()) + " " + std::string(holder) + "\n";
  if (::ftruncate(fd, 0) == 0)
    (void)!::pwrite(fd, line.data(), line.size(), 0);
  return fd;
}

// Why there is no store to open: the file is missing, or holds no schema (0 bytes, and no WAL
// holding one); nullopt when it holds a store, or when what it holds is SQLite's to report.
std::optional<std::string> store_absence(const fs::path& db) {
  std::error_code ec;
  if (!fs::exists(db, ec))
    return "is missing";
  auto holds = Store::holds_schema(db);
  if (!holds.ok() || *holds)
    return std::nullopt;
  const auto size = fs::file_size(db, ec);
  return "is empty (" + std::to_string(ec ? 0 : size) + " bytes" + (size ? ", no tables)" : ")");
}

// What shows that the state folder held a store: the marker, or work left behind.
std::vector<std::string> history_evidence(const Config& config) {
  std::vector<std::string> found;
  const fs::path marker = config.state_dir / kStoreMarker;
  std::error_code ec;
  if (fs::exists(marker, ec)) {
    std::ifstream in(marker);
    std::string id;
    in >> id;
    found.push_back(marker.string() + (id.empty() ? "" : " names store " + id));
  }
  const std::set<fs::path> folders = {config.work_root(), config.runner.process.scratch_root,
                                      config.runner.docker.scratch_root};
  for (const auto& folder : folders) {
    std::size_t entries = 0;
    for (auto it = fs::directory_iterator(folder, ec); !ec && it != fs::directory_iterator();
         it.increment(ec)) {
      ++entries;
    }
    if (entries > 0)
      found.push_back(folder.string() + " holds " + std::to_string(entries) + " entries");
  }
  return found;
}

// Rewrites the marker when it does not name this store (tmp + rename: never half written).
Status keep_marker(const fs::path& state_dir, const std::string& store_id) {
  const fs::path marker = state_dir / kStoreMarker;
  {
    std::ifstream in(marker);
    std::string id;
    if (in >> id && id == store_id)
      return Status::success();
  }
  const fs::path partial = marker.string() + ".partial";
  {
    std::ofstream out(partial, std::ios::trunc);
    out << store_id << "\n";
    out.flush();
    if (!out)
      return make_error(ErrorCode::io, "cannot write " + partial.string());
  }
  std::error_code ec;
  fs::rename(partial, marker, ec);
  if (ec)
    return make_error(ErrorCode::io, "cannot write " + marker.string() + ": " + ec.message());
  return Status::success();
}

// The versions a live `reverify run` owns: "m@v (pid 1234 (reverify run))".
std::vector<std::string> live_run_owners(const fs::path& state_dir) {
  std::vector<std::string> owners;
  std::error_code ec;
  for (auto it = fs::directory_iterator(state_dir / "owners", ec);
       !ec && it != fs::directory_iterator(); it.increment(ec)) {
    if (it->path().extension() == ".lock" && held_by_another(it->path()))
      owners.push_back(it->path().stem().string() + " (" + holder_named_in(it->path()) + ")");
  }
  return owners;
}

}  // namespace

Result<StateLock> StateLock::whole(const fs::path& state_dir, std::string_view holder) {
  auto fd = lock_exclusive(whole_lock_path(state_dir), holder, std::chrono::milliseconds(0),
                           "state_dir " + state_dir.string());
  if (!fd.ok())
    return fd.error();
  return StateLock(*fd);
}

Result<StateLock> StateLock::version(const fs::path& state_dir, const std::string& model,
                                     const std::string& version, std::string_view holder,
                                     std::chrono::milliseconds patience) {
  auto fd = lock_exclusive(version_lock_path(state_dir, model, version), holder, patience,
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
  return held_by_another(path) ? holder_named_in(path) : std::string();
}

Result<std::unique_ptr<Store>> open_state_store(const Config& config, ClockFn clock,
                                                NewStore new_store) {
  std::error_code ec;
  fs::create_directories(config.state_dir, ec);
  if (ec) {
    return make_error(ErrorCode::io,
                      "state_dir " + config.state_dir.string() + ": " + ec.message());
  }
  const fs::path db = config.db_path();
  if (new_store == NewStore::refuse_where_history) {
    if (auto absent = store_absence(db)) {
      const auto evidence = history_evidence(config);
      if (!evidence.empty()) {
        std::string shown;
        for (const auto& e : evidence)
          shown += "\n  " + e;
        return make_error(
            ErrorCode::conflict,
            "the store " + db.string() + " " + *absent + ", but this state_dir held one:" + shown +
                "\nreverify does not start over with an empty history in silence (every "
                "verification would be gone and page numbers would start again). Either restore "
                "a backup made with `reverify backup`:\n  reverify restore --config FILE BACKUP"
                "\nor start over with an empty store, on purpose:\n  reverify restore --config "
                "FILE --empty");
      }
    }
  }
  auto store = Store::open(db, std::move(clock));
  if (!store.ok())
    return store.error();
  if (auto s = keep_marker(config.state_dir, (*store)->identity().id); !s.ok())
    return s.error();
  return store;
}

Result<std::unique_ptr<Store>> restore_state_store(const Config& config,
                                                   const std::optional<fs::path>& backup,
                                                   ClockFn clock) {
  std::error_code ec;
  fs::create_directories(config.state_dir, ec);
  auto lock = StateLock::whole(config.state_dir, "reverify restore");
  if (!lock.ok()) {
    return make_error(lock.error().code,
                      lock.error().message + ": stop reverifyd before restoring its store");
  }
  if (const auto owners = live_run_owners(config.state_dir); !owners.empty()) {
    std::string named;
    for (const auto& owner : owners)
      named += (named.empty() ? "" : ", ") + owner;
    return make_error(ErrorCode::conflict, "a `reverify run` is recording into this state_dir (" +
                                               named +
                                               "): let it finish before restoring its store");
  }
  const fs::path db = config.db_path();
  if (!store_absence(db)) {
    auto current = Store::open(db, clock, /*read_only=*/true);
    auto stats = current.ok() ? (*current)->verification_stats()
                              : Result<VerificationStats>(current.error());
    if (!stats.ok() || stats->total() > 0) {
      return make_error(
          ErrorCode::conflict,
          db.string() + " " +
              (stats.ok() ? "holds " + std::to_string(stats->total()) + " verification(s)"
                          : "cannot be read (" + stats.error().message + ")") +
              ": restore never overwrites a store; move it aside first (with its -wal and -shm "
              "files, if any)");
    }
  }
  const fs::path incoming = db.string() + ".restoring";
  if (backup) {
    auto source = Store::open(*backup, clock, /*read_only=*/true);
    if (!source.ok())
      return make_error(ErrorCode::invalid_argument, "backup: " + source.error().message);
    if (auto s = (*source)->check_integrity(); !s.ok())
      return make_error(ErrorCode::invalid_argument, backup->string() + ": " + s.error().message);
    if ((*source)->schema_version() == 0) {
      return make_error(ErrorCode::invalid_argument,
                        backup->string() + " is not a reverify store (it has no schema)");
    }
    fs::remove(incoming, ec);
    if (auto s = (*source)->backup_to(incoming); !s.ok())
      return s.error();
  }
  // A WAL left by the store being replaced must never be replayed onto the restored one.
  for (const char* suffix : {"-wal", "-shm", ""})
    fs::remove(db.string() + suffix, ec);
  if (backup) {
    fs::rename(incoming, db, ec);
    if (ec) {
      return make_error(ErrorCode::io,
                        "cannot move " + incoming.string() + " into place: " + ec.message());
    }
  }
  return open_state_store(config, std::move(clock), NewStore::allow);
}

}  // namespace reverify
