#pragma once
// Which parts of two manifests differ, field by field (`reverify diff A B`). Pure: no I/O.
// Sections, in report order: the five inputs (data, code, config, environment, seeds), then
// evaluation and weights, then run, tolerance, identity (schema, model, version, owner, level)
// and extra (unknown top-level keys). Objects are compared key by key (config recursively, at any
// depth), arrays element by element.

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/manifest.hpp"

namespace reverify {

struct FieldChange {
  std::string path;                         // JSON path, "environment.image"
  std::optional<nlohmann::json> old_value;  // nullopt = absent in A
  std::optional<nlohmann::json> new_value;  // nullopt = absent in B
};

struct SectionDiff {
  std::string section;  // "data", "code", ...
  bool input = false;   // one of the five training inputs
  std::vector<FieldChange> changes;
};

struct ManifestDiff {
  std::vector<SectionDiff> sections;  // only the sections that differ, in report order
  bool empty() const { return sections.empty(); }
  std::vector<std::string> moved_inputs() const;  // names of the input sections that differ
};

ManifestDiff diff_manifests(const Manifest& a, const Manifest& b);

// {"same": bool, "inputs_moved": ["data", ...],
//  "sections": [{"section": "data", "input": true, "changes": [{"path", "old", "new"}]}]};
// "old"/"new" are omitted where the field is absent on that side.
nlohmann::json to_json(const ManifestDiff& diff);

}  // namespace reverify
