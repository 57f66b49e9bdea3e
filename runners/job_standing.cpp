#include "runners/runner.hpp"

namespace reverify {

nlohmann::json JobStanding::to_json() const {
  return {{"state", to_string(state)}, {"queue", queue}, {"reason", reason}, {"nodes", nodes}};
}

std::optional<JobStanding> JobStanding::from_json(const nlohmann::json& doc) {
  if (!doc.is_object() || !doc.contains("state") || !doc["state"].is_string())
    return std::nullopt;
  const auto state = enum_from_string<JobQueueState>(doc["state"].get<std::string>());
  if (!state)
    return std::nullopt;
  const auto text = [&doc](const char* key) {
    return doc.contains(key) && doc[key].is_string() ? doc[key].get<std::string>() : "";
  };
  return JobStanding{*state, text("queue"), text("reason"), text("nodes")};
}

std::string JobStanding::text() const {
  std::string out = to_string(state);
  if (!queue.empty())
    out += " in partition " + queue;
  if (state == JobQueueState::pending && !reason.empty())
    out += " (" + reason + ")";
  if (state == JobQueueState::running && !nodes.empty())
    out += " on " + nodes;
  return out;
}

}  // namespace reverify
