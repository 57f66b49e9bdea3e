// The page outbox (pager/notifier.hpp's Outbox): one delivery row per (page, sender).
#include <signal.h>
#include <unistd.h>

#include <cerrno>

#include "policies/backoff.hpp"
#include "store/delivery_state.hpp"
#include "store/store_rows.hpp"

namespace reverify {

using sql::Statement;
using store_rows::parse_json_column;

void Store::set_outbox_retry(const RetryPolicy& retry) {
  std::lock_guard lock(mutex_);
  retry_ = retry;
}

namespace {
// rv_process_alive(pid): a claimer still running (EPERM: another user's, alive all the same).
void process_alive(sqlite3_context* context, int, sqlite3_value** argv) {
  const sqlite3_int64 pid = sqlite3_value_int64(argv[0]);
  sqlite3_result_int(context, pid > 0 && (::kill(pid_t(pid), 0) == 0 || errno == EPERM));
}
}  // namespace

Status store_rows::register_outbox_functions(sqlite3* db) {
  // Not SQLITE_DETERMINISTIC: a process ends between two statements.
  if (sqlite3_create_function(db, "rv_process_alive", 1, SQLITE_UTF8, nullptr, process_alive,
                              nullptr, nullptr) != SQLITE_OK) {
    return sql::sqlite_error(db, "registering rv_process_alive");
  }
  return {};
}

namespace {

// Columns: page id, event_json, sender, attempts, the id of the store that recorded the page
// (with the page id, its key at every receiver).
Result<std::vector<OutboxEntry>> read_outbox_entries(Statement& s) {
  std::vector<OutboxEntry> entries;
  for (;;) {
    auto more = s.step();
    if (!more.ok())
      return more.error();
    if (!*more)
      return entries;
    auto event = page_event_from_json(parse_json_column(s.text(1)));
    if (!event)
      continue;  // cannot happen for rows this store wrote; never blocks the queue
    event->id = s.int64(0);
    event->store_id = s.text(4);
    entries.push_back(OutboxEntry{std::move(*event), s.text(2), int(s.int64(3))});
  }
}
}  // namespace

Result<std::vector<OutboxEntry>> Store::pending(std::size_t limit) {
  std::lock_guard lock(mutex_);
  // A row waits while an older row of the same dedup key and sender is pending, so a resolve
  // never overtakes the trigger it resolves (notifier.hpp, Outbox::pending).
  Statement s(db_, R"sql(
SELECT p.id, p.event_json, d.sender, d.attempts, p.store_id FROM page_deliveries d
JOIN pages p ON p.id = d.page_id
WHERE d.state = 'pending'
  AND (d.next_attempt_at <= ?1 OR (d.claimed_by IS NOT NULL AND NOT rv_process_alive(d.claimed_by)))
  AND NOT EXISTS (SELECT 1 FROM pages p2 JOIN page_deliveries d2 ON d2.page_id = p2.id
                  WHERE p2.dedup_key = p.dedup_key AND p2.id < p.id
                    AND d2.sender = d.sender AND d2.state = 'pending')
ORDER BY p.id, d.sender LIMIT ?2)sql");
  s.bind(1, clock_()).bind(2, std::int64_t(limit));
  return read_outbox_entries(s);
}

Result<std::vector<OutboxEntry>> Store::open_triggers(const std::string& sender) {
  std::lock_guard lock(mutex_);
  Statement s(db_, R"sql(
SELECT p.id, p.event_json, d.sender, d.attempts, p.store_id FROM pages p
JOIN page_deliveries d ON d.page_id = p.id
WHERE d.sender = ?1 AND d.state = 'sent' AND p.action = 'trigger'
  AND p.id = (SELECT MAX(p2.id) FROM pages p2 JOIN page_deliveries d2 ON d2.page_id = p2.id
              WHERE p2.dedup_key = p.dedup_key AND d2.sender = ?1 AND d2.state = 'sent')
ORDER BY p.id)sql");
  s.bind(1, sender);
  return read_outbox_entries(s);
}

Result<bool> Store::claim(std::int64_t page_id, const std::string& sender) {
  std::lock_guard lock(mutex_);
  // One statement: of two processes that read the row pending, the first to write it takes it;
  // the other's WHERE no longer holds (not due, its claimer alive), so it changes no row.
  Statement s(db_, R"sql(
UPDATE page_deliveries SET claimed_by = ?3, next_attempt_at = ?4
WHERE page_id = ?1 AND sender = ?2 AND state = 'pending'
  AND (next_attempt_at <= ?5 OR (claimed_by IS NOT NULL AND NOT rv_process_alive(claimed_by))))sql");
  const UnixSeconds now = clock_();
  s.bind(1, page_id).bind(2, sender).bind(3, std::int64_t(::getpid()));
  s.bind(4, now + kDeliveryClaim.count()).bind(5, now);
  if (auto ran = s.run(); !ran)
    return ran.error();
  return sqlite3_changes(db_) == 1;
}

Status Store::mark_sent(std::int64_t page_id, const std::string& sender) {
  std::lock_guard lock(mutex_);
  Statement s(db_,
              "UPDATE page_deliveries SET state = 'sent', sent_at = ?3, last_error = NULL, "
              "claimed_by = NULL WHERE page_id = ?1 AND sender = ?2 AND state = 'pending'");
  s.bind(1, page_id).bind(2, sender).bind(3, clock_());
  return s.run();
}

Result<Outbox::AfterFailure> Store::mark_attempt_failed(std::int64_t page_id,
                                                        const std::string& sender,
                                                        const std::string& detail, bool permanent) {
  std::lock_guard lock(mutex_);
  Statement read(db_, "SELECT attempts FROM page_deliveries WHERE page_id = ?1 AND sender = ?2");
  read.bind(1, page_id).bind(2, sender);
  auto row = read.step();
  if (!row.ok())
    return row.error();
  if (!*row) {
    return make_error(ErrorCode::not_found,
                      "page " + std::to_string(page_id) + " has no sender \"" + sender + "\"");
  }
  const int attempts = int(read.int64(0)) + 1;
  const auto backoff = capped_backoff(retry_.initial, retry_.max_backoff, attempts);
  const bool give_up = permanent || attempts >= retry_.max_attempts;
  Statement s(db_,
              "UPDATE page_deliveries SET attempts = ?3, last_error = ?4, next_attempt_at = ?5, "
              "state = ?6, claimed_by = NULL WHERE page_id = ?1 AND sender = ?2 AND "
              "state = 'pending'");
  s.bind(1, page_id).bind(2, sender).bind(3, std::int64_t(attempts)).bind(4, detail);
  s.bind(5, clock_() + backoff.count())
      .bind(6, to_string(give_up ? DeliveryState::failed : DeliveryState::pending));
  if (auto ran = s.run(); !ran)
    return ran.error();
  return give_up ? AfterFailure::gave_up : AfterFailure::retry_later;
}

Result<DeliveryCounts> Store::delivery_counts() {
  std::lock_guard lock(mutex_);
  // `attempts` counts a delivery's failed attempts; a sent one adds the attempt that succeeded.
  Statement s(db_,
              "SELECT sender, state, COUNT(*), SUM(attempts) FROM page_deliveries "
              "GROUP BY sender, state");
  DeliveryCounts counts;
  for (;;) {
    auto more = s.step();
    if (!more.ok())
      return more.error();
    if (!*more)
      return counts;
    const auto state = enum_from_string<DeliveryState>(s.text(1));
    if (!state) {
      return make_error(ErrorCode::parse, "page_deliveries: unknown state \"" + s.text(1) +
                                              "\" (expected one of " + enum_names<DeliveryState>() +
                                              ")");
    }
    const std::int64_t n = s.int64(2), failed_attempts = s.int64(3);
    auto& sender = counts.by_sender[s.text(0)];
    const auto slot = *state == DeliveryState::sent     ? &DeliveryCounts::Counts::sent
                      : *state == DeliveryState::failed ? &DeliveryCounts::Counts::failed
                                                        : &DeliveryCounts::Counts::pending;
    sender.*slot += n;
    sender.failed_attempts += failed_attempts;
    sender.attempts += failed_attempts + (*state == DeliveryState::sent ? n : 0);
    (*state == DeliveryState::sent     ? counts.sent
     : *state == DeliveryState::failed ? counts.failed
                                       : counts.pending) += n;
  }
}

}  // namespace reverify
