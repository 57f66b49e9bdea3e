// What the scoring spec's name tables (core/manifest.hpp) say about a metric, how jobs may spell
// its name, and the default name of a segment key.

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <utility>

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

bool has_cutoff(ScoringMetric metric) {
  return metric == ScoringMetric::ndcg_at_k || metric == ScoringMetric::precision_at_k;
}

// The part of a name before its '@' ("ndcg" of "ndcg@k").
std::string_view base_of(std::string_view name) {
  return name.substr(0, name.find('@'));
}

// Other names for a metric's base name (after lower case, '_' for '-' and ' ', no "_score").
constexpr std::pair<std::string_view, std::string_view> kSynonyms[] = {
    {"acc", "accuracy"},
    {"balanced_acc", "balanced_accuracy"},
    {"p", "precision"},
    {"prec", "precision"},
    {"f1_measure", "f1"},
    {"auc", "roc_auc"},
    {"auroc", "roc_auc"},
    {"rocauc", "roc_auc"},
    {"ap", "pr_auc"},
    {"auprc", "pr_auc"},
    {"prauc", "pr_auc"},
    {"average_precision", "pr_auc"},
    {"logloss", "log_loss"},
    {"cross_entropy", "log_loss"},
    {"brier_loss", "brier"},
    {"root_mean_squared_error", "rmse"},
    {"mean_absolute_error", "mae"},
    {"mean_reciprocal_rank", "mrr"},
};

// A written name split into its base, in the table's spelling when it has one, and what follows
// its '@' (or "_at_"): "NDCG_at_10" -> {"ndcg", "10"}.
std::pair<std::string, std::string> normalized(std::string_view name) {
  std::string text;
  for (char c : name) {
    const auto u = static_cast<unsigned char>(c);
    text += c == '-' || c == ' ' ? '_' : static_cast<char>(std::tolower(u));
  }
  std::string suffix;
  if (const auto at = text.find('@'); at != std::string::npos) {
    suffix = text.substr(at + 1);
    text.resize(at);
  } else if (const auto word = text.rfind("_at_"); word != std::string::npos) {
    suffix = text.substr(word + 4);
    text.resize(word);
  }
  constexpr std::string_view kScore = "_score";
  if (text.size() > kScore.size() && text.ends_with(kScore))
    text.resize(text.size() - kScore.size());
  for (const auto& [other, base] : kSynonyms) {
    if (text == other)
      text = base;
  }
  return {text, suffix};
}

bool is_whole_number(std::string_view text) {
  return !text.empty() && text.size() < 10 &&
         std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
}

}  // namespace

std::optional<std::string> metric_name_at(ScoringMetric metric, std::size_t k) {
  if (!has_cutoff(metric))
    return std::nullopt;
  return std::string(base_of(to_string(metric))) + "@" + std::to_string(k);
}

std::optional<std::string> metric_spelling_to_use(std::string_view name, const ScoringSpec& spec) {
  const auto [base, suffix] = normalized(name);
  const auto metrics = task_metrics(spec.task);
  const auto metric = std::find_if(metrics.begin(), metrics.end(),
                                   [&](ScoringMetric m) { return base_of(to_string(m)) == base; });
  if (metric == metrics.end())
    return std::nullopt;
  const std::string table = to_string(*metric);
  if (!has_cutoff(*metric)) {
    // After a metric without a cut-off: a threshold (classification), else another metric.
    if (!suffix.empty() &&
        (spec.task == ScoringTask::ranking || std::string_view(name).starts_with(table + "@")))
      return std::nullopt;
    const std::string expected = suffix.empty() ? table : table + "@" + suffix;
    return name == expected ? std::nullopt : std::optional<std::string>("name it " + expected);
  }
  const auto k = static_cast<std::size_t>(spec.k.value_or(0));
  const std::string at_k = *metric_name_at(*metric, k);
  if (suffix.empty() || name == table || (k != 0 && name == at_k))
    return std::nullopt;  // no cut-off: NDCG over the whole list is another metric
  if (is_whole_number(suffix) && std::stoul(suffix) != k) {
    return std::string(name) + " names the cut-off " + suffix + ", the scoring spec's k is " +
           std::to_string(k) + ": name it " + at_k + " (or " + table +
           "), or set evaluation.scoring.k to " + suffix;
  }
  return "name it " + at_k + " (or " + table + ")";
}

std::vector<MisspelledMetric> misspelled_metrics(const Evaluation& evaluation) {
  std::vector<MisspelledMetric> out;
  if (!evaluation.scoring)
    return out;
  auto check = [&](std::string path, const std::string& name) {
    if (auto use = metric_spelling_to_use(name, *evaluation.scoring))
      out.push_back({std::move(path), name, std::move(*use)});
  };
  check("evaluation.primary.name", evaluation.primary.name);
  for (const auto& [segment, metrics] : evaluation.segments) {
    for (const auto& [metric, value] : metrics)
      check("evaluation.segments." + segment, metric);
  }
  return out;
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
  for (const auto& row : EnumNames<ScoringMetric>::table) {
    if (row.family == family_of(task))
      metrics.push_back(row.value);
  }
  return metrics;
}

}  // namespace reverify
