#include <doctest/doctest.h>

#include <fstream>

#include "core/secret_file.hpp"
#include "tests/support/temp_dir.hpp"

using namespace reverify;
using reverify::testing::TempDir;

TEST_CASE("secret files: read and trimmed; missing or empty is an error naming the key") {
  TempDir dir;
  std::ofstream(dir.path / "key") << "  R0UTING\n";
  std::ofstream(dir.path / "empty") << " \r\n";
  auto key = read_secret_file(dir.path / "key", "pager.senders.pd.routing_key_file");
  REQUIRE(key.ok());
  CHECK(*key == "R0UTING");
  auto missing = read_secret_file(dir.path / "nope", "pager.senders.pd.routing_key_file");
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.error().message ==
        "pager.senders.pd.routing_key_file: cannot read \"" + (dir.path / "nope").string() + "\"");
  auto empty = read_secret_file(dir.path / "empty", "api.token_file");
  REQUIRE_FALSE(empty.ok());
  CHECK(empty.error().message ==
        "api.token_file: \"" + (dir.path / "empty").string() + "\" is empty");
}
