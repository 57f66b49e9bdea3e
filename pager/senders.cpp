#include "pager/senders.hpp"

#include "core/secret_file.hpp"
#include "pager/alertmanager_sender.hpp"
#include "pager/file_sender.hpp"
#include "pager/pagerduty_sender.hpp"
#include "pager/sender_http.hpp"
#include "pager/slack_sender.hpp"
#include "pager/webhook_sender.hpp"

namespace reverify {
namespace {

// An optional secret file: "" when the key is not set.
Result<std::string> optional_secret(const std::string& path, const std::string& yaml_key) {
  if (path.empty())
    return std::string();
  return read_secret_file(path, yaml_key, SecretForm::opaque);
}

}  // namespace

Result<std::shared_ptr<Notifier>> make_notifier(const SenderConfig& config) {
  const std::string key = "pager.senders." + config.name + ".";
  switch (config.kind) {
    case SenderKind::pagerduty: {
      auto routing_key =
          read_secret_file(config.routing_key_file, key + "routing_key_file", SecretForm::opaque);
      if (!routing_key)
        return routing_key.error();
      return std::shared_ptr<Notifier>(std::make_shared<PagerDutyNotifier>(config, *routing_key));
    }
    case SenderKind::alertmanager: {
      auto token = optional_secret(config.token_file, key + "token_file");
      if (!token)
        return token.error();
      return std::shared_ptr<Notifier>(std::make_shared<AlertmanagerNotifier>(config, *token));
    }
    case SenderKind::slack: {
      auto url = read_secret_file(config.url_file, key + "url_file", SecretForm::opaque);
      if (!url)
        return url.error();
      if (url->rfind("https://", 0) != 0 && url->rfind("http://", 0) != 0) {
        return make_error(ErrorCode::invalid_argument, key + "url_file: \"" + config.url_file +
                                                           "\" does not hold an http(s) URL");
      }
      return std::shared_ptr<Notifier>(std::make_shared<SlackNotifier>(config, *url));
    }
    case SenderKind::webhook: {
      auto token = optional_secret(config.token_file, key + "token_file");
      if (!token)
        return token.error();
      return std::shared_ptr<Notifier>(std::make_shared<WebhookNotifier>(config, *token));
    }
    case SenderKind::file:
      return std::shared_ptr<Notifier>(std::make_shared<FileNotifier>(config));
  }
  return make_error(ErrorCode::invalid_argument, key + "kind: unknown sender kind");
}

Result<std::map<std::string, std::shared_ptr<Notifier>>> make_notifiers(const PagerConfig& config) {
  std::map<std::string, std::shared_ptr<Notifier>> notifiers;
  for (const auto& [name, sender] : config.senders) {
    auto notifier = make_notifier(sender);
    if (!notifier)
      return notifier.error();
    notifiers.emplace(name, std::move(*notifier));
  }
  return notifiers;
}

}  // namespace reverify
