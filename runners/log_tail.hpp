#pragma once
// Keeps the last cap bytes of a job's log. When earlier bytes were dropped, text() starts with a
// visible TRUNCATED marker saying how many, so nobody mistakes a tail for the whole log.

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

}  // namespace reverify
