#pragma once
// Internal building blocks of core/hashing.hpp: an incremental OpenSSL SHA-256 (EVP picks the
// SHA-NI code path where the CPU has it) and the hash of a byte range of an open file, got window
// by window through whichever path (a mapping, or pread() into a buffer) the shared PathChooser
// measured cheapest for how that window sits in the page cache (core/hashing_paths.hpp).
// Blocking: call off the event loop.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "core/hashing_paths.hpp"
#include "core/result.hpp"

struct evp_md_ctx_st;

namespace reverify {

class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;

  void update(const void* data, std::size_t size);
  void update(std::string_view bytes) { update(bytes.data(), bytes.size()); }
  std::string final_hex();  // lowercase hex; the object is spent afterwards

 private:
  evp_md_ctx_st* ctx_;
};

// Called after each chunk read with the number of bytes just hashed (progress reporting).
using BytesFn = std::function<void(std::uint64_t)>;

struct RangeDigest {
  std::string sha256;       // lowercase hex
  std::uint64_t bytes = 0;  // bytes actually hashed
};

// Hashes `length` bytes of `fd` from `offset`; length = UINT64_MAX hashes to end of file.
// `what` names the file in error messages. A file shorter than offset + length is an io error, and
// so is one that shrinks while it is hashed, whichever path reads it. `path` forces one path for
// every window (tests, benchmarks); by default PathChooser::shared() picks each window's.
Result<RangeDigest> sha256_fd_range(int fd, std::uint64_t offset, std::uint64_t length,
                                    const std::string& what, const BytesFn& on_bytes = {},
                                    std::optional<ReadPath> path = std::nullopt);

// Windows are cut at multiples of this file offset (a multiple of 2 MiB, so that a window holds
// whole 2 MiB folios); on_bytes is called once per window.
inline constexpr std::uint64_t kHashWindow = 8 * 1024 * 1024;

inline constexpr std::uint64_t kToEndOfFile = UINT64_MAX;

}  // namespace reverify
