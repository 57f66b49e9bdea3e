// Names and image references: what may reach a path, a label, a URL or an argv.

#include <doctest/doctest.h>

#include <string>

#include "core/names.hpp"

using reverify::parse_digest_reference;

namespace {
const std::string kHex(64, 'a');
}

TEST_CASE("an image by digest splits at the @, keeping a tag in the name") {
  auto plain = parse_digest_reference("registry.local:5000/team/trainer@sha256:" + kHex);
  REQUIRE(plain.has_value());
  CHECK(plain->name == "registry.local:5000/team/trainer");
  CHECK(plain->digest == "sha256:" + kHex);
  auto tagged = parse_digest_reference("trainer:1.2@sha256:" + kHex);
  REQUIRE(tagged.has_value());
  CHECK(tagged->name == "trainer:1.2");
}

TEST_CASE("anything but NAME@sha256:<64 lowercase hex> is refused") {
  for (const std::string& image :
       {std::string("trainer:latest"), "@sha256:" + kHex, "trainer@sha256:" + kHex.substr(1),
        "trainer@sha256:" + kHex + "0", "trainer@sha256:" + std::string(64, 'A'),
        "trainer@sha256:" + std::string(63, 'a') + "g", "a b@sha256:" + kHex, "a@b@sha256:" + kHex,
        "trainer@sha512:" + kHex, "trainer\t@sha256:" + kHex, std::string("")}) {
    CAPTURE(image);
    CHECK_FALSE(parse_digest_reference(image).has_value());
  }
}

TEST_CASE("model and version names") {
  CHECK(reverify::is_valid_name("digits-mlp"));
  CHECK(reverify::is_valid_name("2026.11.1"));
  CHECK_FALSE(reverify::is_valid_name(".hidden"));
  CHECK_FALSE(reverify::is_valid_name("a/b"));
  CHECK_FALSE(reverify::is_valid_name(std::string(129, 'a')));
  auto id = reverify::parse_model_version("digits-mlp@2026.11.1");
  REQUIRE(id.ok());
  CHECK(id->model == "digits-mlp");
  CHECK(id->version == "2026.11.1");
  CHECK_FALSE(reverify::parse_model_version("digits-mlp").ok());
  CHECK_FALSE(reverify::parse_model_version("../x@1").ok());
}
