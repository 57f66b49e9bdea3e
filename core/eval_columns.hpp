#pragma once
// Reads the per-record inputs that evaluation.scoring names (labels, segment keys, query ids)
// into ScoringInputs. Blocking: it reads and hashes files.
//
// Where a column comes from (core/manifest.hpp, RecordColumn):
// - a column of the eval set (evaluation.set): a CSV file whose first line names its columns;
//   fields are separated by commas and trimmed of spaces; a double quote anywhere is refused
//   (quoted fields are not supported), so is a line whose field count differs from the header's;
// - a file (uri, relative to the manifest; local, file:// or http(s)://), whose sha256 is checked
//   against the spec's before anything is read from it: .npy (recognised by its magic; 1-D, or
//   2-D with one column; bool, integer or float dtypes), or text: with "column", a CSV as above;
//   without, one value per line (labels: a first line that is not a number is a header; segment
//   keys and query ids: no header, every line is a value).
// Blank lines are skipped, as in prediction files. The eval set's own sha256 (evaluation.set) is
// checked too when a column is read from it.
//
// Every error names the manifest field, the file and, where it applies, the line or record and
// what was expected, e.g.
//   evaluation.scoring.labels: /reg/m/1/labels.npy: 390 values, the predictions have 391 rows
//   (one per eval record, in eval-set order)
//   evaluation.scoring.labels: /data/eval.csv: line 17 (record 15): 10 is not a label: must be an
//   integer in 0..9 (the declared classes: 10)
//   evaluation.scoring.segments[1].column: /data/eval.csv has no column "radius" (its columns:
//   id, label, p0, ... 66 in all)
//   evaluation.scoring.labels.sha256: /reg/m/1/labels.npy hashes to 3f2a..., the manifest
//   records 9c1d... (the frozen labels changed)              [ErrorCode::input_drift]

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "core/manifest.hpp"
#include "core/result.hpp"
#include "core/scoring_inputs.hpp"

namespace reverify {

struct EvalSources {
  std::string manifest_location;    // relative URIs resolve against it
  std::optional<FileRef> eval_set;  // evaluation.set: whose columns a bare "column" names
};

// The inputs for predictions of `rows` rows: every source must hold exactly `rows` values.
Result<ScoringInputs> read_scoring_inputs(const ScoringSpec& spec, const EvalSources& sources,
                                          std::size_t rows);

// Whether the CSV file at `path` names `column` on its first line (capture checks a column before
// recording it); the error names the file and lists its columns.
Status check_csv_column(const std::filesystem::path& path, const std::string& column);

}  // namespace reverify
