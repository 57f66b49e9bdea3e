#include "pager/dispatcher.hpp"

namespace reverify {
namespace {

Status status_of(const Result<Outbox::AfterFailure>& result) {
  return result.ok() ? Status() : Status(result.error());
}

std::string describe(const OutboxEntry& entry) {
  return "page " + std::to_string(entry.event.id) + " (" + entry.event.dedup_key + " " +
         to_string(entry.event.action) + ") to " + entry.sender;
}

// The fields of every line about one delivery; `attempt` 0 leaves it out.
LogFields fields_of(const OutboxEntry& entry, int attempt = 0) {
  LogFields fields{{"page", std::to_string(entry.event.id)},
                   {"sender", entry.sender},
                   {"model", entry.event.model},
                   {"version", entry.event.version}};
  if (entry.event.verification_id > 0)
    fields.push_back({"verification", std::to_string(entry.event.verification_id)});
  fields.push_back({"class", to_string(entry.event.cls)});
  if (attempt > 0)
    fields.push_back({"attempt", std::to_string(attempt)});
  return fields;
}

}  // namespace

Dispatcher::Dispatcher(Outbox& outbox, Senders senders, LogLineFn log, std::size_t batch)
    : outbox_(outbox), senders_(std::move(senders)), log_(std::move(log)), batch_(batch) {}

Dispatcher::~Dispatcher() {
  stop();
}

Result<DrainStats> Dispatcher::drain_once(PageClock::time_point now) {
  if (!open_seeded_) {
    for (const auto& [name, notifier] : senders_) {
      if (!notifier->resend_interval())
        continue;
      auto open = outbox_.open_triggers(name);
      if (!open)
        return open.error();
      // Unknown when these were last sent (a restart): re-send them on this pass.
      for (auto& entry : *open)
        open_[{name, entry.event.dedup_key}] = {entry.event, PageClock::time_point{}};
    }
    open_seeded_ = true;
  }

  DrainStats stats;
  auto rows = outbox_.pending(batch_);
  if (!rows)
    return rows.error();
  stats.more = rows->size() >= batch_;
  for (const auto& entry : *rows) {
    auto sender = senders_.find(entry.sender);
    Status marked;
    if (sender == senders_.end()) {
      const std::string detail = "sender \"" + entry.sender + "\" is not configured";
      log_(LogLevel::critical, describe(entry) + ": failed for good: " + detail, fields_of(entry));
      ++stats.failed;
      note_unrecorded(
          entry, status_of(outbox_.mark_attempt_failed(entry.event.id, entry.sender, detail, true)),
          stats);
      continue;
    }
    if (!claimed_here(entry, stats))
      continue;
    const int attempt = entry.attempts + 1;
    DeliveryResult result = sender->second->deliver(entry.event, attempt);
    if (result.delivered) {
      marked = outbox_.mark_sent(entry.event.id, entry.sender);
      note_delivered(entry, now);
      ++stats.delivered;
      log_(LogLevel::info, describe(entry) + ": delivered", fields_of(entry, attempt));
    } else if (result.permanent_failure) {
      // Never retried: the receiver rejected the event itself; its answer says why.
      log_(LogLevel::critical, describe(entry) + ": rejected for good: " + result.detail,
           fields_of(entry, attempt));
      marked =
          status_of(outbox_.mark_attempt_failed(entry.event.id, entry.sender, result.detail, true));
      ++stats.failed;
    } else if (result.unconfirmed && sender->second->dedup() == ReceiverDedup::posts_copies) {
      // It may well have arrived, and another copy would be another message: counted as sent.
      log_(LogLevel::warning,
           describe(entry) + ": sent, unconfirmed (no answer in time); not sent again, since " +
               "this receiver posts every copy: " + result.detail,
           fields_of(entry, attempt));
      marked = outbox_.mark_sent(entry.event.id, entry.sender);
      note_delivered(entry, now);
      ++stats.delivered;
    } else {
      auto after = outbox_.mark_attempt_failed(entry.event.id, entry.sender, result.detail, false);
      marked = status_of(after);
      const std::string what =
          describe(entry) + ": attempt " + std::to_string(attempt) +
          (result.unconfirmed ? " unconfirmed (the receiver merges copies of one page)"
                              : " failed");
      if (after.ok() && *after == Outbox::AfterFailure::gave_up) {
        log_(LogLevel::critical, what + "; giving up, it was the last attempt: " + result.detail,
             fields_of(entry, attempt));
        ++stats.failed;
      } else {
        // An unconfirmed attempt may have arrived; a failed one did not.
        log_(result.unconfirmed ? LogLevel::warning : LogLevel::error,
             what + ", will retry: " + result.detail, fields_of(entry, attempt));
        ++stats.retrying;
      }
    }
    note_unrecorded(entry, marked, stats);
  }
  stats.resent = resend_open_alerts(now);
  return stats;
}

// Another process draining this outbox may have read the row too: the one whose claim took it
// sends it. A claim that cannot be written leaves the row pending, attempted again.
bool Dispatcher::claimed_here(const OutboxEntry& entry, DrainStats& stats) {
  auto claimed = outbox_.claim(entry.event.id, entry.sender);
  if (!claimed) {
    log_(LogLevel::error, describe(entry) + ": cannot claim it: " + claimed.error().message,
         fields_of(entry));
    ++stats.unrecorded;
    return false;
  }
  if (!*claimed)
    ++stats.claimed_elsewhere;
  return *claimed;
}

// The row stays pending when its outcome cannot be recorded: it is attempted again (at least
// once), never lost.
void Dispatcher::note_unrecorded(const OutboxEntry& entry, const Status& marked,
                                 DrainStats& stats) {
  if (marked)
    return;
  log_(LogLevel::error, describe(entry) + ": cannot record the attempt: " + marked.error().message,
       fields_of(entry));
  ++stats.unrecorded;
}

void Dispatcher::note_delivered(const OutboxEntry& entry, PageClock::time_point now) {
  auto sender = senders_.find(entry.sender);
  if (sender == senders_.end() || !sender->second->resend_interval())
    return;
  const std::pair key{entry.sender, entry.event.dedup_key};
  if (entry.event.action == PageAction::trigger) {
    open_[key] = {entry.event, now};
  } else if (entry.event.action == PageAction::resolve) {
    open_.erase(key);
  }
}

std::size_t Dispatcher::resend_open_alerts(PageClock::time_point now) {
  std::size_t resent = 0;
  for (auto& [key, alert] : open_) {
    auto& notifier = senders_.at(key.first);
    if (now - alert.last_sent < *notifier->resend_interval())
      continue;
    DeliveryResult result = notifier->deliver(alert.event, 1);
    if (result.delivered) {
      alert.last_sent = now;
      ++resent;
    } else {
      log_(LogLevel::error,
           "keeping " + key.second + " open at " + key.first + " failed: " + result.detail,
           {{"sender", key.first},
            {"model", alert.event.model},
            {"version", alert.event.version},
            {"page", std::to_string(alert.event.id)}});
    }
  }
  return resent;
}

void Dispatcher::start(std::chrono::milliseconds poll) {
  std::lock_guard lock(mutex_);
  if (worker_.joinable())
    return;
  stopping_ = false;
  worker_ = std::thread([this, poll] { run(poll); });
}

void Dispatcher::kick() {
  {
    std::lock_guard lock(mutex_);
    kicked_ = true;
  }
  wake_.notify_one();
}

void Dispatcher::stop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_one();
  if (worker_.joinable())
    worker_.join();
}

void Dispatcher::run(std::chrono::milliseconds poll) {
  std::unique_lock lock(mutex_);
  while (!stopping_) {
    kicked_ = false;
    lock.unlock();
    bool again = false;
    if (auto stats = drain_once(PageClock::now()); !stats) {
      log_(LogLevel::error, "outbox: " + stats.error().message, {});
    } else {
      // A delivered trigger may have released the resolve queued behind it.
      again = (stats->more || stats->delivered > 0) && stats->unrecorded == 0;
    }
    lock.lock();
    if (!again)
      wake_.wait_for(lock, poll, [this] { return kicked_ || stopping_; });
  }
}

}  // namespace reverify
