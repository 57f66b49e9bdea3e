#include "pager/pager_config.hpp"

#include <algorithm>
#include <set>

#include "core/names.hpp"
#include "core/unix_time.hpp"
#include "pager/router.hpp"

namespace reverify {
namespace {

constexpr const char* kPagerDutyUrl = "https://events.pagerduty.com/v2/enqueue";

Error config_error(const std::string& path, const std::string& what) {
  return make_error(ErrorCode::invalid_argument, path + ": " + what);
}

std::string join(const std::vector<std::string>& words) {
  std::string out;
  for (const auto& w : words)
    out += (out.empty() ? "" : ", ") + w;
  return out;
}

// Every key of a map node must be in `allowed`: a typo is an error, not a silent default.
Status check_keys(const YAML::Node& node, const std::string& path,
                  const std::vector<std::string>& allowed) {
  if (!node.IsMap())
    return config_error(path, "expected a mapping");
  for (const auto& item : node) {
    const auto key = item.first.as<std::string>();
    if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
      return config_error(path + "." + key, "unknown key (expected one of: " + join(allowed) + ")");
    }
  }
  return {};
}

Result<std::string> scalar(const YAML::Node& node, const std::string& path) {
  if (!node.IsScalar())
    return config_error(path, "expected a string");
  return node.as<std::string>();
}

Result<std::string> http_url(const YAML::Node& node, const std::string& path) {
  auto text = scalar(node, path);
  if (!text)
    return text;
  if (text->rfind("http://", 0) != 0 && text->rfind("https://", 0) != 0) {
    return config_error(path, "expected an http:// or https:// URL, got \"" + *text + "\"");
  }
  return text;
}

Result<std::int64_t> positive_duration(const YAML::Node& node, const std::string& path) {
  auto text = scalar(node, path);
  if (!text)
    return text.error();
  auto seconds = parse_duration_s(*text);
  if (!seconds)
    return config_error(path, seconds.error().message);
  if (*seconds <= 0)
    return config_error(path, "must be longer than 0s, got \"" + *text + "\"");
  return *seconds;
}

Result<bool> boolean(const YAML::Node& node, const std::string& path) {
  bool value = false;
  if (!node.IsScalar() || !YAML::convert<bool>::decode(node, value)) {
    return config_error(path, "expected true or false");
  }
  return value;
}

Result<std::string> severity_word(const YAML::Node& node, const std::string& path) {
  auto text = scalar(node, path);
  if (!text)
    return text;
  static const std::set<std::string> kWords{"critical", "error", "warning", "info"};
  if (!kWords.contains(*text)) {
    return config_error(path, "expected critical, error, warning or info, got \"" + *text + "\"");
  }
  return text;
}

Status parse_severity(const YAML::Node& node, const std::string& path, SeverityMap& out) {
  if (auto keys = check_keys(node, path, {"failed", "error", "notice"}); !keys)
    return keys;
  for (auto [key, field] : {std::pair{"failed", &out.failed}, std::pair{"error", &out.error},
                            std::pair{"notice", &out.notice}}) {
    if (!node[key])
      continue;
    auto word = severity_word(node[key], path + "." + key);
    if (!word)
      return word.error();
    *field = *word;
  }
  return {};
}

// Keys each kind accepts, and the key it cannot do without.
struct KindRules {
  std::vector<std::string> keys;
  std::string required;
};

KindRules rules_for(SenderKind kind) {
  const std::vector<std::string> common{"kind", "timeout", "severity"};
  auto with = [&](std::vector<std::string> more) {
    more.insert(more.begin(), common.begin(), common.end());
    return more;
  };
  switch (kind) {
    case SenderKind::pagerduty:
      return {with({"url", "routing_key_file", "source"}), "routing_key_file"};
    case SenderKind::alertmanager:
      return {with({"url", "token_file", "resend_interval"}), "url"};
    case SenderKind::slack:
      return {with({"url_file"}), "url_file"};
    case SenderKind::webhook:
      return {with({"url", "token_file"}), "url"};
    case SenderKind::file:
      return {with({"path"}), "path"};
  }
  return {};
}

// An inline secret gets a message that says where the secret belongs.
Status reject_inline_secret(const YAML::Node& node, const std::string& path, SenderKind kind) {
  for (const char* key : {"routing_key", "token", "password"}) {
    if (node[key]) {
      return config_error(
          path + "." + key,
          std::string("secrets are read from files only; use ") +
              (std::string(key) == "routing_key" ? "routing_key_file" : "token_file"));
    }
  }
  if (kind == SenderKind::slack && node["url"]) {
    return config_error(path + ".url",
                        "a Slack webhook URL is a secret; put it in a file named by url_file");
  }
  return {};
}

Result<SenderConfig> parse_sender(const std::string& name, const YAML::Node& node,
                                  const std::string& path) {
  if (!node.IsMap())
    return config_error(path, "expected a mapping");
  if (!node["kind"]) {
    return config_error(path + ".kind",
                        "required (pagerduty, alertmanager, slack, webhook or file)");
  }
  auto kind_text = scalar(node["kind"], path + ".kind");
  if (!kind_text)
    return kind_text.error();
  auto kind = parse_sender_kind(*kind_text);
  if (!kind) {
    return config_error(
        path + ".kind",
        "expected pagerduty, alertmanager, slack, webhook or file, got \"" + *kind_text + "\"");
  }
  if (auto inline_secret = reject_inline_secret(node, path, *kind); !inline_secret) {
    return inline_secret.error();
  }
  const auto rules = rules_for(*kind);
  if (auto keys = check_keys(node, path, rules.keys); !keys)
    return keys.error();
  if (!node[rules.required]) {
    return config_error(path + "." + rules.required,
                        std::string("required for a ") + to_string(*kind) + " sender");
  }

  SenderConfig sender;
  sender.name = name;
  sender.kind = *kind;
  if (*kind == SenderKind::pagerduty)
    sender.url = kPagerDutyUrl;
  if (node["url"]) {
    auto url = http_url(node["url"], path + ".url");
    if (!url)
      return url.error();
    sender.url = *url;
  }
  for (auto [key, field] : {std::pair{"url_file", &sender.url_file},
                            std::pair{"routing_key_file", &sender.routing_key_file},
                            std::pair{"token_file", &sender.token_file},
                            std::pair{"path", &sender.path}, std::pair{"source", &sender.source}}) {
    if (!node[key])
      continue;
    auto text = scalar(node[key], path + "." + key);
    if (!text)
      return text.error();
    if (text->empty())
      return config_error(path + "." + key, "must not be empty");
    *field = *text;
  }
  if (node["timeout"]) {
    auto seconds = positive_duration(node["timeout"], path + ".timeout");
    if (!seconds)
      return seconds.error();
    sender.timeout = std::chrono::seconds(*seconds);
  }
  if (node["resend_interval"]) {
    auto seconds = positive_duration(node["resend_interval"], path + ".resend_interval");
    if (!seconds)
      return seconds.error();
    sender.resend_interval = std::chrono::seconds(*seconds);
  }
  if (node["severity"]) {
    if (auto sev = parse_severity(node["severity"], path + ".severity", sender.severity); !sev) {
      return sev.error();
    }
  }
  return sender;
}

Result<RouteConfig> parse_route(const YAML::Node& node, const std::string& path,
                                const std::map<std::string, SenderConfig>& senders) {
  if (auto keys = check_keys(node, path, {"owner", "senders", "notify_on_pass"}); !keys) {
    return keys.error();
  }
  RouteConfig route;
  if (!node["owner"])
    return config_error(path + ".owner", "required (an owner name or \"*\")");
  auto owner = scalar(node["owner"], path + ".owner");
  if (!owner)
    return owner.error();
  if (*owner != "*" && !is_valid_name(*owner)) {
    return config_error(
        path + ".owner",
        "expected \"*\" or a name matching [A-Za-z0-9][A-Za-z0-9._-]{0,127}, got \"" + *owner +
            "\"");
  }
  route.owner = *owner;
  const auto& list = node["senders"];
  if (!list || !list.IsSequence() || list.size() == 0) {
    return config_error(path + ".senders", "expected a non-empty list of sender names");
  }
  for (std::size_t i = 0; i < list.size(); ++i) {
    const auto item_path = path + ".senders[" + std::to_string(i) + "]";
    auto name = scalar(list[i], item_path);
    if (!name)
      return name.error();
    if (!senders.contains(*name))
      return config_error(item_path, "unknown sender \"" + *name + "\"");
    if (std::find(route.senders.begin(), route.senders.end(), *name) != route.senders.end()) {
      return config_error(item_path, "sender \"" + *name + "\" listed twice");
    }
    route.senders.push_back(*name);
  }
  if (node["notify_on_pass"]) {
    auto flag = boolean(node["notify_on_pass"], path + ".notify_on_pass");
    if (!flag)
      return flag.error();
    route.notify_on_pass = *flag;
  }
  return route;
}

Result<RetryPolicy> parse_retry(const YAML::Node& node, const std::string& path) {
  if (auto keys = check_keys(node, path, {"initial", "max_backoff", "max_attempts"}); !keys) {
    return keys.error();
  }
  RetryPolicy retry;
  if (node["initial"]) {
    auto seconds = positive_duration(node["initial"], path + ".initial");
    if (!seconds)
      return seconds.error();
    retry.initial = std::chrono::seconds(*seconds);
  }
  if (node["max_backoff"]) {
    auto seconds = positive_duration(node["max_backoff"], path + ".max_backoff");
    if (!seconds)
      return seconds.error();
    retry.max_backoff = std::chrono::seconds(*seconds);
  }
  if (retry.max_backoff < retry.initial) {
    return config_error(path + ".max_backoff", "must not be shorter than " + path + ".initial");
  }
  if (node["max_attempts"]) {
    int attempts = 0;
    if (!node["max_attempts"].IsScalar() ||
        !YAML::convert<int>::decode(node["max_attempts"], attempts) || attempts < 1) {
      return config_error(path + ".max_attempts", "expected a whole number >= 1");
    }
    retry.max_attempts = attempts;
  }
  return retry;
}

}  // namespace

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

