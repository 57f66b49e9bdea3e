#pragma once
// Slack incoming webhook: POST the secret webhook URL (read from url_file) with Block Kit blocks
// and a plain `text` fallback for notifications. Slack answers 200 "ok"; 400 (invalid_payload)
// is never retried; 429 and 5xx are. Slack does not deduplicate: a resend after a crash between
// sending and recording can post twice (at least once); a post that timed out after it was sent
// (unconfirmed) is not sent again, so a slow Slack does not get one copy per attempt.

#include <string>

#include <nlohmann/json.hpp>

#include "pager/notifier.hpp"
#include "pager/pager_config.hpp"

namespace reverify {

inline constexpr std::size_t kSlackHeaderMax = 150;    // header block text
inline constexpr std::size_t kSlackSectionMax = 3000;  // section block text

nlohmann::json slack_message(const PageEvent& event);

class SlackNotifier final : public Notifier {
 public:
  SlackNotifier(SenderConfig config, std::string webhook_url);
  DeliveryResult deliver(const PageEvent& event, int attempt) override;
  // Slack posts every copy as a new message: an unconfirmed delivery is not sent again.
  ReceiverDedup dedup() const override { return ReceiverDedup::posts_copies; }

 private:
  SenderConfig config_;
  std::string webhook_url_;
};

}  // namespace reverify
