#pragma once
// Resolving the URIs a manifest names. Relative URIs resolve against the manifest's own location;
// plain paths and file:// are local; http(s):// are fetched with libcurl (size cap, timeout).

#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>

#include "core/result.hpp"

namespace reverify {

// "predictions.npy" against "/reg/m/v/manifest.json" -> "/reg/m/v/predictions.npy";
// against "https://h/m/v/manifest.json" -> "https://h/m/v/predictions.npy"; absolute ones as is.
std::string resolve_uri(const std::string& base_location, const std::string& uri);

bool is_remote_uri(const std::string& uri);  // http:// or https://

// RFC 3986 percent-decoding ("%2E" -> "."); a truncated or non-hex escape, or %00, is an error.
Result<std::string> percent_decode(std::string_view text);

// Whether a relative path (a '/'-separated path, or a relative URI reference already
// percent-decoded) stays inside the folder it is resolved against: not empty, not absolute (no
// leading '/', no scheme), and no ".." segment. "a/./b" stays; "a/../b" is refused too: a path
// in a manifest names its file directly.
bool path_stays_inside(std::string_view relative_path);

// Local path for a resolved local URI ("file:///a/b" or "/a/b"); an error for remote URIs.
Result<std::filesystem::path> local_path(const std::string& resolved_uri);

// Where a manifest's code.repo is on this machine: a URL (scheme://, or scp-like user@host:path
// or host:path, git's rule: a ':' before any '/') as is; a path relative to the manifest's folder,
// like its other URIs, or file://, as a path.
std::string repo_location(const std::string& repo, const std::string& manifest_location);

struct FetchLimits {
  std::size_t max_bytes = 256 * 1024 * 1024;
  long timeout_s = 60;
};
// Reads a resolved URI whole: local files directly, http(s) with libcurl.
Result<std::string> read_uri(const std::string& resolved_uri, const FetchLimits& limits = {});

}  // namespace reverify