Result<PagerConfig> parse_pager_config(const YAML::Node& node, const std::string& yaml_path) {
  PagerConfig config;
  if (!node || node.IsNull())
    return config;
  if (auto keys = check_keys(node, yaml_path, {"senders", "routes", "retry", "public_url"});
      !keys) {
    return keys.error();
  }
  if (const auto& senders = node["senders"]) {
    const auto path = yaml_path + ".senders";
    if (!senders.IsMap())
      return config_error(path, "expected a mapping of sender name to sender");
    for (const auto& item : senders) {
      const auto name = item.first.as<std::string>();
      if (!is_valid_name(name)) {
        return config_error(path + "." + name,
                            "sender names match [A-Za-z0-9][A-Za-z0-9._-]{0,127}");
      }
      auto sender = parse_sender(name, item.second, path + "." + name);
      if (!sender)
        return sender.error();
      config.senders.emplace(name, std::move(*sender));
    }
  }
  if (const auto& routes = node["routes"]) {
    const auto path = yaml_path + ".routes";
    if (!routes.IsSequence())
      return config_error(path, "expected a list of routes");
    std::map<std::string, std::size_t> seen;  // owner -> route index
    for (std::size_t i = 0; i < routes.size(); ++i) {
      const auto route_path = path + "[" + std::to_string(i) + "]";
      auto route = parse_route(routes[i], route_path, config.senders);
      if (!route)
        return route.error();
      if (auto it = seen.find(route->owner); it != seen.end()) {
        return config_error(route_path + ".owner", "\"" + route->owner +
                                                       "\" is already routed by " + path + "[" +
                                                       std::to_string(it->second) + "]");
      }
      seen.emplace(route->owner, i);
      config.routes.push_back(std::move(*route));
    }
  }
  if (const auto& retry = node["retry"]) {
    auto parsed = parse_retry(retry, yaml_path + ".retry");
    if (!parsed)
      return parsed.error();
    config.retry = *parsed;
  }
  if (const auto& url = node["public_url"]) {
    auto parsed = http_url(url, yaml_path + ".public_url");
    if (!parsed)
      return parsed.error();
    config.public_url = *parsed;
    while (!config.public_url.empty() && config.public_url.back() == '/')
      config.public_url.pop_back();
  }
  return config;
}

void resolve_pager_paths(PagerConfig& config, const std::filesystem::path& base_dir) {
  for (auto& [name, sender] : config.senders) {
    for (std::string* field :
         {&sender.url_file, &sender.routing_key_file, &sender.token_file, &sender.path}) {
      if (!field->empty() && std::filesystem::path(*field).is_relative()) {
        *field = (base_dir / *field).lexically_normal().string();
      }
    }
  }
}

Status check_owner_routed(const PagerConfig& config, const std::string& owner) {
  if (find_route(config, owner))
    return {};
  return make_error(ErrorCode::invalid_argument,
                    "pager.routes: no route for owner \"" + owner +
                        "\" and no \"*\" route; add one so its pages are not dropped");
}

}  // namespace reverify
