#pragma once
// Internal to store/: the SQL column lists, row readers and the statements that more than one
// part of the store runs (queueing a verification happens on enqueue, with a verdict's retry and
// when a cycle starts). REQUIRES of every function taking a sqlite3*: the Store's mutex is held.

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "store/sqlite.hpp"
#include "store/store.hpp"

namespace reverify::store_rows {

// A JSON column the store wrote itself; null when the column is NULL.
nlohmann::json parse_json_column(const std::optional<std::string>& text);

template <class T, class Read>
Result<std::vector<T>> collect_rows(sql::Statement& s, Read read) {
  std::vector<T> rows;
  for (;;) {
    auto more = s.step();
    if (!more.ok())
      return more.error();
    if (!*more)
      return rows;
    rows.push_back(read(s));
  }
}

// Inserts one verification, queued or already running (started now); the manifest hash it will
// verify is taken from the model version row (the gate compares it with the current one).
Result<std::int64_t> insert_verification(sqlite3* db, const QueuedVerification& item,
                                         UnixSeconds now, bool running);

// conflict naming the verification unless the last statement changed exactly one row.
Status expect_one_change(sqlite3* db, std::int64_t id, const char* what);

}  // namespace reverify::store_rows
