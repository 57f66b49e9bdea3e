#pragma once
// Internal to store/: the SQL column lists, row readers and the statements that more than one
// part of the store runs (queueing a verification happens on enqueue, with a verdict's retry and
// when a cycle starts). REQUIRES of every function taking a sqlite3*: the Store's mutex is held.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "store/sqlite.hpp"
#include "store/store.hpp"

namespace reverify::store_rows {

// Registers on a connection the SQL functions the outbox's statements call:
// rv_process_alive(pid), 1 while that process runs (store_outbox.cpp).
Status register_outbox_functions(sqlite3* db);

// A JSON column the store wrote itself; null when the column is NULL.
nlohmann::json parse_json_column(const std::optional<std::string>& text);

// Every row of a query, each read by `read` (Statement -> Result<T>); the first row it cannot
// read is the error.
template <class T, class Read>
Result<std::vector<T>> collect_rows(sql::Statement& s, Read read) {
  std::vector<T> rows;
  for (;;) {
    auto more = s.step();
    if (!more.ok())
      return more.error();
    if (!*more)
      return rows;
    Result<T> row = read(s);
    if (!row.ok())
      return row.error();
    rows.push_back(std::move(*row));
  }
}

// A column's word parsed into its enum, or an error naming the table, the row and the column:
// `verifications row 12: unknown trigger "bogus" (expected one of schedule, manual, retry, cli)`.
template <NamedEnum Enum>
Result<Enum> parse_column(std::string_view table, std::int64_t row_id, std::string_view column,
                          const std::string& text) {
  if (std::optional<Enum> value = enum_from_string<Enum>(text))
    return *value;
  return make_error(ErrorCode::parse, std::string(table) + " row " + std::to_string(row_id) +
                                          ": unknown " + std::string(column) + " \"" + text +
                                          "\" (expected one of " + enum_names<Enum>() + ")");
}

// Inserts one verification, queued or already running (started now); the manifest hash it will
// verify is taken from the model version row (the gate compares it with the current one).
Result<std::int64_t> insert_verification(sqlite3* db, const QueuedVerification& item,
                                         UnixSeconds now, bool running);

// Records pages in the outbox, one delivery row per sender, each page about `verification_id`
// (its verdict's, or the verification that found a platform condition). Returns the page ids.
Result<std::vector<std::int64_t>> insert_pages(sqlite3* db, std::int64_t verification_id,
                                               const std::vector<PageToRecord>& pages,
                                               UnixSeconds now, const std::string& store_id);

// conflict naming the verification unless the last statement changed exactly one row.
Status expect_one_change(sqlite3* db, std::int64_t id, const char* what);

}  // namespace reverify::store_rows
