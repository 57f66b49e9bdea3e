#include "store/store_rows.hpp"

namespace reverify::store_rows {

using sql::Statement;

nlohmann::json parse_json_column(const std::optional<std::string>& text) {
  if (!text)
    return nullptr;
  return nlohmann::json::parse(*text, nullptr, /*allow_exceptions=*/false);
}

Result<std::int64_t> insert_verification(sqlite3* db, const QueuedVerification& item,
                                         UnixSeconds now, bool running) {
  Statement s(
      db,
      "INSERT INTO verifications (model, version, state, mode, trigger, attempt, "
      "queued_at, not_before, cycle_id, manifest_sha256, started_at) SELECT ?1, ?2, "
      "CASE WHEN ?9 THEN 'running' ELSE 'queued' END, ?3, ?4, ?5, ?6, ?7, ?8, manifest_sha256, "
      "CASE WHEN ?9 THEN ?6 END FROM model_versions WHERE model = ?1 AND version = ?2");
  s.bind(1, item.model).bind(2, item.version).bind(3, to_string(item.mode));
  s.bind(4, to_string(item.trigger));
  s.bind(5, std::int64_t(item.attempt)).bind(6, now).bind(7, item.not_before);
  s.bind(8, item.cycle_id).bind(9, std::int64_t(running ? 1 : 0));
  const std::string what = "queue " + item.model + "@" + item.version;
  if (auto st = s.run(); !st.ok()) {
    return make_error(st.error().code, what + ": " + st.error().message);
  }
  if (sqlite3_changes(db) != 1) {
    return make_error(ErrorCode::not_found, what + ": unknown model version");
  }
  return std::int64_t(sqlite3_last_insert_rowid(db));
}

Status expect_one_change(sqlite3* db, std::int64_t id, const char* what) {
  if (sqlite3_changes(db) == 1)
    return Status::success();
  return make_error(ErrorCode::conflict, "verification " + std::to_string(id) + ": " + what);
}

}  // namespace reverify::store_rows
