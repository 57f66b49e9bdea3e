#pragma once
// The manifest fixtures under tests/core/manifests/, for any suite run through CTest (which sets
// REVERIFY_SOURCE_DIR).

#include <doctest/doctest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "core/manifest_parse.hpp"

namespace reverify::testing {

inline std::string manifest_fixture_text(const std::string& name) {
  const char* source = std::getenv("REVERIFY_SOURCE_DIR");
  REQUIRE_MESSAGE(source != nullptr, "REVERIFY_SOURCE_DIR is not set (run through ctest)");
  std::ifstream in(std::string(source) + "/tests/core/manifests/" + name, std::ios::binary);
  REQUIRE_MESSAGE(in.good(), "cannot read the fixture " << name);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The fixture parsed; it must be valid.
inline Manifest manifest_fixture(const std::string& name) {
  auto parse = parse_manifest(manifest_fixture_text(name));
  REQUIRE(parse.ok());
  return *parse.manifest;
}

}  // namespace reverify::testing
