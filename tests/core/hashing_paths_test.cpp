// The read paths of the hashers (core/hashing_paths.hpp, core/sha256.hpp): every path, and the
// measured choice among them, gives the digest of the bytes, for empty files, sizes around the
// buffers', the short-range line's and the windows' boundaries, ranges off a page boundary, and
// a file that shrinks while it is hashed; and the chooser takes the cheapest path it measured.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <unistd.h>

#include <optional>
#include <vector>

#include "core/hashing.hpp"
#include "core/hashing_io.hpp"
#include "core/hashing_paths.hpp"
#include "core/sha256.hpp"
#include "tests/core/hashing_test_support.hpp"

using reverify::PageLayout;
using reverify::PathChooser;
using reverify::ReadPath;
using reverify::test::TempDir;
using reverify::test::write_file;

namespace {

constexpr std::size_t KiB = 1024, MiB = 1024 * KiB;

std::string pattern_bytes(std::size_t size) {
  std::string bytes(size, '\0');
  for (std::size_t i = 0; i < size; ++i)
    bytes[i] = static_cast<char>((i * 131 + i / 4096) & 0xff);
  return bytes;
}

// Every path forced, then the measured choice (nullopt).
std::vector<std::optional<ReadPath>> every_path() {
  std::vector<std::optional<ReadPath>> paths;
  for (std::size_t p = 0; p < reverify::kReadPaths; ++p)
    paths.emplace_back(static_cast<ReadPath>(p));
  paths.emplace_back(std::nullopt);
  return paths;
}

std::string path_name(const std::optional<ReadPath>& path) {
  return path ? reverify::to_string(*path) : "chosen";
}

}  // namespace

TEST_CASE("every read path gives the digest of the bytes, around every boundary") {
  TempDir dir;
  const std::string bytes = pattern_bytes(2 * reverify::kHashWindow + 3 * MiB + 5);
  write_file(dir.path / "data", bytes);
  auto fd = reverify::open_readonly(dir.path / "data");
  REQUIRE(fd.ok());
  const std::uint64_t short_line = reverify::kShortRange, window = reverify::kHashWindow;
  // Empty; one byte; around a page, each read buffer, the short-range line, a 2 MiB folio and a
  // window; more than two windows.
  std::vector<std::uint64_t> lengths{0, 1, 4095, 4096, 4097};
  for (const std::uint64_t edge :
       {64 * KiB, short_line, MiB, 2 * MiB, window, window + 2 * MiB, 2 * window}) {
    lengths.insert(lengths.end(), {edge - 1, edge, edge + 1});
  }
  lengths.push_back(bytes.size());
  for (const std::uint64_t offset : {std::uint64_t{0}, std::uint64_t{4097}, 2 * MiB - 3}) {
    for (const std::uint64_t length : lengths) {
      if (offset + length > bytes.size())
        continue;
      const std::string expected =
          reverify::sha256_hex(std::string_view(bytes).substr(offset, length));
      for (const auto& path : every_path()) {
        CAPTURE(offset);
        CAPTURE(length);
        CAPTURE(path_name(path));
        std::uint64_t reported = 0;
        auto digest = reverify::sha256_fd_range(
            fd->get(), offset, length, "data", [&](std::uint64_t n) { reported += n; }, path);
        REQUIRE(digest.ok());
        CHECK(digest->sha256 == expected);
        CHECK(digest->bytes == length);
        CHECK(reported == length);
      }
    }
  }
}

TEST_CASE("an empty file hashes to the empty digest on every path") {
  TempDir dir;
  write_file(dir.path / "empty", "");
  for (const auto& path : every_path()) {
    CAPTURE(path_name(path));
    CHECK(reverify::sha256_file(dir.path / "empty", path).value() == reverify::sha256_hex(""));
  }
}

