#pragma once
// Serialising a Manifest back to its JSON form (schema reverify.manifest/v1). Absent optional
// fields are omitted; unknown top-level keys kept in Manifest::extra are written back as they
// were. parse_manifest(to_json(m).dump()) yields m again (tested).

#include <nlohmann/json.hpp>

#include "core/manifest.hpp"

namespace reverify {

nlohmann::json to_json(const Manifest& manifest);

}  // namespace reverify
