#pragma once
// What the store records of one released model version, read from its manifest document: the
// bytes' hash, whether it validates (and why not), owner, level, release time, accelerator
// count, duration, the subsample reference's fraction and duration. Used by every registry source
// and by `reverify run` for a manifest of its own.

#include <cstddef>
#include <string>
#include <string_view>

#include "store/store.hpp"

namespace reverify {

// The largest manifest a registry lists (bigger ones are listed with an error, never parsed).
inline constexpr std::size_t kMaxManifestBytes = 16 * 1024 * 1024;

// Fills a row from a manifest document's bytes: hash, validation, owner, level, release time,
// accelerator count, duration, subsample reference. `model`/`version` are what the location says; a
// manifest naming another model version is an error on the row.
ModelVersionRow describe_manifest(const std::string& model, const std::string& version,
                                  const std::string& location, std::string_view document);

}  // namespace reverify
