#pragma once
// A JSON reader for untrusted documents (manifests, API request bodies). It checks, before any
// DOM is built or while building it: the document size, a leading byte order mark (refused),
// UTF-8 validity (naming the byte offset of the first bad byte), nesting depth, string sizes and
// duplicate object keys, which nlohmann's DOM parser would silently accept (last one wins) and
// which make a document mean two things.

#include <optional>
#include <string_view>

#include <nlohmann/json.hpp>

#include "core/manifest_parse.hpp"

namespace reverify {

struct StrictJson {
  nlohmann::json value;                  // meaningful iff !error
  std::optional<ValidationError> error;  // the first problem found
};

StrictJson parse_strict_json(std::string_view text, const ManifestLimits& limits);

// Byte offset of the first invalid UTF-8 sequence (overlong forms, surrogates and code points
// above U+10FFFF are invalid), or nullopt when the text is valid.
std::optional<std::size_t> find_invalid_utf8(std::string_view text);

}  // namespace reverify
