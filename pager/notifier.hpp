#pragma once
// pager/: everything about pages, and this header is its contract. The layer owns the event
// (PageEvent), what a verdict pages (page_builder), who receives it (router, PagerConfig), the
// senders (PagerDuty, Alertmanager, Slack, webhook, file) and the dispatcher that drains the
// outbox. It includes core/ and policies/ only: the durable Outbox is implemented by store/, and
// the `pager:` YAML section is read by settings/ into the typed PagerConfig.
//
// How a page is deduplicated and ordered (the whole contract; each step names where it lives):
//  1. Dedup key. Every page about one model version carries dedup_key "reverify/<model>/<version>"
//     (page_dedup_key, page_builder.hpp): a trigger, the resolve that ends it and any notice. It
//     groups a version's pages (PagerDuty's alert, Alertmanager's labels). A page's key is "<store
//     id>-<page id>-<created_at digits>" (page_key): its outbox row, the store that recorded it
//     (a new or restored store's ids start again) and its time, so that a store rolled back with
//     its state_dir (a machine snapshot), reusing page ids, still gives new pages new keys.
//  2. Recorded before sent. A verdict's pages are written to the Outbox in the SAME SQLite
//     transaction as the verdict (Store::record_verdict): a crash leaves both or neither, so a
//     page is never lost and never recorded twice. Nothing is sent before that commit; the
//     dispatcher only reads the outbox. One delivery row per (page, sender the router picked).
//  3. A resolve never overtakes its trigger. A row is not attempted while an OLDER row with the
//     same dedup key and the same sender is still pending, due or not (Outbox::pending below), so
//     one receiver gets one version's pages in the order they were recorded.
//  4. At least once, by one process. Before an attempt the dispatcher claims the row
//     (Outbox::claim): of the processes draining one outbox (reverifyd, a `reverify run` that
//     recorded a page), exactly one sends a given attempt. A row is marked sent only after the
//     receiver accepted it; a crash between the two sends it again after the restart. Transient
//     failures (429, 5xx, network) retry with the capped backoff (policies/backoff.hpp,
//     Outbox::mark_attempt_failed); a rejected event (400, 413, 422) fails for good; the attempt
//     that exhausts the retries logs one give-up line.
//  5. Receivers deduplicate (ReceiverDedup). PagerDuty by dedup_key, Alertmanager by the alert's
//     labels (a resend refreshes the same alert), the file sink by (page key, dedup_key, action,
//     created_at) in its own file, webhook receivers by the page key (also sent as
//     Idempotency-Key). Slack cannot: a crash between sending and recording can post a page
//     twice there.
//  6. A slow receiver does not multiply copies. An attempt sent whole with no answer in time is
//     unconfirmed (it may have arrived): later attempts wait longer for the answer
//     (answer_timeout_ms, sender_http.hpp), and an unconfirmed attempt is retried only at a
//     receiver that merges copies; Slack counts it sent.

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/result.hpp"
#include "core/verdict_class.hpp"

#include "core/enum_names.hpp"

