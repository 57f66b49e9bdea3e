#include "core/sha256.hpp"

#include <fcntl.h>
#include <openssl/evp.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <memory>
#include <new>
#include <optional>
#include <stdexcept>

#include "core/hashing.hpp"
#include "core/hashing_io.hpp"
#include "core/mapped_range.hpp"

namespace reverify {
namespace {

// Measured here (one core, 1 GiB in the page cache, hashing alone 0.73 s): with the 2 MiB folios
// a read from disk leaves in the page cache, a mapping hashes it in 0.75 s and 64 KiB reads in
// 0.87-0.90 s (the copy); with the 4 KiB pages a fresh write leaves, both take ~1.0 s (the kernel's
// work per page). So files are mapped, except the smallest: for a few pages a mapping's set-up
// costs about what the copy does. Where the line lies made no measurable difference on the
// benchmark's corpus (16 KiB, 64 KiB and 1 MiB all 2.2-2.3 GB/s). Reads larger than 64 KiB
// were slower here (1.3-1.5 s/GiB).
constexpr std::size_t kReadBuffer = 64 * 1024;
constexpr std::uint64_t kMapAtLeast = 16 * 1024;
// How much of a mapping is hashed between two progress reports.
constexpr std::size_t kProgressStep = 8 * 1024 * 1024;

std::string to_hex(const unsigned char* digest, unsigned size) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out(size * 2, '\0');
  for (unsigned i = 0; i < size; ++i) {
    out[2 * i] = kHex[digest[i] >> 4];
    out[2 * i + 1] = kHex[digest[i] & 0xf];
  }
  return out;
}

}  // namespace

Sha256::Sha256() : ctx_(EVP_MD_CTX_new()) {
  if (ctx_ == nullptr || EVP_DigestInit_ex(ctx_, EVP_sha256(), nullptr) != 1) {
    EVP_MD_CTX_free(ctx_);
    throw std::bad_alloc();  // OpenSSL only fails here when out of memory
  }
}

Sha256::~Sha256() {
  EVP_MD_CTX_free(ctx_);
}

void Sha256::update(const void* data, std::size_t size) {
  if (EVP_DigestUpdate(ctx_, data, size) != 1)
    throw std::runtime_error("EVP_DigestUpdate failed");
}

std::string Sha256::final_hex() {
  std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
  unsigned size = 0;
  if (EVP_DigestFinal_ex(ctx_, digest.data(), &size) != 1) {
    throw std::runtime_error("EVP_DigestFinal_ex failed");
  }
  return to_hex(digest.data(), size);
}

std::string sha256_hex(std::string_view bytes) {
  Sha256 hash;
  hash.update(bytes);
  return hash.final_hex();
}

namespace {

Error shrank_error(const std::string& what, std::uint64_t expected_size) {
  return Error{ErrorCode::io, what + ": the file shrank while it was being hashed (expected " +
                                  std::to_string(expected_size) + " bytes)"};
}

// Hashes the range through a mapping; nullopt when the file cannot be mapped.
std::optional<Result<RangeDigest>> sha256_mapped(int fd, std::uint64_t offset, std::uint64_t length,
                                                 const std::string& what, const BytesFn& on_bytes) {
  auto mapping = MappedRange::map(fd, offset, static_cast<std::size_t>(length));
  if (!mapping)
    return std::nullopt;
  Sha256 hash;
  const bool complete = mapping->visit([&](const char* data, std::size_t size) {
    for (std::size_t done = 0; done < size;) {
      const std::size_t step = std::min(kProgressStep, size - done);
      hash.update(data + done, step);
      done += step;
      if (on_bytes)
        on_bytes(step);
    }
  });
  if (!complete)
    return shrank_error(what, offset + length);
  return RangeDigest{hash.final_hex(), length};
}

Result<RangeDigest> sha256_read(int fd, std::uint64_t offset, std::uint64_t length,
                                const std::string& what, const BytesFn& on_bytes) {
  auto buffer = std::make_unique_for_overwrite<char[]>(kReadBuffer);
  Sha256 hash;
  std::uint64_t done = 0;
  while (done < length) {
    const auto want = static_cast<std::size_t>(std::min<std::uint64_t>(kReadBuffer, length - done));
    const ssize_t got = ::pread(fd, buffer.get(), want, static_cast<off_t>(offset + done));
    if (got < 0) {
      if (errno == EINTR)
        continue;
      return make_error(ErrorCode::io, what + ": read failed: " + std::strerror(errno));
    }
    if (got == 0)
      return shrank_error(what, offset + length);
    hash.update(buffer.get(), static_cast<std::size_t>(got));
    done += static_cast<std::uint64_t>(got);
    if (on_bytes)
      on_bytes(static_cast<std::uint64_t>(got));
  }
  return RangeDigest{hash.final_hex(), done};
}

}  // namespace

Result<RangeDigest> sha256_fd_range(int fd, std::uint64_t offset, std::uint64_t length,
                                    const std::string& what, const BytesFn& on_bytes) {
  struct stat info {};
  if (::fstat(fd, &info) != 0)
    return make_error(ErrorCode::io, what + ": cannot stat: " + std::strerror(errno));
  if (!S_ISREG(info.st_mode))
    return make_error(ErrorCode::io, what + ": not a regular file");
  const auto size = static_cast<std::uint64_t>(info.st_size);
  if (length == kToEndOfFile)
    length = size > offset ? size - offset : 0;
  if (offset > size || length > size - offset)
    return make_error(ErrorCode::io, what + ": file ended after " + std::to_string(size) +
                                         " bytes, expected at least " +
                                         std::to_string(offset + length));
  if (length >= kMapAtLeast) {
    if (auto mapped = sha256_mapped(fd, offset, length, what, on_bytes))
      return std::move(*mapped);
  }
  // The kernel doubles its read-ahead window for sequential access; advisory, so errors are moot.
  (void)posix_fadvise(fd, static_cast<off_t>(offset), static_cast<off_t>(length),
                      POSIX_FADV_SEQUENTIAL);
  return sha256_read(fd, offset, length, what, on_bytes);
}

Result<std::string> sha256_file(const std::filesystem::path& path) {
  auto fd = open_readonly(path);
  if (!fd)
    return fd.error();
  auto digest = sha256_fd_range(fd->get(), 0, kToEndOfFile, path.string());
  if (!digest)
    return digest.error();
  return std::move(digest->sha256);
}

}  // namespace reverify
