#pragma once
// Generic JSON webhook: POST <url> with the PageEvent as JSON (pager/notifier.hpp to_json) plus
// "severity", and an optional bearer token. Every copy of one page carries the same "id" and an
// `Idempotency-Key: reverify-page-<id>` header: receivers deduplicate by them.

#include <string>

#include "pager/notifier.hpp"
#include "pager/pager_config.hpp"

namespace reverify {

class WebhookNotifier final : public Notifier {
 public:
  WebhookNotifier(SenderConfig config, std::string token);
  DeliveryResult deliver(const PageEvent& event, int attempt) override;

 private:
  SenderConfig config_;
  std::string token_;
};

}  // namespace reverify
