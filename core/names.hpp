#pragma once
// Model and version names are validated before they reach a path, a label, a URL or an argv:
// [A-Za-z0-9][A-Za-z0-9._-]{0,127} (docs/design.md, "Vocabulary"). ".." is impossible by
// construction of the first character, but "a..b" is allowed; names never contain '/'.

#include <optional>
#include <string>
#include <string_view>

#include "core/result.hpp"

namespace reverify {

bool is_valid_name(std::string_view name);

struct ModelVersion {
  std::string model;
  std::string version;
  std::string id() const { return model + "@" + version; }
};

// "digits-mlp@2026.11.1" -> {model, version}; an error naming what is wrong otherwise.
Result<ModelVersion> parse_model_version(std::string_view text);

// An image referenced by digest: "NAME@sha256:<64 lowercase hex>", NAME non-empty and free of
// whitespace, control characters and '@' (it may carry a tag: "repo:tag@sha256:...").
struct DigestReference {
  std::string name;
  std::string digest;  // "sha256:<hex>"
};
std::optional<DigestReference> parse_digest_reference(std::string_view image);

}  // namespace reverify
