#pragma once
// The scoring flags (--task, --labels, --classes, --metric, --segment-key, --threshold, --k,
// --query) that make an evaluation.scoring spec (docs/job-guide.md "Scoring spec"), shared by
// `reverify capture` (which records the spec, copying its files into the release folder) and
// `reverify check-job` (which scores a job's predictions with it, reading the files in place).

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "cli/command.hpp"
#include "core/manifest.hpp"
#include "core/result.hpp"
#include "core/scoring_inputs.hpp"
#include "policies/scoring.hpp"

namespace reverify::cli {

struct ScoringArguments {
  std::optional<ScoringTask> task;
  std::optional<std::string> labels, query;
  std::optional<std::int64_t> classes, k;
  std::vector<std::string> metrics, segment_keys;
  std::vector<double> thresholds;

  bool any() const {
    return task || labels || query || classes || k || !metrics.empty() || !segment_keys.empty() ||
           !thresholds.empty();
  }
};

// Declares the scoring flags on `app`.
void add_scoring_flags(CLI::App& app, ScoringArguments& args);

// COLUMN (of the eval set), FILE, or FILE:COLUMN (a CSV file with a header row) given to
// `option`: the file (absent for a column of the eval set) and the column (absent for a file of
// one value a line), the column checked to exist. An invalid_argument error naming the option.
struct ColumnSource {
  std::optional<std::filesystem::path> file;
  std::optional<std::string> column;
};
Result<ColumnSource> column_source(const std::string& text, const std::string& option,
                                   const std::optional<std::string>& eval);

// How a column source becomes the spec's RecordColumn (capture: a copy in the release folder;
// check-job: the file where it is), given the flag's text and option.
using ColumnRecorder =
    std::function<Result<RecordColumn>(const std::string& text, const std::string& option)>;

// evaluation.scoring from the flags; the manifest's validation judges the combination.
Result<ScoringSpec> scoring_spec(const ScoringArguments& args, const ColumnRecorder& record);

// The spec tried on a set of predictions: every per-record input read (relative URIs against
// `manifest_location`, a column of the eval set from `eval_set`) and every metric scored. One
// line for the user, the inputs (to score more runs with) and the scores.
struct ScoringTried {
  std::string line;
  ScoringInputs inputs;
  scoring::Scores scores;
};
Result<ScoringTried> try_scoring(const ScoringSpec& spec, const std::string& manifest_location,
                                 const std::optional<FileRef>& eval_set,
                                 const std::filesystem::path& predictions_file);

}  // namespace reverify::cli
