#include "pager/slack_sender.hpp"

#include "pager/page_builder.hpp"
#include "pager/sender_http.hpp"

namespace reverify {
namespace {

// Slack mrkdwn reserves &, < and >.
std::string escape(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '&')
      out += "&amp;";
    else if (c == '<')
      out += "&lt;";
    else if (c == '>')
      out += "&gt;";
    else
      out += c;
  }
  return out;
}

std::string headline(const PageEvent& event) {
  const std::string id = event.model + "@" + event.version;
  switch (event.action) {
    case PageAction::trigger:
      return (is_failure(event.cls) ? "Rebuild failed: " : "Verification error: ") + id + " (" +
             to_string(event.cls) + ")";
    case PageAction::resolve:
      return "Verified: " + id;
    case PageAction::notice:
      return "Notice: " + id + " (" + to_string(event.cls) + ")";
  }
  return id;
}

}  // namespace

nlohmann::json slack_message(const PageEvent& event) {
  nlohmann::json blocks = nlohmann::json::array();
  blocks.push_back(
      {{"type", "header"},
       {"text",
        {{"type", "plain_text"}, {"text", truncate_utf8(headline(event), kSlackHeaderMax)}}}});
  std::string body = escape(event.summary);
  if (const char* fault =
          event.fault == PageFault::model    ? "the model's (an input or its numbers moved)"
          : event.fault == PageFault::job    ? "the recorded job's (it failed by itself)"
          : event.fault == PageFault::system ? "the system's (reverify or its infrastructure)"
                                             : nullptr) {
    body += "\n*Whose problem:* " + std::string(fault);
  }
  blocks.push_back(
      {{"type", "section"},
       {"text", {{"type", "mrkdwn"}, {"text", truncate_utf8(body, kSlackSectionMax)}}}});
  if (!event.links.empty()) {
    std::string links;
    for (const auto& link : event.links) {
      links += (links.empty() ? "" : " · ") + ("<" + link.href + "|" + escape(link.text) + ">");
    }
    blocks.push_back(
        {{"type", "context"},
         {"elements", {{{"type", "mrkdwn"}, {"text", truncate_utf8(links, kSlackSectionMax)}}}}});
  }
  return {{"text", truncate_utf8(headline(event) + ": " + event.summary, kSlackSectionMax)},
          {"blocks", blocks}};
}

SlackNotifier::SlackNotifier(SenderConfig config, std::string webhook_url)
    : config_(std::move(config)), webhook_url_(std::move(webhook_url)) {}

DeliveryResult SlackNotifier::deliver(const PageEvent& event, int attempt) {
  HttpRequest request;
  request.url = webhook_url_;
  request.body = slack_message(event).dump();
  request.timeout_ms = answer_timeout_ms(config_.timeout, attempt);
  return post_json(std::move(request), {webhook_url_}, "slack " + config_.name);
}

}  // namespace reverify
