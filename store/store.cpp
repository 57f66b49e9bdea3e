#include "store/store.hpp"

#include <fcntl.h>
#include <sqlite3.h>
#include <unistd.h>

#include "store/migrations.hpp"
#include "store/sqlite.hpp"
#include "store/store_rows.hpp"

namespace reverify {

using sql::Statement;
using sql::Transaction;

namespace {

// Connection settings, each on every connection (they are per connection in SQLite).
Status configure_connection(sqlite3* db, bool read_only) {
  // Wait for another writer (the CLI, a second connection) instead of failing with SQLITE_BUSY.
  sqlite3_busy_timeout(db, 5000);
  if (auto s = store_rows::register_outbox_functions(db); !s.ok())
    return s;
  // Referential integrity is off by default in SQLite; verifications must name real versions.
  if (auto s = sql::exec(db, "PRAGMA foreign_keys = ON"); !s.ok())
    return s;
  if (read_only)
    return Status::success();
  // WAL: readers (HTTP snapshot refresh, CLI) never block the writer and a crash keeps commits.
  if (auto s = sql::exec(db, "PRAGMA journal_mode = WAL"); !s.ok())
    return s;
  // NORMAL is durable in WAL mode against process crashes (kill -9); only power loss may drop
  // the last commits, never corrupt.
  return sql::exec(db, "PRAGMA synchronous = NORMAL");
}

}  // namespace

Result<std::unique_ptr<Store>> Store::open(const std::filesystem::path& db_path, ClockFn clock,
                                           bool read_only) {
  if (!read_only && db_path.has_parent_path()) {
    // A fresh state_dir is normal on first start; SQLite creates the file but not its folder.
    std::error_code ec;
    std::filesystem::create_directories(db_path.parent_path(), ec);
  }
  sqlite3* db = nullptr;
  int flags = read_only ? SQLITE_OPEN_READONLY : (SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
  flags |= SQLITE_OPEN_FULLMUTEX;
  if (sqlite3_open_v2(db_path.c_str(), &db, flags, nullptr) != SQLITE_OK) {
    std::string message = db ? sqlite3_errmsg(db) : "out of memory";
    sqlite3_close(db);
    return make_error(read_only ? ErrorCode::not_found : ErrorCode::io,
                      "cannot open state database " + db_path.string() + ": " + message);
  }
  if (auto s = configure_connection(db, read_only); !s.ok()) {
    sqlite3_close(db);
    return s.error();
  }
  std::unique_ptr<Store> store(new Store(db, std::move(clock)));
  if (!read_only) {
    if (auto s = store->migrate(); !s.ok())
      return s.error();
  }
  if (auto s = store->load_identity(!read_only); !s.ok())
    return s.error();
  if (!read_only)
    store->remember_file();
  return store;
}

Result<bool> Store::holds_schema(const std::filesystem::path& db_path) {
  sqlite3* db = nullptr;
  const int opened = sqlite3_open_v2(db_path.c_str(), &db, SQLITE_OPEN_READWRITE, nullptr);
  Result<bool> holds = make_error(ErrorCode::io, db_path.string());
  if (opened == SQLITE_OK) {
    sqlite3_busy_timeout(db, 5000);
    Statement s(db, "PRAGMA user_version");
    auto row = s.step();
    holds = row.ok() ? Result<bool>(*row && s.int64(0) > 0) : Result<bool>(row.error());
  } else {
    holds = make_error(ErrorCode::io, "cannot open state database " + db_path.string() + ": " +
                                          (db ? sqlite3_errmsg(db) : "out of memory"));
  }
  sqlite3_close(db);
  return holds;
}

Store::Store(sqlite3* db, ClockFn clock) : db_(db), clock_(std::move(clock)) {}

Store::~Store() {
  sqlite3_close(db_);
}

int Store::schema_version() {
  std::lock_guard lock(mutex_);
  Statement s(db_, "PRAGMA user_version");
  auto row = s.step();
  return row.ok() && *row ? int(s.int64(0)) : 0;
}

Result<std::int64_t> Store::data_version() {
  std::lock_guard lock(mutex_);
  Statement s(db_, "PRAGMA data_version");
  auto row = s.step();
  if (!row.ok())
    return row.error();
  if (!*row)
    return make_error(ErrorCode::io, "PRAGMA data_version returned no row");
  return s.int64(0);
}

Status Store::migrate() {
  int current = schema_version();
  std::lock_guard lock(mutex_);
  // Foreign keys off while migrating, as SQLite's procedure for changing a table's constraints
  // requires (a pragma that is a no-op inside a transaction), and checked before each commit.
  if (auto s = sql::exec(db_, "PRAGMA foreign_keys = OFF"); !s.ok())
    return s;
  Status migrated = Status::success();
  for (const auto& m : migrations()) {
    if (m.number <= current)
      continue;
    migrated = apply_migration(m);
    if (!migrated.ok())
      break;
  }
  if (auto s = sql::exec(db_, "PRAGMA foreign_keys = ON"); !s.ok())
    return s;
  return migrated;
}

Status Store::apply_migration(const Migration& m) {
  Transaction tx(db_);
  if (!tx.begun().ok())
    return tx.begun();
  const std::string which = "migration " + std::to_string(m.number) + ": ";
  if (auto s = sql::exec(db_, m.sql); !s.ok())
    return make_error(ErrorCode::io, which + s.error().message);
  if (m.fill) {
    if (auto s = m.fill(db_); !s.ok())
      return make_error(ErrorCode::io, which + s.error().message);
  }
  Statement check(db_, "PRAGMA foreign_key_check");
  auto violation = check.step();
  if (!violation.ok())
    return violation.error();
  if (*violation)
    return make_error(ErrorCode::io, which + "leaves a row of " + check.text(0) +
                                         " whose foreign key names no row of " + check.text(2));
  auto pragma = "PRAGMA user_version = " + std::to_string(m.number);
  if (auto s = sql::exec(db_, pragma.c_str()); !s.ok())
    return s;
  return tx.commit();
}

Status Store::load_identity(bool for_writing) {
  std::lock_guard lock(mutex_);
  // A database older than migration 4, opened read-only, has no identity yet.
  Statement table(db_,
                  "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'store_identity'");
  auto exists = table.step();
  if (!exists.ok())
    return exists.error();
  if (!*exists)
    return Status::success();
  if (for_writing) {
    // A backup copy opened to write into is a restore: from now on it is a store of its own.
    Statement adopt(
        db_,
        "UPDATE store_identity SET id = lower(hex(randomblob(8))), "
        "restored_from = copied_from, copied_from = NULL WHERE copied_from IS NOT NULL");
    if (auto s = adopt.run(); !s.ok())
      return s;
    identity_.adopted = sqlite3_changes(db_) > 0;
  }
  Statement read(db_, "SELECT id, restored_from FROM store_identity");
  auto row = read.step();
  if (!row.ok())
    return row.error();
  if (!*row)
    return make_error(ErrorCode::io, "the store has no identity row (store_identity is empty)");
  identity_.id = read.text(0);
  identity_.restored_from = read.optional_text(1);
  return Status::success();
}

Status Store::check_integrity() {
  std::lock_guard lock(mutex_);
  Statement s(db_, "PRAGMA quick_check");
  std::string problems;
  for (;;) {
    auto row = s.step();
    if (!row.ok())
      return row.error();
    if (!*row)
      break;
    if (const std::string line = s.text(0); line != "ok")
      problems += (problems.empty() ? "" : "; ") + line;
  }
  if (problems.empty())
    return Status::success();
  return make_error(ErrorCode::io, "the database is damaged (PRAGMA quick_check): " + problems);
}

namespace {

// After a rename: the folder's entry is on disk too.
void sync_folder(const std::filesystem::path& folder) {
  const int fd = ::open(folder.empty() ? "." : folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd >= 0) {
    (void)::fsync(fd);
    ::close(fd);
  }
}

}  // namespace

Status Store::backup_to(const std::filesystem::path& dest) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::exists(dest, ec)) {
    return make_error(ErrorCode::conflict,
                      dest.string() + " exists: a backup never overwrites a file; name a new one");
  }
  const fs::path partial = dest.string() + ".partial";
  fs::remove(partial, ec);
  const auto fail = [&](const std::string& what) {
    for (const char* suffix : {"", "-wal", "-shm"})
      fs::remove(partial.string() + suffix, ec);
    return make_error(ErrorCode::io, "backup to " + dest.string() + ": " + what);
  };
  sqlite3* out = nullptr;
  if (sqlite3_open_v2(partial.c_str(), &out, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr) !=
      SQLITE_OK) {
    const std::string message = out ? sqlite3_errmsg(out) : "out of memory";
    sqlite3_close(out);
    return fail(message);
  }
  int copied = SQLITE_OK;
  {
    std::lock_guard lock(mutex_);
    // Every page in one step: one read transaction on the source, so the copy is one consistent
    // state of it whatever other connections commit meanwhile (WAL lets them go on writing).
    sqlite3_backup* backup = sqlite3_backup_init(out, "main", db_, "main");
    if (backup) {
      copied = sqlite3_backup_step(backup, -1);
      sqlite3_backup_finish(backup);
    } else {
      copied = sqlite3_errcode(out);
    }
  }
  if (copied != SQLITE_DONE) {
    const std::string message = sqlite3_errmsg(out) + sql::damage_note(db_, copied);
    sqlite3_close(out);
    return fail(message);
  }
  {
    // The copy, brought to this version's schema (a store opened read-only may be older),
    // marked as a backup copy (a copy of a copy keeps the first original) and checked. Closing
    // its connection folds its WAL into the file.
    std::unique_ptr<Store> copy(new Store(out, clock_));
    if (auto s = configure_connection(out, false); !s.ok())
      return fail(s.error().message);
    if (auto s = copy->migrate(); !s.ok())
      return fail(s.error().message);
    if (auto s =
            sql::exec(out, "UPDATE store_identity SET copied_from = COALESCE(copied_from, id)");
        !s.ok())
      return fail(s.error().message);
    if (auto s = copy->check_integrity(); !s.ok())
      return fail(s.error().message);
  }
  fs::rename(partial, dest, ec);
  if (ec)
    return fail("cannot rename " + partial.string() + ": " + ec.message());
  sync_folder(dest.parent_path());
  return Status::success();
}

}  // namespace reverify
