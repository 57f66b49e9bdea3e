// The file manifest of a folder: format, order, symlink and special-file rules, parse and diff.
#include <doctest/doctest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "core/hashing.hpp"
#include "tests/core/hashing_test_support.hpp"

namespace fs = std::filesystem;
using reverify::test::TempDir;
using reverify::test::write_file;

namespace {
const std::string kEmptySha = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
const std::string kAbcSha = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";

std::string error_of(const fs::path& dir) {
  auto manifest = reverify::hash_directory(dir);
  REQUIRE_FALSE(manifest.ok());
  return manifest.error().message;
}
}  // namespace

TEST_CASE("sha256 of bytes and files matches the FIPS 180-2 vectors") {
  CHECK(reverify::sha256_hex("") == kEmptySha);
  CHECK(reverify::sha256_hex("abc") == kAbcSha);
  TempDir dir;
  write_file(dir.path / "abc", "abc");
  CHECK(reverify::sha256_file(dir.path / "abc").value() == kAbcSha);
  auto missing = reverify::sha256_file(dir.path / "nope");
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.error().code == reverify::ErrorCode::not_found);
}

TEST_CASE("file manifest lines are sorted bytewise and the root hashes exactly those lines") {
  TempDir dir;
  write_file(dir.path / "b.txt", "abc");
  write_file(dir.path / "a" / "x", "");
  write_file(dir.path / "a-b", "abc");       // '-' (0x2d) sorts before '/' (0x2f)
  write_file(dir.path / "B", "");            // uppercase sorts before lowercase
  write_file(dir.path / "\xc3\xa9", "abc");  // UTF-8 bytes sort after ASCII
  write_file(dir.path / "a" / "y z", "abc");
  fs::create_directories(dir.path / "empty" / "nested");

  auto manifest = reverify::hash_directory(dir.path);
  REQUIRE(manifest.ok());
  const std::string expected = kEmptySha + "  0  B\n" + kAbcSha + "  3  a-b\n" + kEmptySha +
                               "  0  a/x\n" + kAbcSha + "  3  a/y z\n" + kAbcSha + "  3  b.txt\n" +
                               kAbcSha + "  3  \xc3\xa9\n";
  CHECK(manifest->text() == expected);
  CHECK(manifest->root == reverify::sha256_hex(expected));
  CHECK(manifest->total_bytes == 12);
  CHECK(manifest->files.size() == 6);
}

TEST_CASE("an empty folder has an empty manifest") {
  TempDir dir;
  auto manifest = reverify::hash_directory(dir.path);
  REQUIRE(manifest.ok());
  CHECK(manifest->files.empty());
  CHECK(manifest->root == kEmptySha);
}

TEST_CASE("files larger than one read buffer hash whole, on any thread count, with progress") {
  TempDir dir;
  std::string big;
  for (std::uint64_t i = 0; big.size() < 3 * 1024 * 1024 + 7; ++i)
    big += std::to_string(i * 7919) + ",";
  write_file(dir.path / "big.bin", big);
  for (int i = 0; i < 20; ++i)
    write_file(dir.path / "small" / std::to_string(i), std::string(i, 'x'));

  reverify::HashProgress last;
  std::uint64_t calls = 0;
  reverify::HashOptions options;
  options.threads = 4;
  options.progress = [&](const reverify::HashProgress& p) {
    CHECK(p.bytes_done >= last.bytes_done);
    CHECK(p.files_done >= last.files_done);
    last = p;
    ++calls;
  };
  auto parallel = reverify::hash_directory(dir.path, options);
  auto single = reverify::hash_directory(dir.path, reverify::HashOptions{1, {}, {}});
  REQUIRE(parallel.ok());
  REQUIRE(single.ok());
  CHECK(parallel->root == single->root);
  CHECK(parallel->text() == single->text());
  CHECK(parallel->files.front().sha256 == reverify::sha256_hex(big));
  CHECK(parallel->files.front().size == big.size());
  CHECK(last.files_done == 21);
  CHECK(last.files_total == 21);
  CHECK(last.bytes_done == parallel->total_bytes);
  CHECK(last.bytes_total == parallel->total_bytes);
  CHECK(calls > 21);
}

TEST_CASE("a symlink to a file inside the folder is hashed under the link's path") {
  TempDir dir;
  write_file(dir.path / "data" / "real", "abc");
  fs::create_symlink("data/real", dir.path / "alias");
  fs::create_symlink(dir.path / "data" / "real", dir.path / "data" / "absolute-alias");
  auto manifest = reverify::hash_directory(dir.path);
  REQUIRE(manifest.ok());
  CHECK(manifest->text() == kAbcSha + "  3  alias\n" + kAbcSha + "  3  data/absolute-alias\n" +
                                kAbcSha + "  3  data/real\n");
}

TEST_CASE("symlinks leaving the folder, to folders, or dangling are errors naming the path") {
  TempDir outside;
  write_file(outside.path / "secret", "abc");
  TempDir dir;
  write_file(dir.path / "sub" / "file", "abc");

  SUBCASE("absolute link outside") {
    fs::create_symlink(outside.path / "secret", dir.path / "sub" / "leak");
    const std::string message = error_of(dir.path);
    CHECK(message.find("sub/leak") != std::string::npos);
    CHECK(message.find("leaves the folder") != std::string::npos);
  }
  SUBCASE("relative link climbing out") {
    fs::create_symlink("../../" + outside.path.filename().string() + "/secret",
                       dir.path / "sub" / "up");
    CHECK(error_of(dir.path).find("sub/up: symlink leaves the folder") != std::string::npos);
  }
  SUBCASE("link to a link outside") {
    fs::create_symlink(outside.path / "secret", dir.path / "hop1");
    fs::create_symlink("hop1", dir.path / "hop0");
    CHECK(error_of(dir.path).find("hop0: symlink leaves the folder") != std::string::npos);
  }
  SUBCASE("link to a folder inside") {
    fs::create_symlink("sub", dir.path / "subdir-link");
    CHECK(error_of(dir.path).find("subdir-link: symlink to a folder") != std::string::npos);
  }
  SUBCASE("link to the folder itself") {
    fs::create_symlink(".", dir.path / "self");
    CHECK(error_of(dir.path).find("self: symlink") != std::string::npos);
  }
  SUBCASE("dangling link") {
    fs::create_symlink("missing", dir.path / "sub" / "dangling");
    CHECK(error_of(dir.path).find("sub/dangling: symlink does not resolve") != std::string::npos);
  }
}

