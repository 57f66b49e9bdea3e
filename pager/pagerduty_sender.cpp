#include "pager/pagerduty_sender.hpp"

#include "pager/sender_http.hpp"

namespace reverify {
namespace {

// Drops the bulkiest parts first; the summary, failed checks and moved inputs stay.
nlohmann::json shrink(nlohmann::json details, const char* part) {
  if (details.is_object() && details.contains(part)) {
    details.erase(part);
    details["truncated"] = true;
  }
  return details;
}

}  // namespace

nlohmann::json pagerduty_event(const PageEvent& event, const SenderConfig& config,
                               const std::string& routing_key) {
  nlohmann::json body = {
      {"routing_key", routing_key},
      {"event_action", event.action == PageAction::resolve ? "resolve" : "trigger"},
      {"dedup_key", event.dedup_key.substr(0, 255)}};
  if (event.action == PageAction::resolve)
    return body;

  nlohmann::json links = nlohmann::json::array();
  for (const auto& link : event.links)
    links.push_back({{"href", link.href}, {"text", link.text}});
  body["links"] = links;
  body["client"] = "reverify";
  body["payload"] = {{"summary", event.summary.substr(0, 1024)},
                     {"source", config.source},
                     {"severity", severity_of(config.severity, event.cls)},
                     {"component", event.model},
                     {"group", event.owner},
                     {"class", to_string(event.cls)},
                     {"custom_details", event.details}};
  if (!event.created_at.empty())
    body["payload"]["timestamp"] = event.created_at;
  for (const char* part : {"log_tail", "evidence", "verdict", "failed_checks", "moved_inputs"}) {
    if (body.dump().size() < kPagerDutyMaxBytes)
      break;
    body["payload"]["custom_details"] = shrink(body["payload"]["custom_details"], part);
  }
  return body;
}

PagerDutyNotifier::PagerDutyNotifier(SenderConfig config, std::string routing_key)
    : config_(std::move(config)), routing_key_(std::move(routing_key)) {}

DeliveryResult PagerDutyNotifier::deliver(const PageEvent& event, int attempt) {
  if (event.action == PageAction::notice) {
    return {true, false, "pagerduty " + config_.name + ": notices are not sent to PagerDuty"};
  }
  HttpRequest request;
  request.url = config_.url;
  request.body = pagerduty_event(event, config_, routing_key_).dump();
  request.timeout_ms = answer_timeout_ms(config_.timeout, attempt);
  return post_json(std::move(request), {routing_key_},
                   "pagerduty " + config_.name + " (" + config_.url + ")");
}

}  // namespace reverify
