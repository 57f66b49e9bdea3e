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

Result<std::vector<std::int64_t>> insert_pages(sqlite3* db, std::int64_t verification_id,
                                               const std::vector<PageToRecord>& pages,
                                               UnixSeconds now, const std::string& store_id) {
  std::vector<std::int64_t> page_ids;
  Statement page(db,
                 "INSERT INTO pages (verification_id, dedup_key, action, event_json, created_at, "
                 "store_id) VALUES (?1, ?2, ?3, ?4, ?5, ?6)");
  Statement delivery(db,
                     "INSERT INTO page_deliveries (page_id, sender, state, next_attempt_at) "
                     "VALUES (?1, ?2, 'pending', ?3)");
  for (const auto& p : pages) {
    page.bind(1, verification_id).bind(2, p.event.dedup_key).bind(3, to_string(p.event.action));
    page.bind(4, to_json(p.event).dump()).bind(5, now).bind(6, store_id);
    if (auto st = page.run(); !st.ok())
      return st.error();
    page.reset();
    const std::int64_t page_id = sqlite3_last_insert_rowid(db);
    page_ids.push_back(page_id);
    for (const auto& sender : p.senders) {
      delivery.bind(1, page_id).bind(2, sender).bind(3, now);
      if (auto st = delivery.run(); !st.ok())
        return st.error();
      delivery.reset();
    }
  }
  return page_ids;
}

Status expect_one_change(sqlite3* db, std::int64_t id, const char* what) {
  if (sqlite3_changes(db) == 1)
    return Status::success();
  return make_error(ErrorCode::conflict, "verification " + std::to_string(id) + ": " + what);
}

}  // namespace reverify::store_rows
