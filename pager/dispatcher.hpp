#pragma once
// Drains the durable Outbox through the configured senders: at least once, in order per
// (dedup_key, sender) (the outbox's pending() guarantees a resolve never overtakes its trigger),
// with the outbox's capped exponential backoff for transient failures (429, 5xx, network) and no
// retry of a rejected event (400). An attempt that timed out after it was sent (unconfirmed) is
// retried only at a receiver that merges copies (ReceiverDedup); the attempt that exhausts the
// retries logs one "giving up" line. Open alerts at receivers that forget them (Alertmanager) are
// re-sent every resend interval, seeded from Outbox::open_triggers after a restart.
//
// Every outcome is one log line with its priority (core/log.hpp) and the fields page=, sender=,
// attempt=, model=, version=, class=: a delivered page is info, an unconfirmed one a warning, a
// failed attempt an error, and giving up (out of attempts, rejected, no such sender) critical.
//
// Thread-safety: drain_once may be called from any one thread at a time; start() runs it on a
// worker thread of its own (libcurl blocks), kick() and stop() may be called from any thread.
// Nothing secret reaches the log: senders redact their details before returning them.

#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>

#include "core/log.hpp"
#include "core/result.hpp"
#include "pager/notifier.hpp"

namespace reverify {

using PageClock = std::chrono::system_clock;

struct DrainStats {
  std::size_t delivered = 0;   // rows marked sent
  std::size_t retrying = 0;    // transient failures, to be tried again
  std::size_t failed = 0;      // rejected for good (400, unknown sender) or out of attempts
  std::size_t resent = 0;      // open alerts kept alive
  std::size_t unrecorded = 0;  // outcomes the outbox could not record (attempted again later)
  std::size_t claimed_elsewhere = 0;  // rows another process took first (Outbox::claim)
  bool more = false;                  // the batch limit was reached: drain again
};

class Dispatcher {
 public:
  using Senders = std::map<std::string, std::shared_ptr<Notifier>>;

  // A row whose sender is not in `senders` (removed from the config) fails for good, logged.
  Dispatcher(Outbox& outbox, Senders senders, LogLineFn log = log_lines_to_stderr(),
             std::size_t batch = 256);
  ~Dispatcher();  // stop()
  Dispatcher(const Dispatcher&) = delete;
  Dispatcher& operator=(const Dispatcher&) = delete;

  // One pass on the calling thread: every due row attempted once, then open alerts whose
  // re-send time has come (by `now`) re-sent. Blocking. An outbox error is returned.
  Result<DrainStats> drain_once(PageClock::time_point now);

  // Runs drain_once on a worker thread after every kick() and at least every `poll`.
  void start(std::chrono::milliseconds poll = std::chrono::milliseconds(1000));
  void kick();  // a page was recorded: drain now
  void stop();  // waits for the current attempt to finish

 private:
  struct OpenAlert {
    PageEvent event;
    PageClock::time_point last_sent;
  };
  bool claimed_here(const OutboxEntry& entry, DrainStats& stats);
  void note_unrecorded(const OutboxEntry& entry, const Status& marked, DrainStats& stats);
  void note_delivered(const OutboxEntry& entry, PageClock::time_point now);
  std::size_t resend_open_alerts(PageClock::time_point now);
  void run(std::chrono::milliseconds poll);

  Outbox& outbox_;
  Senders senders_;
  LogLineFn log_;
  std::size_t batch_;
  bool open_seeded_ = false;
  std::map<std::pair<std::string, std::string>, OpenAlert> open_;  // (sender, dedup_key)

  std::mutex mutex_;
  std::condition_variable wake_;
  bool kicked_ = false, stopping_ = false;
  std::thread worker_;
};

}  // namespace reverify
