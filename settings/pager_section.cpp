#include "settings/pager_section.hpp"

#include <algorithm>
#include <map>

#include "core/names.hpp"
#include "pager/router.hpp"

namespace reverify {
namespace {

constexpr const char* kPagerDutyUrl = "https://events.pagerduty.com/v2/enqueue";
constexpr const char* kSenderKinds = "pagerduty, alertmanager, slack, webhook or file";

void read_severity(Section s, SeverityMap& severity) {
  for (auto [key, field] :
       {std::pair{"failed", &severity.failed}, std::pair{"error", &severity.error},
        std::pair{"notice", &severity.notice}}) {
    std::string word;
    s.read(key, word);
    if (word.empty())
      continue;
    if (word != "critical" && word != "error" && word != "warning" && word != "info") {
      s.fail(s.child_path(key), "expected critical, error, warning or info, got \"" + word + "\"");
    } else {
      *field = word;
    }
  }
  s.reject_unknown();
}

// A file path or a name: absent keeps the default, given must not be empty.
void read_nonempty(Section& s, const std::string& key, std::string& out) {
  const bool given = s.has(key);
  s.read(key, out);
  if (given && out.empty())
    s.fail(s.child_path(key), "must not be empty");
}

// The key each kind cannot do without.
const char* required_key(SenderKind kind) {
  switch (kind) {
    case SenderKind::pagerduty:
      return "routing_key_file";
    case SenderKind::alertmanager:
    case SenderKind::webhook:
      return "url";
    case SenderKind::slack:
      return "url_file";
    case SenderKind::file:
      return "path";
  }
  return "kind";
}

void read_sender(Section s, SenderConfig& sender) {
  if (!s.has("kind")) {
    s.get("kind");
    return s.fail(s.child_path("kind"), std::string("required (") + kSenderKinds + ")");
  }
  std::string kind_text;
  s.read("kind", kind_text);
  auto kind = enum_from_string<SenderKind>(kind_text);
  if (!kind) {
    return s.fail(s.child_path("kind"),
                  std::string("expected ") + kSenderKinds + ", got \"" + kind_text + "\"");
  }
  sender.kind = *kind;
  // An inline secret gets a message that says where the secret belongs.
  for (const char* key : {"routing_key", "token", "password"}) {
    if (s.has(key)) {
      s.fail_key(key, std::string("secrets are read from files only; use ") +
                          (std::string(key) == "routing_key" ? "routing_key_file" : "token_file"));
    }
  }
  if (*kind == SenderKind::slack && s.has("url")) {
    s.fail_key("url", "a Slack webhook URL is a secret; put it in a file named by url_file");
  }
  const std::string required = required_key(*kind);
  if (!s.has(required)) {
    s.fail(s.child_path(required), std::string("required for a ") + to_string(*kind) + " sender");
  }
  s.read_positive_duration("timeout", sender.timeout);
  read_severity(s.section("severity"), sender.severity);
  switch (*kind) {
    case SenderKind::pagerduty:
      sender.url = kPagerDutyUrl;
      s.read_http_url("url", sender.url);
      read_nonempty(s, "routing_key_file", sender.routing_key_file);
      read_nonempty(s, "source", sender.source);
      break;
    case SenderKind::alertmanager:
      s.read_http_url("url", sender.url);
      read_nonempty(s, "token_file", sender.token_file);
      s.read_positive_duration("resend_interval", sender.resend_interval);
      break;
    case SenderKind::slack:
      read_nonempty(s, "url_file", sender.url_file);
      break;
    case SenderKind::webhook:
      s.read_http_url("url", sender.url);
      read_nonempty(s, "token_file", sender.token_file);
      break;
    case SenderKind::file:
      read_nonempty(s, "path", sender.path);
      break;
  }
  s.reject_unknown();
}

void read_senders(Section& pager, std::map<std::string, SenderConfig>& senders) {
  Section s = pager.section("senders");
  if (!s.node() || !s.node().IsMap())
    return;
  for (const auto& item : s.node()) {
    const auto name = item.first.as<std::string>();
    s.get(name);
    if (!is_valid_name(name)) {
      s.fail(s.child_path(name), "sender names match [A-Za-z0-9][A-Za-z0-9._-]{0,127}");
      continue;
    }
    SenderConfig sender;
    sender.name = name;
    read_sender(s.section(name), sender);
    senders.emplace(name, std::move(sender));
  }
}

void read_route(Section s, const std::map<std::string, SenderConfig>& senders, RouteConfig& route) {
  if (!s.has("owner")) {
    s.get("owner");
    s.fail(s.child_path("owner"), "required (an owner name or \"*\")");
  }
  s.read("owner", route.owner);
  if (!route.owner.empty() && route.owner != "*" && !is_valid_name(route.owner)) {
    s.fail(s.child_path("owner"),
           "expected \"*\" or a name matching [A-Za-z0-9][A-Za-z0-9._-]{0,127}, got \"" +
               route.owner + "\"");
  }
  const auto list = s.get("senders");
  const auto list_path = s.child_path("senders");
  if (!list || !list.IsSequence() || list.size() == 0) {
    s.fail(list_path, "expected a non-empty list of sender names");
  } else {
    for (std::size_t i = 0; i < list.size(); ++i) {
      const auto item_path = list_path + "[" + std::to_string(i) + "]";
      if (!list[i].IsScalar()) {
        s.fail(item_path, "expected a sender name");
        continue;
      }
      const auto name = list[i].Scalar();
      if (!senders.contains(name)) {
        s.fail(item_path, "unknown sender \"" + name + "\"");
      } else if (std::find(route.senders.begin(), route.senders.end(), name) !=
                 route.senders.end()) {
        s.fail(item_path, "sender \"" + name + "\" listed twice");
      } else {
        route.senders.push_back(name);
      }
    }
  }
  s.read("notify_on_pass", route.notify_on_pass);
  s.reject_unknown();
}

void read_routes(Section& pager, PagerConfig& config) {
  const auto node = pager.get("routes");
  if (!node || node.IsNull())
    return;
  const auto path = pager.child_path("routes");
  if (!node.IsSequence())
    return pager.fail(path, "expected a list of routes");
  std::map<std::string, std::size_t> seen;  // owner -> route index
  for (std::size_t i = 0; i < node.size(); ++i) {
    const auto route_path = path + "[" + std::to_string(i) + "]";
    RouteConfig route;
    read_route(Section(node[i], route_path, pager.errors()), config.senders, route);
    if (route.owner.empty())
      continue;
    if (auto it = seen.find(route.owner); it != seen.end()) {
      pager.fail(route_path + ".owner", "\"" + route.owner + "\" is already routed by " + path +
                                            "[" + std::to_string(it->second) + "]");
      continue;
    }
    seen.emplace(route.owner, i);
    config.routes.push_back(std::move(route));
  }
}

void read_retry(Section s, RetryPolicy& retry) {
  s.read_positive_duration("initial", retry.initial);
  s.read_positive_duration("max_backoff", retry.max_backoff);
  if (retry.max_backoff < retry.initial) {
    s.fail(s.child_path("max_backoff"), "must not be shorter than " + s.child_path("initial"));
  }
  s.read("max_attempts", retry.max_attempts);
  s.at_least("max_attempts", retry.max_attempts, 1);
  s.reject_unknown();
}

void resolve_paths(PagerConfig& config, const std::filesystem::path& base) {
  for (auto& [name, sender] : config.senders) {
    for (std::string* field :
         {&sender.url_file, &sender.routing_key_file, &sender.token_file, &sender.path}) {
      if (!field->empty() && std::filesystem::path(*field).is_relative())
        *field = (base / *field).lexically_normal().string();
    }
  }
}

// pager.operator_owner: set, it must be routed; unset, the "*" route takes the operator's alerts,
// or the first route when there is none (an existing config without a "*" route stays valid).
void read_operator_owner(Section& s, PagerConfig& pager) {
  const bool set = s.has("operator_owner");
  read_nonempty(s, "operator_owner", pager.operator_owner);
  if (pager.operator_owner.empty() || pager.routes.empty() ||
      find_route(pager, pager.operator_owner))
    return;
  if (!set) {
    pager.operator_owner = pager.routes.front().owner;
    return;
  }
  s.fail(s.child_path("operator_owner"), "no route takes \"" + pager.operator_owner +
                                             "\" (name one in pager.routes, or add a \"*\" route)");
}

}  // namespace

void read_pager(Section s, const std::filesystem::path& base, PagerConfig& pager) {
  read_senders(s, pager.senders);
  read_routes(s, pager);
  read_retry(s.section("retry"), pager.retry);
  s.read_http_url("public_url", pager.public_url);
  read_operator_owner(s, pager);
  while (!pager.public_url.empty() && pager.public_url.back() == '/')
    pager.public_url.pop_back();
  s.reject_unknown();
  resolve_paths(pager, base);
}

}  // namespace reverify
