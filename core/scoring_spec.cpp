// The names of evaluation.scoring's tasks and metrics, which tasks each metric belongs to and its
// direction: one declarative table per enum.

#include <array>
#include <filesystem>

#include "core/manifest.hpp"

namespace reverify {
namespace {

constexpr std::array<std::pair<ScoringTask, const char*>, 4> kTasks{{
    {ScoringTask::binary, "binary"},
    {ScoringTask::multiclass, "multiclass"},
    {ScoringTask::regression, "regression"},
    {ScoringTask::ranking, "ranking"},
}};

// Which tasks a metric is computed for.
enum class Family { classification, regression, ranking };

struct MetricRow {
  ScoringMetric metric;
  const char* name;
  Family family;
  bool higher_is_better;
};

constexpr std::array<MetricRow, 15> kMetrics{{
    {ScoringMetric::accuracy, "accuracy", Family::classification, true},
    {ScoringMetric::balanced_accuracy, "balanced_accuracy", Family::classification, true},
    {ScoringMetric::precision, "precision", Family::classification, true},
    {ScoringMetric::recall, "recall", Family::classification, true},
    {ScoringMetric::f1, "f1", Family::classification, true},
    {ScoringMetric::roc_auc, "roc_auc", Family::classification, true},
    {ScoringMetric::pr_auc, "pr_auc", Family::classification, true},
    {ScoringMetric::log_loss, "log_loss", Family::classification, false},
    {ScoringMetric::brier, "brier", Family::classification, false},
    {ScoringMetric::rmse, "rmse", Family::regression, false},
    {ScoringMetric::mae, "mae", Family::regression, false},
    {ScoringMetric::r2, "r2", Family::regression, true},
    {ScoringMetric::ndcg_at_k, "ndcg@k", Family::ranking, true},
    {ScoringMetric::mrr, "mrr", Family::ranking, true},
    {ScoringMetric::precision_at_k, "precision@k", Family::ranking, true},
}};

const MetricRow& row_of(ScoringMetric metric) {
  for (const auto& row : kMetrics) {
    if (row.metric == metric)
      return row;
  }
  return kMetrics.front();  // unreachable: every enumerator has a row
}

Family family_of(ScoringTask task) {
  switch (task) {
    case ScoringTask::binary:
    case ScoringTask::multiclass:
      return Family::classification;
    case ScoringTask::regression:
      return Family::regression;
    case ScoringTask::ranking:
      return Family::ranking;
  }
  return Family::classification;
}

}  // namespace

const char* to_string(ScoringTask task) {
  for (const auto& [t, name] : kTasks) {
    if (t == task)
      return name;
  }
  return "unknown";
}

std::optional<ScoringTask> parse_scoring_task(std::string_view text) {
  for (const auto& [t, name] : kTasks) {
    if (text == name)
      return t;
  }
  return std::nullopt;
}

const char* to_string(ScoringMetric metric) {
  return row_of(metric).name;
}

std::optional<ScoringMetric> parse_scoring_metric(std::string_view text) {
  for (const auto& row : kMetrics) {
    if (text == row.name)
      return row.metric;
  }
  return std::nullopt;
}

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
  for (const auto& row : kMetrics) {
    if (row.family == family_of(task))
      metrics.push_back(row.metric);
  }
  return metrics;
}

}  // namespace reverify
