#include "pager/pager_config.hpp"

#include "pager/router.hpp"

namespace reverify {

const char* to_string(SenderKind kind) {
  switch (kind) {
    case SenderKind::pagerduty:
      return "pagerduty";
    case SenderKind::alertmanager:
      return "alertmanager";
    case SenderKind::slack:
      return "slack";
    case SenderKind::webhook:
      return "webhook";
    case SenderKind::file:
      return "file";
  }
  return "unknown";
}

std::optional<SenderKind> parse_sender_kind(std::string_view text) {
  for (auto kind : {SenderKind::pagerduty, SenderKind::alertmanager, SenderKind::slack,
                    SenderKind::webhook, SenderKind::file}) {
    if (text == to_string(kind))
      return kind;
  }
  return std::nullopt;
}

const std::string& severity_of(const SeverityMap& map, VerdictClass cls) {
  return is_failure(cls) ? map.failed : is_error(cls) ? map.error : map.notice;
}

Status check_owner_routed(const PagerConfig& config, const std::string& owner) {
  if (find_route(config, owner))
    return {};
  return make_error(ErrorCode::invalid_argument,
                    "pager.routes: no route for owner \"" + owner +
                        "\" and no \"*\" route; add one so its pages are not dropped");
}

}  // namespace reverify
