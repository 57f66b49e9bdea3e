#include "core/sha256.hpp"

#include <fcntl.h>
#include <openssl/evp.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
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

constexpr std::uint64_t kHugePage = 2 * 1024 * 1024;
// Where the mapping cannot be made, windows chosen for it are read with this path instead.
constexpr ReadPath kReadWhenUnmappable = ReadPath::read_256k;

Error shrank_error(const std::string& what, std::uint64_t expected_size) {
  return Error{ErrorCode::io, what + ": the file shrank while it was being hashed (expected " +
                                  std::to_string(expected_size) + " bytes)"};
}

// This thread's CPU time (user and system: the faults, the copies and the system calls count).
std::uint64_t thread_cpu_ns() {
  timespec now{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return static_cast<std::uint64_t>(now.tv_sec) * 1'000'000'000 +
         static_cast<std::uint64_t>(now.tv_nsec);
}

std::uint64_t thread_page_faults() {
  rusage usage{};
  getrusage(RUSAGE_THREAD, &usage);
  return static_cast<std::uint64_t>(usage.ru_minflt + usage.ru_majflt);
}

// One read buffer per thread, as large as the largest read path's, allocated once and touched
// at once, so that no measured window pays for faulting its pages in.
char* thread_read_buffer() {
  static const std::size_t largest = [] {
    std::size_t bytes = 0;
    for (std::size_t p = 0; p < kReadPaths; ++p)
      bytes = std::max(bytes, read_buffer_bytes(static_cast<ReadPath>(p)));
    return bytes;
  }();
  thread_local const auto buffer = [] {
    auto bytes = std::make_unique_for_overwrite<char[]>(largest);
    std::memset(bytes.get(), 0, largest);
    return bytes;
  }();
  return buffer.get();
}

// Hashes [at, end) of the file with pread() into `buffer`, `chunk` bytes at a time.
Status hash_by_reads(int fd, std::uint64_t at, std::uint64_t end, std::size_t chunk, char* buffer,
                     Sha256& hash, const std::string& what) {
  while (at < end) {
    const auto want = static_cast<std::size_t>(std::min<std::uint64_t>(chunk, end - at));
    const ssize_t got = ::pread(fd, buffer, want, static_cast<off_t>(at));
    if (got < 0) {
      if (errno == EINTR)
        continue;
      return make_error(ErrorCode::io, what + ": read failed: " + std::strerror(errno));
    }
    if (got == 0)
      return shrank_error(what, end);
    hash.update(buffer, static_cast<std::size_t>(got));
    at += static_cast<std::uint64_t>(got);
  }
  return Status::success();
}

// How the window [at, end) of the file sits in the page cache, `data` mapping file offset
// `offset`: touches the first byte of its first whole 2 MiB block and the byte 1 MiB further on.
// One fault maps both when the block is one 2 MiB folio; fault-around (64 KiB) needs two.
PageLayout probe_layout(const char* data, std::uint64_t offset, std::uint64_t at,
                        std::uint64_t end) {
  const std::uint64_t block = (at + kHugePage - 1) / kHugePage * kHugePage;
  if (data == nullptr || block + kHugePage > end)
    return PageLayout::small_pages;
  const volatile char* first = data + (block - offset);
  const std::uint64_t before = thread_page_faults();
  (void)first[0];
  (void)first[kHugePage / 2];
  return thread_page_faults() - before <= 1 ? PageLayout::huge_pages : PageLayout::small_pages;
}

// Hashes [offset, offset + length) of a file window by window, each through the path the shared
// PathChooser picks for its page layout (or the forced one), and tells the chooser what it cost.
class WindowHasher {
 public:
  WindowHasher(int fd, std::uint64_t offset, std::uint64_t length, const std::string& what,
               const BytesFn& on_bytes, std::optional<ReadPath> forced)
      : fd_(fd),
        offset_(offset),
        end_(offset + length),
        what_(what),
        on_bytes_(on_bytes),
        forced_(forced),
        buffer_(thread_read_buffer()) {}

  // The whole range as one window of `layout` (a short range: no probe, no cut).
  Status hash_whole(PageLayout layout) {
    const std::uint64_t start = thread_cpu_ns();
    const ReadPath path = choose(layout);
    const auto mapping =
        path == ReadPath::map ? MappedRange::map(fd_, offset_, end_ - offset_) : std::nullopt;
    if (mapping) {
      if (!mapping->visit([&](const char* data, std::size_t size) { hash_.update(data, size); }))
        return shrank_error(what_, end_);
    } else if (Status read = read_window(offset_, end_, path); !read) {
      return read;
    }
    finish_window(layout, mapping ? path : readable(path), end_ - offset_, start);
    return Status::success();
  }

  // Windows cut at multiples of kHashWindow, each laid out as probe_layout finds it.
  Status hash_windows() {
    auto mapping = MappedRange::map(fd_, offset_, static_cast<std::size_t>(end_ - offset_));
    Status status = Status::success();
    auto windows = [&](const char* data) {
      for (std::uint64_t at = offset_; at < end_;) {
        const std::uint64_t end = std::min(end_, (at / kHashWindow + 1) * kHashWindow);
        const std::uint64_t start = thread_cpu_ns();
        const PageLayout layout = probe_layout(data, offset_, at, end);
        ReadPath path = choose(layout);
        if (path == ReadPath::map && data != nullptr) {
          hash_.update(data + (at - offset_), static_cast<std::size_t>(end - at));
          mapping->release(data + (at - offset_), data + (end - offset_));
        } else {
          path = readable(path);
          status = read_window(at, end, path);
          if (!status)
            return;
        }
        finish_window(layout, path, end - at, start);
        at = end;
      }
    };
    if (!mapping) {
      windows(nullptr);
      return status;
    }
    if (!mapping->visit([&](const char* data, std::size_t) { windows(data); }))
      return shrank_error(what_, end_);
    return status;
  }

  std::string digest() { return hash_.final_hex(); }

 private:
  ReadPath choose(PageLayout layout) const {
    return forced_ ? *forced_ : PathChooser::shared().choose(layout);
  }
  static ReadPath readable(ReadPath path) {
    return path == ReadPath::map ? kReadWhenUnmappable : path;
  }
  Status read_window(std::uint64_t at, std::uint64_t end, ReadPath path) {
    return hash_by_reads(fd_, at, end, read_buffer_bytes(readable(path)), buffer_, hash_, what_);
  }
  void finish_window(PageLayout layout, ReadPath path, std::uint64_t bytes, std::uint64_t start) {
    if (!forced_)
      PathChooser::shared().record(layout, path, bytes, thread_cpu_ns() - start);
    if (on_bytes_)
      on_bytes_(bytes);
  }

  int fd_;
  std::uint64_t offset_, end_;
  const std::string& what_;
  const BytesFn& on_bytes_;
  std::optional<ReadPath> forced_;
  char* buffer_;
  Sha256 hash_;
};

}  // namespace

Result<RangeDigest> sha256_fd_range(int fd, std::uint64_t offset, std::uint64_t length,
                                    const std::string& what, const BytesFn& on_bytes,
                                    std::optional<ReadPath> path) {
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
  WindowHasher hasher(fd, offset, length, what, on_bytes, path);
  if (length > 0) {
    // The kernel doubles its read-ahead window for sequential reads; advisory, errors are moot.
    (void)posix_fadvise(fd, static_cast<off_t>(offset), static_cast<off_t>(length),
                        POSIX_FADV_SEQUENTIAL);
    Status status =
        length < kShortRange ? hasher.hash_whole(PageLayout::short_range) : hasher.hash_windows();
    if (!status)
      return status.error();
  }
  return RangeDigest{hasher.digest(), length};
}

Result<std::string> sha256_file(const std::filesystem::path& path,
                                std::optional<ReadPath> read_path) {
  auto fd = open_readonly(path);
  if (!fd)
    return fd.error();
  auto digest = sha256_fd_range(fd->get(), 0, kToEndOfFile, path.string(), {}, read_path);
  if (!digest)
    return digest.error();
  return std::move(digest->sha256);
}

}  // namespace reverify
