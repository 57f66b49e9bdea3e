#pragma once
// A thin RAII layer over the SQLite C API for the store: prepared statements with typed binds
// and column reads, and a transaction guard that rolls back unless committed. Internal to the
// daemon's store; errors come back as Error values naming the statement.

#include <sqlite3.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/result.hpp"

namespace reverify::sql {

// Every error names the statement and SQLite's reason. A file SQLite finds damaged ("database disk
// image is malformed") or not a database at all ("file is not a database") is named too, with the
// way out (damage_note): the reason alone says neither which file nor what to do.
Error sqlite_error(sqlite3* db, std::string_view what);
// " (<file> is damaged ...: move it aside, `reverify restore` ...)" for a result code that says
// the file is damaged (SQLITE_CORRUPT, SQLITE_NOTADB and their extended codes); "" for any other.
std::string damage_note(sqlite3* db, int code);

class Statement {
 public:
  Statement(sqlite3* db, std::string_view sql);
  ~Statement();
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  bool prepared() const { return stmt_ != nullptr; }
  Error error() const;

  // Binds are 1-based like SQLite's.
  Statement& bind(int index, std::int64_t value);
  Statement& bind(int index, double value);
  Statement& bind(int index, const std::string& value);
  Statement& bind(int index, std::string_view value);
  Statement& bind(int index, const char* value);
  Statement& bind_null(int index);
  template <class T>
  Statement& bind(int index, const std::optional<T>& value) {
    return value ? bind(index, *value) : bind_null(index);
  }

  // Steps once: true while a row is available, false when done; errors via last_error_.
  Result<bool> step();
  // Steps to completion (INSERT/UPDATE/DELETE).
  Status run();
  void reset();

  std::int64_t int64(int column) const;
  std::string text(int column) const;
  bool is_null(int column) const;
  std::optional<std::string> optional_text(int column) const;
  std::optional<std::int64_t> optional_int64(int column) const;
  std::optional<double> optional_real(int column) const;

 private:
  sqlite3* db_;
  sqlite3_stmt* stmt_ = nullptr;
  std::string sql_;
};

// BEGIN IMMEDIATE takes the write lock up front, so two writers never deadlock upgrading a read
// lock (they wait on busy_timeout instead).
class Transaction {
 public:
  explicit Transaction(sqlite3* db);
  ~Transaction();
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  const Status& begun() const { return begun_; }
  Status commit();

 private:
  sqlite3* db_;
  Status begun_;
  bool done_ = false;
};

Status exec(sqlite3* db, const char* sql);

}  // namespace reverify::sql
