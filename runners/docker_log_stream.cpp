#include "runners/docker_log_stream.hpp"

namespace reverify {

void DockerLogStream::feed(std::string_view chunk) {
  buffer_.append(chunk);
  std::size_t pos = 0;
  while (buffer_.size() - pos >= 8) {
    const auto* header = reinterpret_cast<const unsigned char*>(buffer_.data() + pos);
    const std::uint32_t length = (std::uint32_t{header[4]} << 24) |
                                 (std::uint32_t{header[5]} << 16) |
                                 (std::uint32_t{header[6]} << 8) | std::uint32_t{header[7]};
    if (buffer_.size() - pos - 8 < length)
      break;
    sink_(header[0], std::string_view(buffer_).substr(pos + 8, length));
    pos += 8 + length;
  }
  buffer_.erase(0, pos);
}

}  // namespace reverify
