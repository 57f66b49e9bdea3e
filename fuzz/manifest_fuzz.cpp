// libFuzzer target for the manifest parser. Besides "never crash, leak or hit UB" it checks two
// properties on every input that validates: to_json round-trips to an equal manifest, and lint and
// diff accept it (a manifest diffed with itself is empty).

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "core/manifest_json.hpp"
#include "core/manifest_parse.hpp"
#include "policies/lint.hpp"
#include "policies/manifest_diff.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // Small limits so that the fuzzer also explores the limit paths.
  reverify::ManifestLimits limits;
  limits.max_bytes = 1 << 20;
  limits.max_depth = 32;
  limits.max_string_bytes = 4096;
  const auto parse =
      reverify::parse_manifest(std::string_view(reinterpret_cast<const char*>(data), size), limits);
  if (!parse.ok()) {
    if (parse.errors.empty())
      std::abort();  // invalid must say why
    return 0;
  }
  const auto& manifest = *parse.manifest;
  const auto again = reverify::parse_manifest(reverify::to_json(manifest).dump());
  if (!again.ok() || !(*again.manifest == manifest))
    std::abort();
  const auto report = reverify::lint_manifest(manifest);
  if (report.score < 0 || report.score > 100)
    std::abort();
  if (!reverify::diff_manifests(manifest, manifest).empty())
    std::abort();
  return 0;
}
