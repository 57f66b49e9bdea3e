#include "store/store.hpp"

#include <sqlite3.h>

#include "store/migrations.hpp"
#include "store/sqlite.hpp"

namespace reverify {

using sql::Statement;
using sql::Transaction;

namespace {

// Connection settings, each on every connection (they are per connection in SQLite).
Status configure_connection(sqlite3* db, bool read_only) {
  // Wait for another writer (the CLI, a second connection) instead of failing with SQLITE_BUSY.
  sqlite3_busy_timeout(db, 5000);
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
  return store;
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
  for (const auto& m : migrations()) {
    if (m.number <= current)
      continue;
    Transaction tx(db_);
    if (!tx.begun().ok())
      return tx.begun();
    if (auto s = sql::exec(db_, m.sql); !s.ok()) {
      return make_error(ErrorCode::io,
                        "migration " + std::to_string(m.number) + ": " + s.error().message);
    }
    auto pragma = "PRAGMA user_version = " + std::to_string(m.number);
    if (auto s = sql::exec(db_, pragma.c_str()); !s.ok())
      return s;
    if (auto s = tx.commit(); !s.ok())
      return s;
  }
  return Status::success();
}

}  // namespace reverify