TEST_CASE("a file that shrinks while it is hashed is the same error on every path") {
  TempDir dir;
  const std::string bytes = pattern_bytes(3 * reverify::kHashWindow);
  for (const auto& path : every_path()) {
    CAPTURE(path_name(path));
    write_file(dir.path / "shrinks", bytes);
    const int fd = ::open((dir.path / "shrinks").c_str(), O_RDWR | O_CLOEXEC);
    REQUIRE(fd >= 0);
    // After the first window, the file loses all but its first MiB.
    bool truncated = false;
    auto digest = reverify::sha256_fd_range(
        fd, 0, reverify::kToEndOfFile, "shrinks",
        [&](std::uint64_t) {
          if (!truncated)
            REQUIRE(::ftruncate(fd, static_cast<off_t>(MiB)) == 0);
          truncated = true;
        },
        path);
    ::close(fd);
    REQUIRE_FALSE(digest.ok());
    CHECK(digest.error().message ==
          "shrinks: the file shrank while it was being hashed (expected " +
              std::to_string(bytes.size()) + " bytes)");
  }
}

TEST_CASE("a folder and a safetensors file hash the same on every path") {
  TempDir dir;
  for (std::size_t size : {std::size_t{0}, 70 * KiB, 3 * MiB + 1, reverify::kHashWindow + 7})
    write_file(dir.path / "folder" / ("f" + std::to_string(size)), pattern_bytes(size));
  std::optional<std::string> root;
  for (const auto& path : every_path()) {
    CAPTURE(path_name(path));
    reverify::HashOptions options;
    options.read_path = path;
    auto manifest = reverify::hash_directory(dir.path / "folder", options);
    REQUIRE(manifest.ok());
    if (!root)
      root = manifest->root;
    CHECK(manifest->root == *root);
  }
}

TEST_CASE("the chooser tries every path, then takes the cheapest and now and then another") {
  PathChooser chooser;
  const auto layout = PageLayout::small_pages;
  std::vector<unsigned> tried(reverify::kReadPaths);
  for (unsigned i = 0; i < PathChooser::kFirstTries * reverify::kReadPaths; ++i) {
    const ReadPath path = chooser.choose(layout);
    ++tried[static_cast<std::size_t>(path)];
    // read_256k costs 1 ns a byte, every other path 2.
    chooser.record(layout, path, MiB, path == ReadPath::read_256k ? MiB : 2 * MiB);
  }
  for (unsigned count : tried)
    CHECK(count == PathChooser::kFirstTries);
  CHECK(chooser.estimate(layout, ReadPath::read_256k).ns_per_byte == doctest::Approx(1.0));
  CHECK(chooser.estimate(layout, ReadPath::map).ns_per_byte == doctest::Approx(2.0));

  std::vector<unsigned> chosen(reverify::kReadPaths);
  const unsigned rounds = 3 * (reverify::kReadPaths - 1) * PathChooser::kExploreEvery;
  for (unsigned i = 0; i < rounds; ++i)
    ++chosen[static_cast<std::size_t>(chooser.choose(layout))];
  // One choice in kExploreEvery goes to another path, each of them in turn.
  const unsigned explored = rounds / PathChooser::kExploreEvery;
  CHECK(chosen[static_cast<std::size_t>(ReadPath::read_256k)] == rounds - explored);
  for (std::size_t p = 0; p < reverify::kReadPaths; ++p)
    if (static_cast<ReadPath>(p) != ReadPath::read_256k)
      CHECK(chosen[p] == explored / (reverify::kReadPaths - 1));

  // Newer windows weigh more: once map turns cheap, it is chosen.
  for (int i = 0; i < 20; ++i)
    chooser.record(layout, ReadPath::map, MiB, MiB / 4);
  CHECK(chooser.choose(layout) == ReadPath::map);
  // Each layout learns on its own.
  CHECK(chooser.estimate(PageLayout::huge_pages, ReadPath::map).windows == 0);
}

TEST_CASE("read paths and page layouts have names") {
  for (std::size_t p = 0; p < reverify::kReadPaths; ++p) {
    const auto path = static_cast<ReadPath>(p);
    CHECK(reverify::enum_from_string<ReadPath>(reverify::to_string(path)) == path);
  }
  CHECK_FALSE(reverify::enum_from_string<ReadPath>("auto").has_value());
  CHECK(reverify::read_buffer_bytes(ReadPath::map) == 0);
  CHECK(reverify::read_buffer_bytes(ReadPath::read_64k) == 64 * KiB);
  CHECK(std::string(reverify::to_string(PageLayout::huge_pages)) == "huge_pages");
}
