#include "daemon/sd_notify.hpp"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace reverify {

SdNotifier::SdNotifier() {
  if (const char* path = std::getenv("NOTIFY_SOCKET"))
    socket_path_ = path;
  if (const char* usec = std::getenv("WATCHDOG_USEC")) {
    char* end = nullptr;
    long long value = std::strtoll(usec, &end, 10);
    if (end && *end == '\0' && value > 0)
      watchdog_ = std::chrono::microseconds(value);
  }
}

SdNotifier::SdNotifier(std::string socket_path, std::optional<std::chrono::microseconds> watchdog)
    : socket_path_(std::move(socket_path)), watchdog_(watchdog) {}

std::optional<std::chrono::microseconds> SdNotifier::watchdog_interval() const {
  if (!watchdog_)
    return std::nullopt;
  return *watchdog_ / 2;
}

Status SdNotifier::notify(const std::string& message) {
  if (socket_path_.empty())
    return Status::success();
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  if (socket_path_.size() >= sizeof(address.sun_path)) {
    return make_error(ErrorCode::invalid_argument, "NOTIFY_SOCKET path too long");
  }
  std::memcpy(address.sun_path, socket_path_.data(), socket_path_.size());
  socklen_t length = socklen_t(offsetof(sockaddr_un, sun_path) + socket_path_.size());
  if (address.sun_path[0] == '@')
    address.sun_path[0] = '\0';  // abstract socket
  int fd = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0)
    return make_error(ErrorCode::io, std::string("sd_notify socket: ") + std::strerror(errno));
  ssize_t sent = ::sendto(fd, message.data(), message.size(), MSG_NOSIGNAL,
                          reinterpret_cast<const sockaddr*>(&address), length);
  int saved = errno;
  ::close(fd);
  if (sent < 0) {
    return make_error(ErrorCode::io, "sd_notify to " + socket_path_ + ": " + std::strerror(saved));
  }
  return Status::success();
}

}  // namespace reverify
