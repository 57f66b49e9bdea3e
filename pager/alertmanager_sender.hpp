#pragma once
// Prometheus Alertmanager API v2: POST <url>/api/v2/alerts with a JSON array of alerts labelled
// alertname=ReverifyVerificationFailed, model, version, owner, class, severity. A trigger carries
// endsAt = now + 3 x resend_interval and is re-sent every resend_interval (the dispatcher asks
// resend_interval()), so it stays firing whatever the receiver's resolve_timeout is, and expires
// on its own if reverify disappears. Before posting, the open alerts of the same model version
// are read back (GET /api/v2/alerts with filters): a resolve ends all of them (endsAt = now, with
// their exact labels, so it works after a restart and after a class change), and a trigger ends
// the ones of another class it replaces.

#include <chrono>
#include <functional>
#include <string>

#include <nlohmann/json.hpp>

#include "pager/notifier.hpp"
#include "pager/pager_config.hpp"

namespace reverify {

inline constexpr const char* kAlertName = "ReverifyVerificationFailed";

using WallClockFn = std::function<std::chrono::system_clock::time_point()>;

// One postable alert for a trigger (firing until `ends_at`).
nlohmann::json alertmanager_alert(const PageEvent& event, const SenderConfig& config,
                                  std::chrono::system_clock::time_point ends_at);

class AlertmanagerNotifier final : public Notifier {
 public:
  AlertmanagerNotifier(
      SenderConfig config, std::string token,
      WallClockFn clock = [] { return std::chrono::system_clock::now(); });
  DeliveryResult deliver(const PageEvent& event, int attempt) override;
  std::optional<std::chrono::seconds> resend_interval() const override;

 private:
  SenderConfig config_;
  std::string token_;
  WallClockFn clock_;
};

}  // namespace reverify
