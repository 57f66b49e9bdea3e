#pragma once
// An in-memory Outbox that follows the contract in pager/notifier.hpp to the letter (due rows
// only, no row overtaking an older pending row of the same dedup_key and sender, capped
// exponential backoff on the outbox's own clock). The clock is a number the test sets.
// Header-only test support.

#include <algorithm>
#include <chrono>
#include <set>
#include <string>
#include <vector>

#include "pager/notifier.hpp"
#include "pager/pager_config.hpp"

namespace reverify::test {

class MemoryOutbox final : public Outbox {
 public:
  struct Row {
    PageEvent event;
    std::string sender;
    std::string state = "pending";
    int attempts = 0;
    std::int64_t next_attempt_at = 0;  // seconds on the test clock
    std::string last_error;
  };

  explicit MemoryOutbox(RetryPolicy retry = {}) : retry_(retry) {}

  std::int64_t now = 0;  // the outbox's clock, in seconds

  std::int64_t record(PageEvent event, const std::vector<std::string>& senders) {
    event.id = ++last_id_;
    for (const auto& sender : senders)
      rows_.push_back({event, sender, "pending", 0, now, ""});
    return event.id;
  }

  const Row& row(std::int64_t page_id, const std::string& sender) { return find(page_id, sender); }

  Result<std::vector<OutboxEntry>> pending(std::size_t limit) override {
    std::vector<OutboxEntry> out;
    for (const auto& r : rows_) {  // rows_ is in page id order
      if (out.size() == limit)
        break;
      if (r.state != "pending" || r.next_attempt_at > now)
        continue;
      const bool blocked = std::any_of(rows_.begin(), rows_.end(), [&](const Row& older) {
        return older.event.id < r.event.id && older.sender == r.sender &&
               older.event.dedup_key == r.event.dedup_key && older.state == "pending";
      });
      if (!blocked)
        out.push_back({r.event, r.sender, r.attempts});
    }
    return out;
  }

  Status mark_sent(std::int64_t page_id, const std::string& sender) override {
    find(page_id, sender).state = "sent";
    return {};
  }

  Result<AfterFailure> mark_attempt_failed(std::int64_t page_id, const std::string& sender,
                                           const std::string& detail, bool permanent) override {
    Row& r = find(page_id, sender);
    r.attempts += 1;
    r.last_error = detail;
    if (permanent || r.attempts >= retry_.max_attempts) {
      r.state = "failed";
      return AfterFailure::gave_up;
    }
    const std::int64_t backoff = std::min<std::int64_t>(
        retry_.initial.count() << std::min(r.attempts - 1, 30), retry_.max_backoff.count());
    r.next_attempt_at = now + backoff;
    return AfterFailure::retry_later;
  }

  Result<std::vector<OutboxEntry>> open_triggers(const std::string& sender) override {
    std::vector<OutboxEntry> out;
    std::set<std::string> seen;  // dedup keys whose newest sent row was already looked at
    for (auto it = rows_.rbegin(); it != rows_.rend(); ++it) {
      if (it->sender != sender || it->state != "sent")
        continue;
      if (!seen.insert(it->event.dedup_key).second)
        continue;
      if (it->event.action == PageAction::trigger)
        out.push_back({it->event, sender, it->attempts});
    }
    return out;
  }

 private:
  Row& find(std::int64_t page_id, const std::string& sender) {
    return *std::find_if(rows_.begin(), rows_.end(),
                         [&](const Row& r) { return r.event.id == page_id && r.sender == sender; });
  }

  RetryPolicy retry_;
  std::int64_t last_id_ = 0;
  std::vector<Row> rows_;
};

}  // namespace reverify::test
