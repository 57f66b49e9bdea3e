#include <doctest/doctest.h>

#include "pager/router.hpp"

using namespace reverify;

namespace {

PagerConfig config() {
  auto parsed = parse_pager_config(YAML::Load(R"(
senders:
  pd: {kind: pagerduty, routing_key_file: k}
  am: {kind: alertmanager, url: "http://127.0.0.1:9093"}
  chat: {kind: slack, url_file: s}
  hook: {kind: webhook, url: "http://127.0.0.1:1/x"}
  sink: {kind: file, path: p}
routes:
  - {owner: team-vision, senders: [pd, chat, sink]}
  - {owner: team-nlp, senders: [am, chat, hook], notify_on_pass: true}
  - {owner: "*", senders: [sink]}
)"),
                                   "pager");
  REQUIRE(parsed.ok());
  return *parsed;
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
