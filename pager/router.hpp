#pragma once
// Which configured senders receive a page. The route is the first one whose owner equals the
// page's owner, else the first "*" route. Within the route, by action and sender kind:
//   trigger -> every sender of the route;
//   resolve -> pagerduty, alertmanager, webhook, file (they keep or mirror open-page state);
//              slack only when the route sets notify_on_pass (then it reads as a pass notice);
//   notice  -> slack, webhook, file (low urgency: never paged through pagerduty/alertmanager).
// Pure: no I/O.

#include <string>
#include <vector>

#include "core/result.hpp"
#include "pager/notifier.hpp"
#include "pager/pager_config.hpp"

namespace reverify {

// The route for an owner, or nullptr when neither the owner nor "*" has one.
const RouteConfig* find_route(const PagerConfig& config, const std::string& owner);

// Sender names in route order; an owner without a route is an error (check_owner_routed).
Result<std::vector<std::string>> route_page(const PagerConfig& config, const PageEvent& event);

}  // namespace reverify
