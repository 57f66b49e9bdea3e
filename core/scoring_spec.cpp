// What the scoring spec's name tables (core/manifest.hpp) say about a metric, and the default
// name of a segment key.

#include <filesystem>

#include "core/manifest.hpp"

namespace reverify {
namespace {

const ScoringMetricName& row_of(ScoringMetric metric) {
  for (const auto& row : EnumNames<ScoringMetric>::table) {
    if (row.value == metric)
      return row;
  }
  return EnumNames<ScoringMetric>::table[0];  // unreachable: every enumerator has a row
}

MetricFamily family_of(ScoringTask task) {
  switch (task) {
    case ScoringTask::binary:
    case ScoringTask::multiclass:
      return MetricFamily::classification;
    case ScoringTask::regression:
      return MetricFamily::regression;
    case ScoringTask::ranking:
      return MetricFamily::ranking;
  }
  return MetricFamily::classification;
}

}  // namespace

bool metric_applies(ScoringMetric metric, ScoringTask task) {
  return row_of(metric).family == family_of(task);
}

bool higher_is_better(ScoringMetric metric) {
  return row_of(metric).higher_is_better;
}

std::string default_segment_key_name(const RecordColumn& values) {
  if (values.column)
    return *values.column;
  return values.uri ? std::filesystem::path(*values.uri).stem().string() : "";
}

std::vector<ScoringMetric> task_metrics(ScoringTask task) {
  std::vector<ScoringMetric> metrics;
  for (const auto& row : EnumNames<ScoringMetric>::table) {
    if (row.family == family_of(task))
      metrics.push_back(row.value);
  }
  return metrics;
}

}  // namespace reverify
