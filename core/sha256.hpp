#pragma once
// Internal building blocks of core/hashing.hpp: an incremental OpenSSL SHA-256 (EVP picks the
// SHA-NI code path where the CPU has it) and the hash of a byte range of an open file, read with
// large sequential reads. Blocking: call off the event loop.

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

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
// `what` names the file in error messages. A file shorter than offset + length is an io error.
Result<RangeDigest> sha256_fd_range(int fd, std::uint64_t offset, std::uint64_t length,
                                    const std::string& what, const BytesFn& on_bytes = {});

inline constexpr std::uint64_t kToEndOfFile = UINT64_MAX;

}  // namespace reverify
