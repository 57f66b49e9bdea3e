#pragma once
// PagerDuty Events API v2: POST <url> (…/v2/enqueue) with event_action trigger or resolve and
// dedup_key "reverify/<model>/<version>". 202 = delivered; 429 and 5xx are retried; 400 never.
// Notices are not sent: PagerDuty has no low-urgency message that does not open an incident.

#include <string>

#include <nlohmann/json.hpp>

#include "pager/notifier.hpp"
#include "pager/pager_config.hpp"

namespace reverify {

inline constexpr std::size_t kPagerDutyMaxBytes = 512 * 1024;  // whole event, documented limit

// The Events v2 body; custom_details shrinks (log tail, then evidence, then the verdict copy) until
// the event fits in kPagerDutyMaxBytes.
nlohmann::json pagerduty_event(const PageEvent& event, const SenderConfig& config,
                               const std::string& routing_key);

class PagerDutyNotifier final : public Notifier {
 public:
  PagerDutyNotifier(SenderConfig config, std::string routing_key);
  DeliveryResult deliver(const PageEvent& event, int attempt) override;

 private:
  SenderConfig config_;
  std::string routing_key_;
};

}  // namespace reverify
