// load_manifest: the only part of manifest parsing that does I/O (kept apart so that the parser
// builds without libcurl, e.g. in the fuzzer).

#include <system_error>

#include "core/hashing.hpp"
#include "core/manifest_parse.hpp"
#include "core/uri.hpp"

namespace reverify {

Result<LoadedManifest> load_manifest(const std::string& path_or_uri) {
  const ManifestLimits limits;
  std::string location = path_or_uri;
  if (!is_remote_uri(path_or_uri)) {
    auto path = local_path(path_or_uri);
    if (!path)
      return path.error();
    // Absolute, so that relative URIs inside resolve the same from any working directory.
    std::error_code ec;
    auto absolute = std::filesystem::absolute(*path, ec);
    location = (ec ? *path : absolute).lexically_normal().string();
  }
  auto text = read_uri(location, FetchLimits{limits.max_bytes, FetchLimits{}.timeout_s});
  if (!text)
    return text.error();
  return LoadedManifest{parse_manifest(*text, limits), location, sha256_hex(*text)};
}

}  // namespace reverify
