// Hashing through a file mapping: same digests as hashing the bytes, unaligned ranges, and a file
// that shrinks under its mapping reported as a value (the SIGBUS guard), not a crash.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/hashing.hpp"
#include "core/hashing_io.hpp"
#include "core/mapped_range.hpp"
#include "core/sha256.hpp"
#include "tests/core/hashing_test_support.hpp"

using reverify::test::TempDir;
using reverify::test::write_file;

namespace {

std::string pattern_bytes(std::size_t size) {
  std::string bytes(size, '\0');
  for (std::size_t i = 0; i < size; ++i)
    bytes[i] = static_cast<char>((i * 131 + i / 4096) & 0xff);
  return bytes;
}

// Reads every byte of the mapping, so a page past the file's end is touched.
bool touch_all(const reverify::MappedRange& mapping, std::uint64_t& sum) {
  return mapping.visit([&](const char* data, std::size_t size) {
    for (std::size_t i = 0; i < size; ++i)
      sum += static_cast<unsigned char>(data[i]);
  });
}

}  // namespace

TEST_CASE("large files hash the same through the mapping as their bytes do") {
  TempDir dir;
  const std::string bytes = pattern_bytes(3 * 1024 * 1024 + 123);
  write_file(dir.path / "big", bytes);
  CHECK(reverify::sha256_file(dir.path / "big").value() == reverify::sha256_hex(bytes));

  auto fd = reverify::open_readonly(dir.path / "big");
  REQUIRE(fd.ok());
  // A range that starts off a page boundary and is large enough to be mapped.
  const std::uint64_t offset = 4097;
  const std::uint64_t length = 2 * 1024 * 1024 + 5;
  std::uint64_t reported = 0;
  auto range = reverify::sha256_fd_range(fd->get(), offset, length, "big",
                                         [&](std::uint64_t n) { reported += n; });
  REQUIRE(range.ok());
  CHECK(range->sha256 == reverify::sha256_hex(std::string_view(bytes).substr(offset, length)));
  CHECK(range->bytes == length);
  CHECK(reported == length);

  auto past_end = reverify::sha256_fd_range(fd->get(), bytes.size() - 10, 2 * 1024 * 1024, "big");
  REQUIRE_FALSE(past_end.ok());
  CHECK(past_end.error().message ==
        "big: file ended after 3145851 bytes, expected at least 5242993");
}

TEST_CASE("a file that shrinks under its mapping is reported, and the guard still works after") {
  TempDir dir;
  const auto page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  write_file(dir.path / "shrinks", pattern_bytes(4 * page));
  const int fd = ::open((dir.path / "shrinks").c_str(), O_RDWR | O_CLOEXEC);
  REQUIRE(fd >= 0);
  auto mapping = reverify::MappedRange::map(fd, 0, 4 * page);
  REQUIRE(mapping.has_value());
  std::uint64_t sum = 0;
  CHECK(touch_all(*mapping, sum));

  REQUIRE(::ftruncate(fd, static_cast<off_t>(page)) == 0);
  CHECK_FALSE(touch_all(*mapping, sum));
  // A second fault is caught too: the jump out of the handler unblocked SIGBUS again.
  CHECK_FALSE(touch_all(*mapping, sum));

  // The first page is still there, and a mapping of it alone reads fine.
  auto first_page = reverify::MappedRange::map(fd, 0, page);
  REQUIRE(first_page.has_value());
  CHECK(touch_all(*first_page, sum));
  ::close(fd);
}

TEST_CASE("only regular files are hashed") {
  TempDir dir;
  REQUIRE(::mkfifo((dir.path / "fifo").c_str(), 0600) == 0);
  const int fd = ::open((dir.path / "fifo").c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  REQUIRE(fd >= 0);
  auto digest = reverify::sha256_fd_range(fd, 0, reverify::kToEndOfFile, "fifo");
  ::close(fd);
  REQUIRE_FALSE(digest.ok());
  CHECK(digest.error().message == "fifo: not a regular file");
}
