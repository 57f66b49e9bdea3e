#include "runners/log_tail.hpp"

namespace reverify {

void LogTail::append(std::string_view chunk) {
  total_ += chunk.size();
  if (chunk.size() >= cap_) {
    buffer_.assign(chunk.substr(chunk.size() - cap_));
    return;
  }
  buffer_.append(chunk);
  // Trim in batches so appending stays amortised O(chunk).
  if (buffer_.size() > 2 * cap_)
    buffer_.erase(0, buffer_.size() - cap_);
}

std::string LogTail::text() const {
  const std::size_t kept = std::min(buffer_.size(), cap_);
  const std::uint64_t dropped = total_ - kept;
  std::string out;
  if (dropped > 0) {
    out = "[reverify] log TRUNCATED: the first " + std::to_string(dropped) +
          " bytes were dropped, the last " + std::to_string(kept) + " follow\n";
  }
  out.append(buffer_, buffer_.size() - kept, kept);
  return out;
}

std::string_view last_lines(std::string_view log, int lines) {
  std::size_t start = log.size();
  if (start > 0 && log[start - 1] == '\n')
    --start;
  for (; lines > 0; --lines) {
    const auto newline = start == 0 ? std::string_view::npos : log.rfind('\n', start - 1);
    if (newline == std::string_view::npos)
      return log;
    start = newline;
  }
  return log.substr(start + 1);
}

}  // namespace reverify
