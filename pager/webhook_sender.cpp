#include "pager/webhook_sender.hpp"

#include "pager/sender_http.hpp"

namespace reverify {

WebhookNotifier::WebhookNotifier(SenderConfig config, std::string token)
    : config_(std::move(config)), token_(std::move(token)) {}

DeliveryResult WebhookNotifier::deliver(const PageEvent& event, int attempt) {
  nlohmann::json body = to_json(event);
  body["severity"] = severity_of(config_.severity, event.cls);
  HttpRequest request;
  request.url = config_.url;
  request.body = body.dump();
  request.bearer_token = token_;
  // The same on every copy of this page: lets the receiver act once (ReceiverDedup).
  request.headers.emplace_back("Idempotency-Key", "reverify-page-" + page_key(event));
  request.timeout_ms = answer_timeout_ms(config_.timeout, attempt);
  return post_json(std::move(request), {token_},
                   "webhook " + config_.name + " (" + config_.url + ")");
}

}  // namespace reverify
