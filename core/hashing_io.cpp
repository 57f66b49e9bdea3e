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

Status read_exact(int fd, std::uint64_t offset, void* into, std::size_t size,
                  const std::string& what) {
  auto* bytes = static_cast<char*>(into);
  for (std::size_t done = 0; done < size;) {
    const ssize_t got = ::pread(fd, bytes + done, size - done, static_cast<off_t>(offset + done));
    if (got < 0 && errno == EINTR)
      continue;
    if (got < 0)
      return make_error(ErrorCode::io, what + ": read failed: " + std::strerror(errno));
    if (got == 0)
      return make_error(ErrorCode::io, what + ": the file shrank while it was being read");
    done += static_cast<std::size_t>(got);
  }
  return Status::success();
}

}  // namespace reverify
