#include "pager/router.hpp"

namespace reverify {
namespace {

bool sender_takes(SenderKind kind, PageAction action, bool notify_on_pass) {
  switch (action) {
    case PageAction::trigger:
      return true;
    case PageAction::resolve:
      return kind != SenderKind::slack || notify_on_pass;
    case PageAction::notice:
      return kind == SenderKind::slack || kind == SenderKind::webhook || kind == SenderKind::file;
  }
  return false;
}

}  // namespace

const RouteConfig* find_route(const PagerConfig& config, const std::string& owner) {
  const RouteConfig* wildcard = nullptr;
  for (const auto& route : config.routes) {
    if (route.owner == owner)
      return &route;
    if (route.owner == "*" && !wildcard)
      wildcard = &route;
  }
  return wildcard;
}

Result<std::vector<std::string>> route_page(const PagerConfig& config, const PageEvent& event) {
  const RouteConfig* route = find_route(config, event.owner);
  if (!route) {
    auto routed = check_owner_routed(config, event.owner);
    return routed.error();
  }
  std::vector<std::string> names;
  for (const auto& name : route->senders) {
    auto it = config.senders.find(name);
    if (it != config.senders.end() &&
        sender_takes(it->second.kind, event.action, route->notify_on_pass)) {
      names.push_back(name);
    }
  }
  return names;
}

}  // namespace reverify
