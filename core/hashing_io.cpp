#include "core/hashing_io.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace reverify {

UniqueFd::~UniqueFd() {
  if (fd_ >= 0)
    ::close(fd_);
}

UniqueFd& UniqueFd::operator=(UniqueFd&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0)
      ::close(fd_);
    fd_ = std::exchange(other.fd_, -1);
  }
  return *this;
}

Result<UniqueFd> open_readonly(const std::filesystem::path& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    const auto code = errno == ENOENT ? ErrorCode::not_found : ErrorCode::io;
    return make_error(code, path.string() + ": cannot open: " + std::strerror(errno));
  }
  return UniqueFd(fd);
}

}  // namespace reverify
