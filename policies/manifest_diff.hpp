#pragma once
// Which parts of two manifests differ, field by field (`reverify diff A B`). Pure: no I/O.
// Sections, in report order: the five inputs (data, code, config, environment, seeds), then
// evaluation and weights, then run, tolerance, subsample (the subsample reference: fraction,
// salt, key, its own evaluation, weights, tolerance and duration), identity (schema, model,
// version, owner, level) and extra (unknown top-level keys). Objects are compared key by key
// (config recursively, at any depth), arrays element by element.
//
// A file's location is not its content: a `uri` that differs while the hash beside it
// (`sha256`, or `tensor_sha256` for weights) is the same on both sides is a change marked
// `location_only` (the same bytes found elsewhere, or the same place spelt relative, absolute or
// with "./"), and it moves no input. With another hash, both fields are ordinary changes.
//
// The summary (`summarize`) is what fits on one screen: each array that differs is one line with
// both sizes and how many of its top-level elements changed, and a group of more than
// kSummaryGroupLines lines under one field of a section (evaluation.segments,
// tolerance.segment_seed_runs, ...; in subsample one level deeper, subsample.evaluation.segments)
// is one line that counts them and names the first few.

#include <cstddef>
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
  bool location_only = false;               // a uri beside an unchanged hash (see above)
};

// An array that differs, as a whole (the outermost one: a list of lists is one entry).
struct ListChange {
  std::string path;
  std::size_t old_size = 0;
  std::size_t new_size = 0;
  std::size_t changed = 0;  // indexes below max(old_size, new_size) whose elements differ
};

struct SectionDiff {
  std::string section;  // "data", "code", ...
  bool input = false;   // one of the five training inputs
  std::vector<FieldChange> changes;
  std::vector<ListChange> lists;  // the arrays whose elements appear in `changes`

  bool moved() const;  // a change other than location_only
};

struct ManifestDiff {
  std::vector<SectionDiff> sections;  // only the sections that differ, in report order
  bool empty() const { return sections.empty(); }
  std::vector<std::string> moved_inputs() const;  // input sections that moved (SectionDiff::moved)
};

ManifestDiff diff_manifests(const Manifest& a, const Manifest& b);

// {"same": bool, "inputs_moved": ["data", ...],
//  "sections": [{"section": "data", "input": true, "moved": bool,
//                "changes": [{"path", "old", "new", "location_only"}],
//                "lists": [{"path", "old_size", "new_size", "changed"}]}]};
// "old"/"new" are omitted where the field is absent on that side, "location_only" where false.
nlohmann::json to_json(const ManifestDiff& diff);

// ---- Summary ---------------------------------------------------------------------------------

inline constexpr std::size_t kSummaryGroupLines = 3;

struct SummaryLine {
  std::string path;  // a field, an array, or a group ("evaluation.segments")
  std::string text;  // "0.9667 -> 0.95", "40 -> 40 runs, 40 changed", "10 fields changed: ..."
};

struct SectionSummary {
  std::string section;
  bool input = false;
  bool moved = false;
  std::vector<SummaryLine> lines;  // location-only changes excluded (DiffSummary::relocated)
};

struct DiffSummary {
  std::vector<std::string> inputs_moved;
  std::vector<std::string> also_differ;  // sections that differ without being a moved input
  std::vector<SectionSummary> sections;  // those with a line
  std::vector<std::string> relocated;    // paths of the location_only changes
};

DiffSummary summarize(const ManifestDiff& diff);

}  // namespace reverify
