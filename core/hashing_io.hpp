#pragma once
// File descriptors for the hashing code: owned, closed once, opened read-only with errors as
// values.

#include <filesystem>
#include <utility>

#include "core/result.hpp"

namespace reverify {

class UniqueFd {
 public:
  explicit UniqueFd(int fd = -1) : fd_(fd) {}
  ~UniqueFd();
  UniqueFd(UniqueFd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept;
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;

  int get() const { return fd_; }

 private:
  int fd_;
};

// Opens for reading (following symlinks). ENOENT is not_found, anything else io; both name the
// path.
Result<UniqueFd> open_readonly(const std::filesystem::path& path);

}  // namespace reverify
