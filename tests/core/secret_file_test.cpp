// The one reader of secret files (core/secret_file.hpp): trimmed, checked for its form, and every
// error naming the config key and the file, never the secret.
#include <doctest/doctest.h>

#include <fstream>

#include "core/secret_file.hpp"
#include "tests/support/temp_dir.hpp"

using namespace reverify;
using reverify::test::TempDir;

TEST_CASE("secret files: read and trimmed; missing or empty is an error naming the key") {
  TempDir dir;
  std::ofstream(dir.path / "key") << "  R0UTINGKEYR0UTINGKEY\n";
  std::ofstream(dir.path / "empty") << " \r\n";
  auto key =
      read_secret_file(dir.path / "key", "pager.senders.pd.routing_key_file", SecretForm::opaque);
  REQUIRE(key.ok());
  CHECK(*key == "R0UTINGKEYR0UTINGKEY");
  auto missing =
      read_secret_file(dir.path / "nope", "pager.senders.pd.routing_key_file", SecretForm::opaque);
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.error().message == "pager.senders.pd.routing_key_file: \"" +
                                       (dir.path / "nope").string() + "\" does not exist");
  auto empty = read_secret_file(dir.path / "empty", "api.token_file", SecretForm::bearer_token);
  REQUIRE_FALSE(empty.ok());
  CHECK(empty.error().message ==
        "api.token_file: \"" + (dir.path / "empty").string() + "\" is empty");
}

// Found #8: a token_file that is a directory was reported as "is empty".
TEST_CASE("a secret file that is a directory says so") {
  TempDir dir;
  auto directory = read_secret_file(dir.path, "api.token_file", SecretForm::bearer_token);
  REQUIRE_FALSE(directory.ok());
  CHECK(directory.error().message == "api.token_file: \"" + dir.path.string() +
                                         "\" is a directory; name the file that holds the secret");
}

TEST_CASE("secrets too short to redact safely are refused, without echoing them") {
  TempDir dir;
  std::ofstream(dir.path / "short") << "hunter2\n";
  auto opaque = read_secret_file(dir.path / "short", "sources[0].token_file", SecretForm::opaque);
  REQUIRE_FALSE(opaque.ok());
  CHECK(opaque.error().message.ends_with("holds 7 bytes; a secret needs at least 16"));
  CHECK(opaque.error().message.find("hunter2") == std::string::npos);
  std::ofstream(dir.path / "two-lines") << "0123456789abcdef\n0123456789abcdef\n";
  auto two_lines =
      read_secret_file(dir.path / "two-lines", "sources[0].token_file", SecretForm::opaque);
  REQUIRE_FALSE(two_lines.ok());
  CHECK(two_lines.error().message.find("byte 16 is not allowed") != std::string::npos);
}
