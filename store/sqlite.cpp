#include "store/sqlite.hpp"

#include "store/restore_advice.hpp"

namespace reverify::sql {

std::string damage_note(sqlite3* db, int code) {
  const int primary = code & 0xff;
  if (primary != SQLITE_CORRUPT && primary != SQLITE_NOTADB)
    return {};
  const char* file = db ? sqlite3_db_filename(db, "main") : nullptr;
  return std::string(" (") + (file && *file ? file : "the database file") +
         " is damaged or is not a reverify store. If it is the state_dir's store: stop reverifyd, "
         "move it aside with its -wal and -shm files, then " +
         restore_commands() + ")";
}

Error sqlite_error(sqlite3* db, std::string_view what) {
  return make_error(ErrorCode::io, "sqlite: " + std::string(what) + ": " + sqlite3_errmsg(db) +
                                       damage_note(db, sqlite3_errcode(db)));
}

Statement::Statement(sqlite3* db, std::string_view sql) : db_(db), sql_(sql) {
  if (sqlite3_prepare_v2(db, sql_.c_str(), int(sql_.size()), &stmt_, nullptr) != SQLITE_OK) {
    stmt_ = nullptr;
  }
}

Statement::~Statement() {
  sqlite3_finalize(stmt_);
}

Error Statement::error() const {
  return sqlite_error(db_, sql_.substr(0, 60));
}

Statement& Statement::bind(int index, std::int64_t value) {
  sqlite3_bind_int64(stmt_, index, value);
  return *this;
}
Statement& Statement::bind(int index, double value) {
  sqlite3_bind_double(stmt_, index, value);
  return *this;
}
Statement& Statement::bind(int index, const std::string& value) {
  return bind(index, std::string_view(value));
}
Statement& Statement::bind(int index, std::string_view value) {
  sqlite3_bind_text(stmt_, index, value.data(), int(value.size()), SQLITE_TRANSIENT);
  return *this;
}
Statement& Statement::bind(int index, const char* value) {
  return bind(index, std::string_view(value));
}
Statement& Statement::bind_null(int index) {
  sqlite3_bind_null(stmt_, index);
  return *this;
}

Result<bool> Statement::step() {
  if (!stmt_)
    return error();
  int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW)
    return true;
  if (rc == SQLITE_DONE)
    return false;
  return error();
}

Status Statement::run() {
  for (;;) {
    auto more = step();
    if (!more.ok())
      return more.error();
    if (!*more)
      return Status::success();
  }
}

void Statement::reset() {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
}

std::int64_t Statement::int64(int column) const {
  return sqlite3_column_int64(stmt_, column);
}

std::string Statement::text(int column) const {
  auto* p = reinterpret_cast<const char*>(sqlite3_column_text(stmt_, column));
  return p ? std::string(p, std::size_t(sqlite3_column_bytes(stmt_, column))) : std::string();
}

bool Statement::is_null(int column) const {
  return sqlite3_column_type(stmt_, column) == SQLITE_NULL;
}

std::optional<std::string> Statement::optional_text(int column) const {
  if (is_null(column))
    return std::nullopt;
  return text(column);
}

std::optional<std::int64_t> Statement::optional_int64(int column) const {
  if (is_null(column))
    return std::nullopt;
  return int64(column);
}

std::optional<double> Statement::optional_real(int column) const {
  if (is_null(column))
    return std::nullopt;
  return sqlite3_column_double(stmt_, column);
}

Status exec(sqlite3* db, const char* sql) {
  char* message = nullptr;
  if (const int code = sqlite3_exec(db, sql, nullptr, nullptr, &message); code != SQLITE_OK) {
    std::string text = message ? message : "unknown error";
    sqlite3_free(message);
    return make_error(ErrorCode::io, "sqlite: " + text + damage_note(db, code));
  }
  return Status::success();
}

Transaction::Transaction(sqlite3* db) : db_(db), begun_(exec(db, "BEGIN IMMEDIATE")) {
  done_ = !begun_.ok();
}

Transaction::~Transaction() {
  if (!done_)
    (void)exec(db_, "ROLLBACK");
}

Status Transaction::commit() {
  done_ = true;
  auto status = exec(db_, "COMMIT");
  if (!status.ok())
    (void)exec(db_, "ROLLBACK");
  return status;
}

}  // namespace reverify::sql
