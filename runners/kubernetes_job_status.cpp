#include "runners/kubernetes_job_status.hpp"

#include "core/unix_time.hpp"

#include <array>

namespace reverify {
namespace {

using nlohmann::json;

bool condition_true(const json& conditions, std::string_view type, json* found = nullptr) {
  if (!conditions.is_array())
    return false;
  for (const auto& c : conditions) {
    if (c.value("type", "") == type && c.value("status", "") == "True") {
      if (found)
        *found = c;
      return true;
    }
  }
  return false;
}

const json& at_path(const json& j, std::initializer_list<const char*> keys) {
  static const json null_json;
  const json* cur = &j;
  for (const char* key : keys) {
    if (!cur->is_object() || !cur->contains(key))
      return null_json;
    cur = &(*cur)[key];
  }
  return *cur;
}

const json* container_status(const json& pod, std::string_view container) {
  const json& statuses = at_path(pod, {"status", "containerStatuses"});
  if (!statuses.is_array())
    return nullptr;
  for (const auto& s : statuses) {
    if (s.value("name", "") == container)
      return &s;
  }
  return nullptr;
}

}  // namespace

bool WatchStreamParser::feed(std::string_view chunk, const EventFn& on_event) {
  pending_.append(chunk);
  std::size_t start = 0;
  for (std::size_t nl; (nl = pending_.find('\n', start)) != std::string::npos; start = nl + 1) {
    std::string_view line(pending_.data() + start, nl - start);
    if (line.find_first_not_of(" \r\t") == std::string_view::npos)
      continue;
    json event = json::parse(line, nullptr, false);
    if (event.is_discarded() || !event.is_object()) {
      event = {{"type", "ERROR"},
               {"object",
                {{"kind", "Status"},
                 {"code", 0},
                 {"message", "unreadable watch event: " + std::string(line.substr(0, 200))}}}};
    } else if (event.value("kind", "") == "Status") {
      event = {{"type", "ERROR"}, {"object", event}};  // a plain error response (e.g. HTTP 410)
    }
    if (!on_event(event)) {
      pending_.erase(0, nl + 1);
      return false;
    }
  }
  pending_.erase(0, start);
  return true;
}

JobState classify_job(const json& job) {
  const json& conditions = at_path(job, {"status", "conditions"});
  json failed;
  if (condition_true(conditions, "Failed", &failed)) {
    return JobState{JobPhase::failed, failed.value("reason", ""), failed.value("message", "")};
  }
  if (condition_true(conditions, "Complete"))
    return JobState{JobPhase::succeeded, "", ""};
  return JobState{};
}

std::optional<json> final_pod(const json& pod_list) {
  const json& items = at_path(pod_list, {"items"});
  if (!items.is_array() || items.empty())
    return std::nullopt;
  const json* newest = nullptr;
  const json* newest_undisrupted = nullptr;
  auto created = [](const json* pod) {
    return at_path(*pod, {"metadata", "creationTimestamp"}).dump();
  };
  for (const auto& pod : items) {
    if (!newest || created(&pod) > created(newest))
      newest = &pod;
    if (condition_true(at_path(pod, {"status", "conditions"}), "DisruptionTarget"))
      continue;
    if (!newest_undisrupted || created(&pod) > created(newest_undisrupted))
      newest_undisrupted = &pod;
  }
  return newest_undisrupted ? *newest_undisrupted : *newest;
}

std::optional<ContainerEnd> container_end(const json& pod, std::string_view container) {
  const json* status = container_status(pod, container);
  if (!status)
    return std::nullopt;
  const json& terminated = at_path(*status, {"state", "terminated"});
  if (!terminated.is_object())
    return std::nullopt;
  ContainerEnd end{terminated.value("exitCode", -1), terminated.value("reason", ""), std::nullopt};
  const auto time_of = [&](const char* key) -> std::optional<UnixSeconds> {
    if (!terminated.contains(key) || !terminated[key].is_string())
      return std::nullopt;
    auto parsed = parse_rfc3339(terminated[key].get<std::string>());
    return parsed.ok() ? std::optional<UnixSeconds>(*parsed) : std::nullopt;
  };
  const auto started = time_of("startedAt"), finished = time_of("finishedAt");
  if (started && finished && *finished >= *started)
    end.run_seconds = static_cast<double>(*finished - *started);
  return end;
}

std::optional<std::string> provision_failure(const json& pod, std::string_view container) {
  static constexpr std::array<std::string_view, 4> kPermanent = {
      "ImagePullBackOff", "InvalidImageName", "CreateContainerConfigError", "ErrImageNeverPull"};
  const json* status = container_status(pod, container);
  if (!status)
    return std::nullopt;
  const json& waiting = at_path(*status, {"state", "waiting"});
  if (!waiting.is_object())
    return std::nullopt;
  const std::string reason = waiting.value("reason", "");
  for (auto permanent : kPermanent) {
    if (reason == permanent) {
      const std::string message = waiting.value("message", "");
      return reason + (message.empty() ? "" : ": " + message);
    }
  }
  return std::nullopt;
}

std::string status_message(std::string_view body) {
  json status = json::parse(body, nullptr, false);
  if (status.is_object() && status.contains("message") && status["message"].is_string()) {
    return status["message"].get<std::string>();
  }
  constexpr std::size_t kMax = 300;
  return std::string(body.substr(0, kMax)) + (body.size() > kMax ? "..." : "");
}

}  // namespace reverify
