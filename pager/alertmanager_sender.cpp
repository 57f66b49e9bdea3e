#include "pager/alertmanager_sender.hpp"

#include "core/redact.hpp"
#include "core/unix_time.hpp"
#include "pager/sender_http.hpp"

namespace reverify {
namespace {

std::string wire_time(std::chrono::system_clock::time_point t) {
  return rfc3339(std::chrono::duration_cast<std::chrono::seconds>(t.time_since_epoch()).count());
}

std::string matcher(const std::string& label, const std::string& value) {
  return "filter=" + url_encode(label + "=\"" + value + "\"");
}

}  // namespace

nlohmann::json alertmanager_alert(const PageEvent& event, const SenderConfig& config,
                                  std::chrono::system_clock::time_point ends_at) {
  std::string links;
  for (const auto& link : event.links)
    links += (links.empty() ? "" : "\n") + link.text + ": " + link.href;
  nlohmann::json alert = {
      {"labels",
       {{"alertname", kAlertName},
        {"model", event.model},
        {"version", event.version},
        {"owner", event.owner},
        {"class", to_string(event.cls)},
        {"severity", severity_of(config.severity, event.cls)}}},
      {"annotations",
       {{"summary", event.summary}, {"description", event.explanation}, {"links", links}}},
      {"endsAt", wire_time(ends_at)}};
  if (!event.created_at.empty())
    alert["startsAt"] = event.created_at;
  if (!event.links.empty())
    alert["generatorURL"] = event.links.front().href;
  return alert;
}

AlertmanagerNotifier::AlertmanagerNotifier(SenderConfig config, std::string token,
                                           WallClockFn clock)
    : config_(std::move(config)), token_(std::move(token)), clock_(std::move(clock)) {
  while (!config_.url.empty() && config_.url.back() == '/')
    config_.url.pop_back();
}

std::optional<std::chrono::seconds> AlertmanagerNotifier::resend_interval() const {
  return config_.resend_interval;
}

DeliveryResult AlertmanagerNotifier::deliver(const PageEvent& event, int attempt) {
  const std::string what = "alertmanager " + config_.name + " (" + config_.url + ")";
  if (event.action == PageAction::notice) {
    return {true, false, what + ": notices are not sent to Alertmanager"};
  }
  const auto now = clock_();
  HttpRequest get;
  get.url = config_.url +
            "/api/v2/alerts?active=true&silenced=true&inhibited=true&unprocessed=true&" +
            matcher("alertname", kAlertName) + "&" + matcher("model", event.model) + "&" +
            matcher("version", event.version);
  get.bearer_token = token_;
  get.timeout_ms = answer_timeout_ms(config_.timeout, attempt);
  auto open = http_request(get);
  if (!open || open->status != 200) {
    DeliveryResult failed = classify_response(open);
    failed.delivered = false;
    failed.permanent_failure = false;  // reading open alerts back: always worth another try
    failed.unconfirmed = false;        // and a read changes nothing at the receiver
    failed.detail = what + ": reading open alerts: " + redact(failed.detail, {token_});
    return failed;
  }
  nlohmann::json alerts = nlohmann::json::array();
  const std::string cls = to_string(event.cls);
  const auto listed = nlohmann::json::parse(open->body, nullptr, false);
  for (const auto& alert : listed.is_array() ? listed : nlohmann::json::array()) {
    if (!alert.contains("labels") || !alert["labels"].is_object())
      continue;
    const auto& labels = alert["labels"];
    if (event.action == PageAction::trigger && labels.value("class", "") == cls)
      continue;
    alerts.push_back({{"labels", labels},
                      {"annotations", alert.value("annotations", nlohmann::json::object())},
                      {"startsAt", alert.value("startsAt", wire_time(now))},
                      {"endsAt", wire_time(now)}});
  }
  if (event.action == PageAction::trigger) {
    alerts.push_back(alertmanager_alert(event, config_, now + 3 * config_.resend_interval));
  }
  if (alerts.empty())
    return {true, false, what + ": no open alert to resolve"};

  HttpRequest post;
  post.url = config_.url + "/api/v2/alerts";
  post.body = alerts.dump();
  post.bearer_token = token_;
  post.timeout_ms = get.timeout_ms;
  return post_json(std::move(post), {token_}, what);
}

}  // namespace reverify
