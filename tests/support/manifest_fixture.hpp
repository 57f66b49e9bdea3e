#pragma once
// The manifest fixtures under tests/core/manifests/, for any suite run through CTest (which sets
// REVERIFY_SOURCE_DIR).

#include <doctest/doctest.h>

#include <filesystem>
#include <string>

#include "core/manifest_parse.hpp"
#include "tests/support/files.hpp"

namespace reverify::test {

inline std::filesystem::path manifest_fixture_path(const std::string& name) {
  return source_dir() / "tests/core/manifests" / name;
}

inline std::string manifest_fixture_text(const std::string& name) {
  std::string text = read_file(manifest_fixture_path(name));
  REQUIRE_MESSAGE(!text.empty(), "cannot read the fixture " << name);
  return text;
}

// The fixture parsed; it must be valid.
inline Manifest manifest_fixture(const std::string& name) {
  auto parse = parse_manifest(manifest_fixture_text(name));
  REQUIRE(parse.ok());
  return *parse.manifest;
}

}  // namespace reverify::test
