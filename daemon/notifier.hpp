#pragma once
// The daemon's paging seam. The pipeline records a PageEvent in the store's outbox (in the same
// transaction as the verdict), then a dispatcher delivers it through a Notifier. Delivery is at
// least once; receivers deduplicate by dedup_key ("reverify/<model>/<version>").

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/result.hpp"
#include "core/verdict_class.hpp"

namespace reverify {

enum class PageAction { trigger, resolve, notice };
const char* to_string(PageAction action);
std::optional<PageAction> parse_page_action(std::string_view text);

struct PageLink {
  std::string text;
  std::string href;
};

struct PageEvent {
  std::int64_t id = 0;  // outbox row id
  std::string dedup_key;
  PageAction action = PageAction::trigger;
  std::string model, version, owner;
  VerdictClass cls = VerdictClass::passed;
  std::string summary;               // one line, phone-sized
  nlohmann::json details;            // verdict, failed checks, moved inputs, log tail
  std::vector<PageLink> links;
  std::string created_at;            // RFC 3339 UTC
};

nlohmann::json to_json(const PageEvent& event);
std::optional<PageEvent> page_event_from_json(const nlohmann::json& j);

// Delivery outcome of one attempt: retry_after set = transient (429/5xx/network), try again later.
struct DeliveryResult {
  bool delivered = false;
  bool permanent_failure = false;  // e.g. HTTP 400: never retried
  std::string detail;
};

class Notifier {
 public:
  virtual ~Notifier() = default;
  // Blocking (libcurl): call from a worker thread.
  virtual DeliveryResult deliver(const PageEvent& event) = 0;
};

// The durable outbox the dispatcher drains; implemented by the daemon's SQLite store.
struct OutboxEntry {
  PageEvent event;
  std::string sender;  // the configured sender this row is for
  int attempts = 0;
};

class Outbox {
 public:
  virtual ~Outbox() = default;
  virtual Result<std::vector<OutboxEntry>> pending(std::size_t limit) = 0;
  virtual Status mark_sent(std::int64_t page_id, const std::string& sender) = 0;
  virtual Status mark_attempt_failed(std::int64_t page_id, const std::string& sender,
                                     const std::string& detail, bool permanent) = 0;
};

}  // namespace reverify
