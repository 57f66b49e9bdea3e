// The state folder's store (verify/state_dir.hpp): never made anew where the folder shows it held
// one, never taken back from an older copy in silence, and restored with ids that continue.
#include "verify/state_dir.hpp"

#include <algorithm>
#include <set>

#include "core/suggested_command.hpp"
#include "core/text.hpp"
#include "store/restore_advice.hpp"
#include "verify/store_marker.hpp"

namespace reverify {
namespace {

namespace fs = std::filesystem;

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
  if (const auto marker = read_store_marker(config.state_dir)) {
    found.push_back(store_marker_path(config.state_dir).string() +
                    (marker->store_id.empty() ? "" : " names store " + marker->store_id));
  }
  std::error_code ec;
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

// How a restore this process suggests finds the state_dir: the config file's --config (the api's
// scope is that alone, where a `reverify run`'s verdict scope adds flags restore does not take).
const std::string& restore_scope(const Config& config) {
  return config.api.command_scope;
}

// The commands that move the store file `db` to `aside`, and its -wal and -shm files with it when
// there are any (at the time they run: SQLite removes them when the last connection closes), one
// "\n  ..." line each, every path one shell word.
std::string move_aside(const std::string& db, const std::string& aside) {
  std::string lines = "\n  mv " + shell_word(db) + " " + shell_word(aside);
  for (const char* suffix : {"-wal", "-shm"}) {
    lines += "\n  [ ! -e " + shell_word(db + suffix) + " ] || mv " + shell_word(db + suffix) + " " +
             shell_word(aside + suffix);
  }
  return lines;
}

// The refusal of a store that is missing or empty where the folder shows history; nullopt when
// the store is there, or when it may be made (nothing shows it held one).
std::optional<Error> lost_history(const Config& config) {
  const fs::path db = config.db_path();
  const auto absent = store_absence(db);
  if (!absent)
    return std::nullopt;
  const auto evidence = history_evidence(config);
  if (evidence.empty())
    return std::nullopt;
  std::string shown;
  for (const auto& e : evidence)
    shown += "\n  " + e;
  return make_error(
      ErrorCode::conflict,
      "the store " + db.string() + " " + *absent + ", but this state_dir held one:" + shown +
          "\nreverify does not start over with an empty history in silence (every verification "
          "would be gone and page numbers would start again). Either restore a backup made with "
          "`reverify backup` (BACKUP: its file):\n  " +
          reverify_command("restore BACKUP", restore_scope(config)) +
          "\nor start over with an empty store, on purpose:\n  " +
          reverify_command("restore --empty", restore_scope(config)));
}

// The refusal of a store file older than the ids the folder handed out: put back from a copy.
Error rolled_back(const Config& config, const StoreMarker& marker, const StoreHighWater& in_file) {
  const std::string db = config.db_path().string();
  const std::string aside = db + ".rolled-back";
  return make_error(
      ErrorCode::conflict,
      "the store " + db + " is older than this state_dir's history: it has handed out " +
          "verification ids up to " + std::to_string(in_file.verification) +
          " and page ids up to " + std::to_string(in_file.page) + ", but " +
          store_marker_path(config.state_dir).string() + " records ids up to " +
          std::to_string(marker.handed_out.verification) + " and " +
          std::to_string(marker.handed_out.page) + " handed out (store " + marker.store_id +
          "). The file was put back from an older copy (a file-system snapshot, a copied file): "
          "what was recorded after that copy is not in it, and going on with it would give new "
          "verifications and pages the ids of earlier ones (old links would open other "
          "verifications, and receivers would drop new pages as copies of old ones). Either put "
          "the newest " +
          db +
          " back (with its -wal file), or keep this copy as a restore, whose ids continue after "
          "every id handed out (its -wal and -shm files, if any, move with it):" +
          move_aside(db, aside) + "\n  " +
          reverify_command("restore " + shell_word(aside), restore_scope(config)));
}

// The marker after `mark`: the folder's mark never goes down.
StoreMarker marker_after(const fs::path& state_dir, const std::string& store_id,
                         const StoreHighWater& mark) {
  StoreMarker next{store_id, mark};
  if (const auto kept = read_store_marker(state_dir)) {
    next.handed_out.verification =
        std::max(next.handed_out.verification, kept->handed_out.verification);
    next.handed_out.page = std::max(next.handed_out.page, kept->handed_out.page);
  }
  return next;
}

// The store as opened to write, checked against the folder's marker: refused when it is behind
// the marker (unless a restore: `new_store` allow, or a backup copy adopted at this open), moved
// past it otherwise; the marker then names it, and its keeper keeps the mark with every id.
Status hold_to_marker(const Config& config, Store& store, NewStore new_store) {
  auto mark = store.high_water();
  if (!mark.ok())
    return mark.error();
  const auto marker = read_store_marker(config.state_dir);
  if (marker && mark->below(marker->handed_out)) {
    if (new_store == NewStore::refuse_where_history && !store.identity().adopted)
      return rolled_back(config, *marker, *mark);
    if (auto s = store.continue_after(marker->handed_out); !s.ok())
      return s;
  }
  const std::string id = store.identity().id;
  const auto next = marker_after(config.state_dir, id, *mark);
  if (!marker || marker->store_id != next.store_id || !(marker->handed_out == next.handed_out)) {
    if (auto s = write_store_marker(config.state_dir, next); !s.ok())
      return s;
  }
  store.keep_high_water([state_dir = config.state_dir, id](const StoreHighWater& handed_out) {
    return write_store_marker(state_dir, marker_after(state_dir, id, handed_out));
  });
  return Status::success();
}

}  // namespace

Result<std::unique_ptr<Store>> open_state_store(const Config& config, ClockFn clock,
                                                NewStore new_store) {
  set_restore_scope(restore_scope(config));
  std::error_code ec;
  fs::create_directories(config.state_dir, ec);
  if (ec) {
    return make_error(ErrorCode::io,
                      "state_dir " + config.state_dir.string() + ": " + ec.message());
  }
  if (new_store == NewStore::refuse_where_history) {
    if (auto refusal = lost_history(config))
      return *refusal;
  }
  auto store = Store::open(config.db_path(), std::move(clock));
  if (!store.ok())
    return store.error();
  if (auto s = hold_to_marker(config, **store, new_store); !s.ok())
    return s.error();
  return store;
}

Result<std::unique_ptr<Store>> open_state_store_to_copy(const Config& config, ClockFn clock) {
  set_restore_scope(restore_scope(config));
  const fs::path db = config.db_path();
  if (auto refusal = lost_history(config))
    return *refusal;
  if (auto absent = store_absence(db)) {
    return make_error(ErrorCode::conflict,
                      "the store " + db.string() + " " + *absent +
                          ": there is nothing to back up (a copy would hold no verification and "
                          "no store id)");
  }
  auto store = Store::open(db, std::move(clock), /*read_only=*/true);
  if (!store.ok())
    return store.error();
  auto mark = (*store)->high_water();
  if (!mark.ok())
    return mark.error();
  const auto marker = read_store_marker(config.state_dir);
  if (marker && mark->below(marker->handed_out))
    return rolled_back(config, *marker, *mark);
  return store;
}

Result<std::unique_ptr<Store>> restore_state_store(const Config& config,
                                                   const std::optional<fs::path>& backup,
                                                   ClockFn clock) {
  set_restore_scope(restore_scope(config));
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
    const auto unusable = [&](const std::string& why) {
      return make_error(ErrorCode::invalid_argument,
                        "the backup " + backup->string() + " cannot be restored: " + why +
                            "; restore another backup (`reverify backup` writes them)");
    };
    auto source = Store::open(*backup, clock, /*read_only=*/true);
    if (!source.ok())
      return unusable(source.error().message);
    if (auto s = (*source)->check_integrity(); !s.ok())
      return unusable(s.error().message);
    if ((*source)->schema_version() == 0)
      return unusable("it is not a reverify store (it has no schema)");
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
  // Its ids continue after every id the folder handed out (open_state_store, NewStore::allow).
  return open_state_store(config, std::move(clock), NewStore::allow);
}

}  // namespace reverify
