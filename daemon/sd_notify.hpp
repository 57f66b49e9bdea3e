#pragma once
// The systemd notify protocol, spoken directly (no libsystemd): one datagram per message to the
// unix socket named by $NOTIFY_SOCKET ("@name" = abstract namespace). Without $NOTIFY_SOCKET
// (not started by systemd) every call is a no-op that succeeds.

#include <chrono>
#include <optional>
#include <string>

#include "core/result.hpp"

namespace reverify {

class SdNotifier {
 public:
  SdNotifier();  // reads $NOTIFY_SOCKET and $WATCHDOG_USEC
  explicit SdNotifier(std::string socket_path,
                      std::optional<std::chrono::microseconds> watchdog = {});

  bool enabled() const { return !socket_path_.empty(); }
  // Half of WatchdogSec (systemd's advice), when the unit has a watchdog.
  std::optional<std::chrono::microseconds> watchdog_interval() const;

  Status notify(const std::string& message);  // e.g. "READY=1\nSTATUS=serving"
  Status ready(const std::string& status) { return notify("READY=1\nSTATUS=" + status); }
  Status status(const std::string& status) { return notify("STATUS=" + status); }
  Status watchdog() { return notify("WATCHDOG=1"); }
  Status stopping() { return notify("STOPPING=1\nSTATUS=draining"); }
  Status reloading() { return notify("RELOADING=1"); }

 private:
  std::string socket_path_;
  std::optional<std::chrono::microseconds> watchdog_;
};

}  // namespace reverify