TEST_CASE("fifos, sockets and paths with a newline are errors naming the path") {
  TempDir dir;
  write_file(dir.path / "ok", "abc");
  SUBCASE("fifo") {
    REQUIRE(::mkfifo((dir.path / "pipe").c_str(), 0600) == 0);
    CHECK(error_of(dir.path).find("pipe: is a fifo") != std::string::npos);
  }
  SUBCASE("unix socket") {
    const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    const std::string socket_path = (dir.path / "sock").string();
    REQUIRE(socket_path.size() < sizeof(address.sun_path));
    socket_path.copy(address.sun_path, socket_path.size());
    REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0);
    CHECK(error_of(dir.path).find("sock: is a socket") != std::string::npos);
    ::close(fd);
  }
  SUBCASE("symlink to a fifo inside") {
    REQUIRE(::mkfifo((dir.path / "pipe").c_str(), 0600) == 0);
    fs::create_symlink("pipe", dir.path / "a-link");  // listed (and checked) before "pipe"
    CHECK(error_of(dir.path).find("a-link: symlink target is a fifo") != std::string::npos);
  }
  SUBCASE("newline in a name") {
    write_file(dir.path / "bad\nname", "abc");
    CHECK(error_of(dir.path).find("holds a newline") != std::string::npos);
  }
}

TEST_CASE("hashing something that is not a folder fails with its path") {
  TempDir dir;
  write_file(dir.path / "file", "abc");
  auto not_folder = reverify::hash_directory(dir.path / "file");
  REQUIRE_FALSE(not_folder.ok());
  CHECK(not_folder.error().message.find("is not a folder") != std::string::npos);
  auto missing = reverify::hash_directory(dir.path / "missing");
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.error().code == reverify::ErrorCode::not_found);
}

TEST_CASE("a written manifest parses back to the same entries and root") {
  TempDir dir;
  write_file(dir.path / "x  y", "abc");  // the separator inside a path survives the round trip
  write_file(dir.path / "z", "");
  auto manifest = reverify::hash_directory(dir.path);
  REQUIRE(manifest.ok());
  auto parsed = reverify::parse_file_manifest(manifest->text());
  REQUIRE(parsed.ok());
  CHECK(parsed->root == manifest->root);
  CHECK(parsed->total_bytes == 3);
  REQUIRE(parsed->files.size() == 2);
  CHECK(parsed->files[0].relative_path == "x  y");
  CHECK(parsed->text() == manifest->text());
}

TEST_CASE("malformed file manifests are rejected with the line and the rule") {
  const std::string good = kAbcSha + "  3  a\n";
  struct Case {
    std::string text, expected;
  };
  const Case cases[] = {
      {kAbcSha + "  3  a", "must end with a newline"},
      {"zz" + kAbcSha.substr(2) + "  3  a\n", "line 1: expected"},
      {"BA" + kAbcSha.substr(2) + "  3  a\n", "line 1: expected"},
      {kAbcSha + " 3  a\n", "line 1: expected"},
      {kAbcSha + "  3a\n", "line 1: expected"},
      {kAbcSha + "  -3  a\n", "size \"-3\" is not a byte count"},
      {kAbcSha + "  99999999999999999999  a\n", "is not a byte count"},
      {kAbcSha + "    a\n", "size \"\" is not a byte count"},
      {kAbcSha + "  3  /etc/passwd\n", "path must be relative"},
      {good + kAbcSha + "  3  a\n", "line 2: path \"a\" must sort after \"a\""},
      {kAbcSha + "  3  b\n" + good, "line 2: path \"a\" must sort after \"b\""},
  };
  for (const Case& c : cases) {
    CAPTURE(c.text);
    auto parsed = reverify::parse_file_manifest(c.text);
    REQUIRE_FALSE(parsed.ok());
    CHECK(parsed.error().message.find(c.expected) != std::string::npos);
  }
}

TEST_CASE("diff names added, removed and changed files") {
  auto manifest = [](const std::string& text) {
    return reverify::parse_file_manifest(text).value();
  };
  const auto expected =
      manifest(kAbcSha + "  3  a\n" + kAbcSha + "  3  b\n" + kEmptySha + "  0  c\n");
  const auto actual =
      manifest(kAbcSha + "  3  a\n" + kEmptySha + "  0  c\n" + kEmptySha + "  0  d\n");
  auto diff = reverify::diff_file_manifests(expected, actual);
  CHECK(diff.added == std::vector<std::string>{"d"});
  CHECK(diff.removed == std::vector<std::string>{"b"});
  CHECK(diff.changed.empty());
  const auto changed =
      manifest(kEmptySha + "  3  a\n" + kAbcSha + "  3  b\n" + kEmptySha + "  0  c\n");
  CHECK(reverify::diff_file_manifests(expected, changed).changed == std::vector<std::string>{"a"});
  CHECK(reverify::diff_file_manifests(expected, expected).empty());
}
