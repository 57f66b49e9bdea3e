#pragma once
// Keeps the last cap bytes of a job's log. When earlier bytes were dropped, text() starts with a
// visible TRUNCATED marker saying how many, so nobody mistakes a tail for the whole log. Also the
// last few lines of a log, what a person reads first in a page or a verdict.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace reverify {

class LogTail {
 public:
  explicit LogTail(std::size_t cap_bytes) : cap_(cap_bytes) {}
  void append(std::string_view chunk);
  // Counts `bytes` of earlier output that are not available to keep (cut elsewhere).
  void skip(std::uint64_t bytes) { total_ += bytes; }
  std::string text() const;
  std::uint64_t total_bytes() const { return total_; }

 private:
  std::size_t cap_;
  std::string buffer_;  // at most 2 * cap_ bytes; trimmed to the last cap_ in text()
  std::uint64_t total_ = 0;
};

// The last `lines` lines of `log` (a final newline does not count as a line of its own); all of
// it when it has fewer.
std::string_view last_lines(std::string_view log, int lines);

}  // namespace reverify
