#include <exception>

#include "pager/notifier.hpp"

namespace reverify {

std::string page_key(const PageEvent& event) {
  std::string key = event.store_id + "-" + std::to_string(event.id);
  std::string when;  // "2026-12-05T10:53:28Z" -> "20261205105328"
  for (char c : event.created_at) {
    if (c >= '0' && c <= '9')
      when += c;
  }
  return when.empty() ? key : key + "-" + when;
}

nlohmann::json to_json(const PageEvent& event) {
  nlohmann::json links = nlohmann::json::array();
  for (const auto& link : event.links)
    links.push_back({{"text", link.text}, {"href", link.href}});
  return {{"id", event.id},
          {"store_id", event.store_id},
          {"page_key", page_key(event)},
          {"dedup_key", event.dedup_key},
          {"action", to_string(event.action)},
          {"model", event.model},
          {"version", event.version},
          {"owner", event.owner},
          {"verification_id", event.verification_id},
          {"class", to_string(event.cls)},
          {"fault", to_string(event.fault)},
          {"summary", event.summary},
          {"explanation", event.explanation},
          {"details", event.details},
          {"links", links},
          {"created_at", event.created_at}};
}

std::optional<PageEvent> page_event_from_json(const nlohmann::json& j) {
  if (!j.is_object())
    return std::nullopt;
  try {
    PageEvent event;
    event.id = j.value("id", std::int64_t{0});
    event.store_id = j.value("store_id", std::string());
    event.dedup_key = j.at("dedup_key").get<std::string>();
    auto action = enum_from_string<PageAction>(j.at("action").get<std::string>());
    auto cls = enum_from_string<VerdictClass>(j.at("class").get<std::string>());
    if (!action || !cls)
      return std::nullopt;
    event.action = *action;
    event.cls = *cls;
    event.model = j.at("model").get<std::string>();
    event.version = j.at("version").get<std::string>();
    event.owner = j.at("owner").get<std::string>();
    event.verification_id = j.value("verification_id", std::int64_t{0});
    event.summary = j.at("summary").get<std::string>();
    event.details = j.value("details", nlohmann::json::object());
    // Outbox rows written before fault and explanation had fields of their own kept them in
    // details only.
    const auto& older = event.details.is_object() ? event.details : nlohmann::json::object();
    auto fault = enum_from_string<PageFault>(j.value("fault", older.value("fault", "none")));
    event.fault = fault.value_or(PageFault::none);
    event.explanation = j.value("explanation", older.value("explanation", std::string()));
    for (const auto& link : j.value("links", nlohmann::json::array())) {
      event.links.push_back(
          {link.at("text").get<std::string>(), link.at("href").get<std::string>()});
    }
    event.created_at = j.value("created_at", std::string());
    return event;
  } catch (const nlohmann::json::exception&) {
    return std::nullopt;  // a missing field or a wrong type: not a page event
  }
}

}  // namespace reverify
