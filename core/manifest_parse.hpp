#pragma once
// Parse and validate a manifest document. Every problem is collected, not only the first, each
// with its JSON path ("environment.image", "evaluation.segments[\"digit=8\"].accuracy") and what
// was expected, e.g.
//   environment.image: must be referenced by digest (name@sha256:<64 hex>), got "python:3.11-slim"

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "core/manifest.hpp"
#include "core/result.hpp"

namespace reverify {

struct ValidationError {
  std::string path;     // JSON path; "" for the document itself
  std::string message;  // what was expected, and what was found

  std::string to_string() const;  // "<path>: <message>"
};

struct ManifestParse {
  std::optional<Manifest> manifest;     // set iff errors is empty
  std::vector<ValidationError> errors;  // all of them
  std::vector<std::string> warnings;    // e.g. unknown top-level keys
  bool ok() const { return manifest.has_value(); }
};

// Limits that keep hostile input from exhausting memory or stack.
struct ManifestLimits {
  std::size_t max_bytes = 64 * 1024 * 1024;  // whole document
  std::size_t max_depth = 64;                // nesting of arrays/objects
  std::size_t max_string_bytes = 1024 * 1024;
  // Elements of any one array, checked while parsing: a tolerance.seed_runs list holds one value
  // per seed rerun (tens, a few thousand at most), distribution_pairs one per pair of them, and
  // steps.values one per recorded step. 2M seed runs took 5.8 s and 178 MB to lint.
  std::size_t max_array_elements = 100'000;
};

ManifestParse parse_manifest(std::string_view document, const ManifestLimits& limits = {});

// The paths a manifest names that must stay inside their roots, each error naming its field:
// - run.workdir: no ".." segment (relative: a folder of the checkout, where the process runner
//   runs the job; absolute: a folder of the image, which the process runner replaces by the
//   checkout's root);
// - the release's own files, evaluation.predictions.uri and weights.uri (and the subsample
//   reference's): beside the manifest, so a relative URI has no ".." segment, percent-encoded or
//   not; an absolute one (file:///..., https://...) names its place on purpose.
// parse_manifest reports them with its other errors; preflight checks them again, for a manifest
// assembled in code (a bisect mixture).
std::vector<ValidationError> path_containment_errors(const Manifest& manifest);

// Validates an object of the manifest's "environment" shape on its own, with the same rules; its
// errors and warnings carry paths under `path`. `reverify capture` reads the facts only a job can
// see (result.json's "environment": framework, determinism flags as set, thread counts, the GPU)
// through it.
struct EnvironmentParse {
  std::optional<Environment> environment;  // set iff errors is empty
  std::vector<ValidationError> errors;
  std::vector<std::string> warnings;
};
EnvironmentParse parse_environment(const nlohmann::json& value, const std::string& path);

// Reads a manifest from a local path, a file:// URI or an http(s):// URL (fetched with a size cap
// and timeout). On success, the manifest's base location (for resolving relative URIs) is set.
struct LoadedManifest {
  ManifestParse parse;
  std::string location;  // the path or URL it was read from
  std::string sha256;    // of the document bytes as read
};
Result<LoadedManifest> load_manifest(const std::string& path_or_uri);

}  // namespace reverify