namespace reverify {

enum class PageAction { trigger, resolve, notice };
template <>
struct EnumNames<PageAction> {
  static constexpr EnumName<PageAction> table[] = {
      {PageAction::trigger, "trigger"},
      {PageAction::resolve, "resolve"},
      {PageAction::notice, "notice"},
  };
};

// Whose problem a page is about (the page says so, in words that never blame without evidence):
// the model's (failed:*: an input or its numbers moved), the recorded job's (error:job where the
// job exited non-zero by itself, hit its own bound or wrote outputs the contract refuses), the
// system's (any other error:*), or none (passed, uncalibrated).
enum class PageFault { none, model, job, system };
template <>
struct EnumNames<PageFault> {
  static constexpr EnumName<PageFault> table[] = {
      {PageFault::none, "none"},
      {PageFault::model, "model"},
      {PageFault::job, "job"},
      {PageFault::system, "system"},
  };
};

struct PageLink {
  std::string text;
  std::string href;
};

struct PageEvent {
  std::int64_t id = 0;   // outbox row id: unique in its store only
  std::string store_id;  // the store that recorded it (set when read from the outbox)
  std::string dedup_key;
  PageAction action = PageAction::trigger;
  std::string model, version, owner;
  std::int64_t verification_id = 0;  // the verification whose verdict it is about; 0 = unknown
  VerdictClass cls = VerdictClass::passed;
  PageFault fault = PageFault::none;
  std::string summary;      // one line, phone-sized
  std::string explanation;  // the verdict's explanation, whole
  // What receivers get besides: the verdict, failed checks, moved inputs, log tail. Written for
  // them, never read back by key.
  nlohmann::json details;
  std::vector<PageLink> links;
  std::string created_at;  // RFC 3339 UTC
};

// "<store id>-<page id>-<yyyymmddhhmmss>" (the last part absent without a created_at): point 1.
std::string page_key(const PageEvent& event);

nlohmann::json to_json(const PageEvent& event);  // with "page_key"
std::optional<PageEvent> page_event_from_json(const nlohmann::json& j);

// Delivery outcome of one attempt. delivered = the receiver accepted it (PagerDuty 202, 2xx).
// Not delivered and not permanent = transient (429, 5xx, network, timeout): tried again later.
// permanent_failure = the receiver rejected the event itself (e.g. HTTP 400): never retried.
// unconfirmed = the request was sent whole but no answer came in time: the receiver may have
// accepted it (a slow receiver), so sending it again may make a second copy.
// detail never holds a secret (routing key, token, Slack webhook URL): senders redact it.
struct DeliveryResult {
  bool delivered = false;
  bool permanent_failure = false;  // e.g. HTTP 400: never retried
  std::string detail;
  bool unconfirmed = false;  // sent, no answer in time; implies !delivered
};

// What a receiver does with a second copy of an event it already has: what a re-send after an
// unconfirmed attempt produces.
enum class ReceiverDedup {
  // One alert whatever the number of copies: PagerDuty (events with the same dedup_key go to the
  // same open alert), Alertmanager (alerts with the same labels are one alert), the file sink
  // (never writes a page id twice), a webhook (every copy carries the page's id and an
  // Idempotency-Key header; acting once per id is the receiver's contract).
  merges_copies,
  // Every copy is a new message (Slack): an unconfirmed delivery is not sent again.
  posts_copies,
};

class Notifier {
 public:
  virtual ~Notifier() = default;
  // Blocking (libcurl): call from a worker thread. `attempt` counts from 1 for this page and
  // sender; HTTP senders wait longer for an answer on later attempts (answer_timeout()), so a
  // receiver slower than the configured timeout is not sent copy after copy.
  virtual DeliveryResult deliver(const PageEvent& event, int attempt) = 0;
  virtual ReceiverDedup dedup() const { return ReceiverDedup::merges_copies; }
  // Receivers that forget an open alert unless it is repeated (Alertmanager) return how often an
  // open trigger must be re-delivered; the others return nothing.
  virtual std::optional<std::chrono::seconds> resend_interval() const { return std::nullopt; }
};

// The durable outbox the dispatcher drains; implemented by the daemon's SQLite store.
// One row per (page, sender): a page is recorded once, with one delivery row for every sender the
// router picked. The outbox owns the retry schedule (its clock, its backoff settings).
struct OutboxEntry {
  PageEvent event;     // event.id = the page's row id
  std::string sender;  // the configured sender this row is for
  int attempts = 0;    // failed attempts so far
};

// How long a claimed row is held for its claimer (Outbox::claim): longer than any attempt waits
// for an answer (kMaxAnswerTimeout, sender_http.hpp, doubled).
inline constexpr std::chrono::seconds kDeliveryClaim{600};

class Outbox {
 public:
  virtual ~Outbox() = default;

  // The delivery rows to attempt now. EXACTLY the rows that satisfy all of:
  //   1. state is pending (never sent, not failed for good);
  //   2. next_attempt_at <= now (the outbox's clock); a new row is due at once;
  //   3. no OLDER row (smaller page id) with the same dedup_key AND the same sender is still
  //      pending, due or not. So a resolve never overtakes the trigger it resolves: it waits
  //      until that trigger was sent or failed for good;
  // ordered by page id, then sender; at most `limit` rows.
  virtual Result<std::vector<OutboxEntry>> pending(std::size_t limit) = 0;

  // Takes a row pending() returned for one attempt by this process: true when this call took
  // it. Of several processes that read the same row pending, exactly one gets true; the others
  // skip it. The row stays pending but is due to nobody else until mark_sent or
  // mark_attempt_failed ends the claim, or kDeliveryClaim passes, or the process that took it is
  // found gone (then it is due at once: a crash mid-send is sent again without waiting). An
  // outbox only one process drains may take every row.
  virtual Result<bool> claim(std::int64_t page_id, const std::string& sender) {
    (void)page_id;
    (void)sender;
    return true;
  }

  // pending -> sent. Idempotent (a second call for a sent row changes nothing).
  virtual Status mark_sent(std::int64_t page_id, const std::string& sender) = 0;

  // One failed attempt: attempts + 1 and last_error = detail (already free of secrets).
  // permanent, or attempts reaching the configured max: state failed, never returned again
  // (returns gave_up). Otherwise next_attempt_at = now + capped_backoff(initial, max_backoff,
  // attempts) (policies/backoff.hpp), attempts counted after this failure (30 s, 60 s, 120 s, ...
  // capped).
  enum class AfterFailure { retry_later, gave_up };
  virtual Result<AfterFailure> mark_attempt_failed(std::int64_t page_id, const std::string& sender,
                                                   const std::string& detail, bool permanent) = 0;

  // For one sender, per dedup_key, the newest SENT row when its action is trigger: the pages
  // still open at that receiver. The dispatcher re-sends these to receivers that forget an
  // alert unless it is repeated (Alertmanager), also after a daemon restart. An outbox that
  // cannot answer returns an empty list (then open alerts survive only while the process does).
  virtual Result<std::vector<OutboxEntry>> open_triggers(const std::string& sender) {
    (void)sender;
    return std::vector<OutboxEntry>{};
  }
};

}  // namespace reverify
