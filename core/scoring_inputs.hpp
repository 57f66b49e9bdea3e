#pragma once
// The per-record inputs of scoring, once read (core/eval_columns.hpp reads them from the eval set
// and the files evaluation.scoring names; policies/scoring.hpp scores predictions with them):
// labels, segment keys and query ids, one per eval record in eval-set order. Pure data and the
// rules every reader and the scorer share: what a valid label is, how key values are interned.

#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/manifest.hpp"

namespace reverify {

// A per-record column of strings, interned: its distinct values (sorted numerically when every
// value is a number, else bytewise) and, per record, the index of its value.
struct RecordKeys {
  std::vector<std::string> values;
  std::vector<std::uint32_t> codes;  // one per record, < values.size()

  std::size_t records() const { return codes.size(); }
};

// Interns `texts` (one per record). REQUIRES: fewer than 2^32 distinct values.
RecordKeys intern_keys(const std::vector<std::string>& texts);

// One segment key: a record whose value is v is in the segment "<name>=<v>".
struct SegmentKey {
  std::string name;  // "digit"
  RecordKeys keys;

  std::string segment(std::uint32_t code) const { return name + "=" + keys.values[code]; }
};

// The probability rows log loss and Brier accept: every entry in [0, 1] and, for class scores,
// the row's sum within this of 1 (float32 or float16 outputs of a softmax; rows further off are
// scores, not probabilities, and those metrics are not judged).
inline constexpr double kProbabilitySumTolerance = 1e-3;

struct ScoringInputs {
  ScoringTask task = ScoringTask::binary;
  std::size_t classes = 0;             // binary: 2; multiclass: C; regression, ranking: 0
  std::vector<ScoringMetric> metrics;  // what to compute; never empty
  std::vector<double> thresholds;      // binary: at least one; regression: parity only
  std::size_t k = 0;                   // ranking: the cut-off (>= 1)
  std::vector<double> labels;          // one per record (classification: class indices)
  std::vector<SegmentKey> segment_keys;
  std::optional<RecordKeys> queries;  // ranking: each record's query id

  std::size_t records() const { return labels.size(); }
};

// The spec's task, classes, metrics (or the task's full set), thresholds (binary: 0.5 when none)
// and k; no per-record data.
ScoringInputs scoring_settings(const ScoringSpec& spec);

// Whether `label` is a label of this task: finite; classification labels are integers (binary:
// 0 or 1; multiclass: 0..classes-1); ranking labels are relevance grades >= 0.
inline bool is_label(ScoringTask task, std::size_t classes, double label) {
  switch (task) {
    case ScoringTask::binary:
      return label == 0 || label == 1;
    case ScoringTask::multiclass:
      return label >= 0 && label < static_cast<double>(classes) &&
             label == static_cast<double>(static_cast<std::size_t>(label));
    case ScoringTask::ranking:
      return label >= 0 && label <= std::numeric_limits<double>::max();
    case ScoringTask::regression:
      return label - label == 0;  // finite
  }
  return false;
}

// Why `label` is not a label of this task, as the expectation it fails ("an integer in 0..9 (the
// declared classes: 10)"); nullopt when is_label.
std::optional<std::string> label_violation(ScoringTask task, std::size_t classes, double label);

}  // namespace reverify
