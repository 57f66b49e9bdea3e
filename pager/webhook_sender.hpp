#pragma once
// Generic JSON webhook: POST <url> with the PageEvent as JSON (pager/notifier.hpp to_json) plus
// "severity", and an optional bearer token. Receivers deduplicate by (id, dedup_key, action).

#include <string>

#include "pager/notifier.hpp"
#include "pager/pager_config.hpp"

namespace reverify {

class WebhookNotifier final : public Notifier {
 public:
  WebhookNotifier(SenderConfig config, std::string token);
  DeliveryResult deliver(const PageEvent& event) override;

 private:
  SenderConfig config_;
  std::string token_;
};

}  // namespace reverify
