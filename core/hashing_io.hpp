#pragma once
// File descriptors for the hashing code and the prediction readers: owned, closed once, opened
// read-only, read exactly, with errors as values.

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
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

// pread() until `size` bytes from `offset` are in `into`: an io error naming `what` when a read
// fails or the file ends first ("the file shrank while it was being read").
Status read_exact(int fd, std::uint64_t offset, void* into, std::size_t size,
                  const std::string& what);

}  // namespace reverify
