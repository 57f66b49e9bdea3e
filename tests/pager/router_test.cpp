#include <doctest/doctest.h>

#include "pager/pager_config.hpp"
#include "pager/router.hpp"

using namespace reverify;

namespace {

SenderConfig sender(const std::string& name, SenderKind kind) {
  SenderConfig config;
  config.name = name;
  config.kind = kind;
  return config;
}

PagerConfig config() {
  PagerConfig config;
  for (auto [name, kind] :
       {std::pair{"pd", SenderKind::pagerduty}, std::pair{"am", SenderKind::alertmanager},
        std::pair{"chat", SenderKind::slack}, std::pair{"hook", SenderKind::webhook},
        std::pair{"sink", SenderKind::file}}) {
    config.senders.emplace(name, sender(name, kind));
  }
  config.routes = {{"team-vision", {"pd", "chat", "sink"}, false},
                   {"team-nlp", {"am", "chat", "hook"}, true},
                   {"*", {"sink"}, false}};
  return config;
}

PageEvent event(const std::string& owner, PageAction action) {
  PageEvent e;
  e.owner = owner;
  e.action = action;
  return e;
}

std::vector<std::string> route(const PagerConfig& c, const std::string& owner, PageAction action) {
  auto names = route_page(c, event(owner, action));
  REQUIRE(names.ok());
  return *names;
}

using Names = std::vector<std::string>;

}  // namespace

TEST_CASE("a trigger goes to every sender of the owner's route") {
  auto c = config();
  CHECK(route(c, "team-vision", PageAction::trigger) == Names{"pd", "chat", "sink"});
  CHECK(route(c, "team-nlp", PageAction::trigger) == Names{"am", "chat", "hook"});
}

TEST_CASE("an owner without a route of its own falls back to the wildcard") {
  auto c = config();
  CHECK(route(c, "team-speech", PageAction::trigger) == Names{"sink"});
  CHECK(find_route(c, "team-speech")->owner == "*");
}

TEST_CASE("a pass resolves at stateful receivers; chat hears of it only when asked") {
  auto c = config();
  CHECK(route(c, "team-vision", PageAction::resolve) == Names{"pd", "sink"});
  CHECK(route(c, "team-nlp", PageAction::resolve) == Names{"am", "chat", "hook"});
}

TEST_CASE("notices never page: no PagerDuty, no Alertmanager") {
  auto c = config();
  CHECK(route(c, "team-vision", PageAction::notice) == Names{"chat", "sink"});
  CHECK(route(c, "team-nlp", PageAction::notice) == Names{"chat", "hook"});
}

TEST_CASE("without a wildcard an unrouted owner is an error, not a dropped page") {
  auto c = config();
  c.routes.pop_back();
  auto names = route_page(c, event("team-speech", PageAction::trigger));
  REQUIRE_FALSE(names.ok());
  CHECK(names.error().message.find("team-speech") != std::string::npos);
}

TEST_CASE("every owner must be routed, by name or by the wildcard") {
  PagerConfig named;
  named.senders.emplace("f", sender("f", SenderKind::file));
  named.routes = {{"a", {"f"}, false}};
  CHECK(check_owner_routed(named, "a").ok());
  auto unrouted = check_owner_routed(named, "team-x");
  REQUIRE_FALSE(unrouted.ok());
  CHECK(unrouted.error().message.find("no route for owner \"team-x\"") != std::string::npos);

  PagerConfig wildcard = named;
  wildcard.routes = {{"*", {"f"}, false}};
  CHECK(check_owner_routed(wildcard, "team-x").ok());
}

TEST_CASE("severity follows whose fault the verdict is") {
  SeverityMap map;
  CHECK(severity_of(map, VerdictClass::failed_input_drift) == "error");
  CHECK(severity_of(map, VerdictClass::error_job) == "warning");
  CHECK(severity_of(map, VerdictClass::uncalibrated) == "info");
  CHECK(severity_of(map, VerdictClass::passed) == "info");
}
