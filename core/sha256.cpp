#include "core/sha256.hpp"

#include <fcntl.h>
#include <openssl/evp.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <memory>
#include <new>
#include <stdexcept>

#include "core/hashing.hpp"
#include "core/hashing_io.hpp"

namespace reverify {
namespace {

// Measured here (CPU time per GiB, file in the page cache): 64 KiB reads cost ~1.0 s/GiB of
// read + hash, 128 KiB to 4 MiB ~1.45 s/GiB, mmap ~1.0 s/GiB, hashing alone 0.7 s/GiB. The copy
// into a small, cache-resident buffer is cheapest; the kernel still reads ahead in large chunks.
constexpr std::size_t kReadBuffer = 64 * 1024;

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

Result<RangeDigest> sha256_fd_range(int fd, std::uint64_t offset, std::uint64_t length,
                                    const std::string& what, const BytesFn& on_bytes) {
  const bool to_end = length == kToEndOfFile;
  // The kernel doubles its read-ahead window for sequential access; advisory, so errors are moot.
  (void)posix_fadvise(fd, static_cast<off_t>(offset), to_end ? 0 : static_cast<off_t>(length),
                      POSIX_FADV_SEQUENTIAL);
  auto buffer = std::make_unique_for_overwrite<char[]>(kReadBuffer);
  Sha256 hash;
  std::uint64_t done = 0;
  while (to_end || done < length) {
    const std::size_t want =
        to_end ? kReadBuffer
               : static_cast<std::size_t>(std::min<std::uint64_t>(kReadBuffer, length - done));
    const ssize_t got = ::pread(fd, buffer.get(), want, static_cast<off_t>(offset + done));
    if (got < 0) {
      if (errno == EINTR)
        continue;
      return make_error(ErrorCode::io, what + ": read failed: " + std::strerror(errno));
    }
    if (got == 0) {
      if (to_end)
        break;
      return make_error(ErrorCode::io,
                        what + ": file ended after " + std::to_string(offset + done) +
                            " bytes, expected at least " + std::to_string(offset + length));
    }
    hash.update(buffer.get(), static_cast<std::size_t>(got));
    done += static_cast<std::uint64_t>(got);
    if (on_bytes)
      on_bytes(static_cast<std::uint64_t>(got));
  }
  return RangeDigest{hash.final_hex(), done};
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
