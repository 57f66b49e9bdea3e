#pragma once
// The typed `pager:` section of reverify.yaml (settings/ reads the YAML into it): who gets paged,
// through which receivers, and how hard delivery is retried. Secrets (PagerDuty routing keys,
// bearer tokens, Slack webhook URLs) are read from files named by `*_file` keys, never written
// inline: an inline secret is a config error. Example:
//   pager:
//     public_url: https://reverify.example        # base of the links in pages
//     senders:
//       pd:    {kind: pagerduty, routing_key_file: /etc/reverify/pd.key}
//       am:    {kind: alertmanager, url: http://127.0.0.1:9093, resend_interval: 1m}
//       chat:  {kind: slack, url_file: /etc/reverify/slack.url}
//       sink:  {kind: file, path: /var/lib/reverify/pages.jsonl}
//     routes:
//       - {owner: team-vision, senders: [pd, chat], notify_on_pass: true}
//       - {owner: "*", senders: [am]}
//     retry: {initial: 30s, max_backoff: 1h, max_attempts: 100}

#include <chrono>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/result.hpp"
#include "core/verdict_class.hpp"

#include "core/enum_names.hpp"

namespace reverify {

enum class SenderKind { pagerduty, alertmanager, slack, webhook, file };
template <>
struct EnumNames<SenderKind> {
  static constexpr EnumName<SenderKind> table[] = {
      {SenderKind::pagerduty, "pagerduty"}, {SenderKind::alertmanager, "alertmanager"},
      {SenderKind::slack, "slack"},         {SenderKind::webhook, "webhook"},
      {SenderKind::file, "file"},
  };
};

// Severity sent for each kind of event (PagerDuty enum: critical, error, warning, info; the
// Alertmanager `severity` label takes the same words).
struct SeverityMap {
  std::string failed = "error";   // failed:* (the model's inputs or numbers moved)
  std::string error = "warning";  // error:* (reverify or its infrastructure failed)
  std::string notice = "info";    // uncalibrated notices and pass notices
};

// The severity word for a verdict class: failed:* -> failed, error:* -> error, else notice.
const std::string& severity_of(const SeverityMap& map, VerdictClass cls);

struct SenderConfig {
  std::string name;
  SenderKind kind = SenderKind::webhook;
  // pagerduty: the Events API v2 enqueue URL (default https://events.pagerduty.com/v2/enqueue);
  // alertmanager: its base URL (…/api/v2/alerts is appended); webhook: the URL POSTed to.
  std::string url;
  std::string url_file;             // slack: the incoming-webhook URL is itself a secret
  std::string routing_key_file;     // pagerduty
  std::string token_file;           // webhook, alertmanager: optional bearer token
  std::string path;                 // file: JSON lines appended here
  std::string source = "reverify";  // pagerduty payload.source
  SeverityMap severity;
  std::chrono::seconds timeout{10};  // whole HTTP request
  // alertmanager: an open alert is re-sent this often and carries endsAt = send time + 3 x this,
  // so it stays firing between re-sends whatever the receiver's resolve_timeout is.
  std::chrono::seconds resend_interval{60};
};

struct RouteConfig {
  std::string owner;  // a manifest owner, or "*" for every owner without its own route
  std::vector<std::string> senders;
  bool notify_on_pass = false;  // also post a low-urgency notice to chat senders on every pass
};

// Capped exponential backoff per (page, sender) for transient failures (429, 5xx, network).
struct RetryPolicy {
  std::chrono::seconds initial{30};
  std::chrono::seconds max_backoff{3600};
  int max_attempts = 100;  // then the delivery is failed for good (about 4 days at the cap)
};

struct PagerConfig {
  std::map<std::string, SenderConfig> senders;  // by name
  std::vector<RouteConfig> routes;              // first route naming the owner wins
  RetryPolicy retry;
  // Base of the links to the HTML pages. Unset in the config: the daemon's own API address
  // (settings/), and public_url_is_default says so; "" only where that is not known either.
  std::string public_url;
  bool public_url_is_default = false;
  // Whose route takes the operator-level alerts (a registry source that moved as a whole,
  // pager/platform_alert.hpp): an owner a route names, or "*" (the default route). Unset in a
  // config whose routes have no "*", settings/ puts the first route's owner here.
  std::string operator_owner = "*";
};

// An owner with neither its own route nor a "*" route is a config error, reported when the
// daemon first sees the owner (at load / registry sync), never a silently dropped page.
Status check_owner_routed(const PagerConfig& config, const std::string& owner);

}  // namespace reverify
