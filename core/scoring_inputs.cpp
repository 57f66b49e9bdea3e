#include "core/scoring_inputs.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <unordered_map>

#include "core/predictions.hpp"

namespace reverify {
namespace {

std::optional<double> as_number(std::string_view text) {
  const auto value = parse_cell_number(text);
  return value && std::isfinite(*value) ? value : std::nullopt;
}

}  // namespace

RecordKeys intern_keys(const std::vector<std::string>& texts) {
  RecordKeys keys;
  std::unordered_map<std::string_view, std::uint32_t> seen;
  keys.codes.reserve(texts.size());
  for (const std::string& text : texts) {
    auto [it, fresh] = seen.emplace(text, static_cast<std::uint32_t>(keys.values.size()));
    if (fresh)
      keys.values.push_back(text);
    keys.codes.push_back(it->second);
  }
  // Sorted values read well in a report ("digit=2" before "digit=10"): numerically when all are
  // numbers, else bytewise; equal numbers spelled differently ("1", "1.0") stay apart.
  std::vector<std::optional<double>> numbers;
  for (const std::string& value : keys.values)
    numbers.push_back(as_number(value));
  const bool numeric = std::all_of(numbers.begin(), numbers.end(),
                                   [](const std::optional<double>& n) { return n.has_value(); });
  std::vector<std::uint32_t> order(keys.values.size());
  std::iota(order.begin(), order.end(), 0u);
  std::sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
    if (numeric && *numbers[a] != *numbers[b])
      return *numbers[a] < *numbers[b];
    return keys.values[a] < keys.values[b];
  });
  std::vector<std::uint32_t> rank(order.size());
  std::vector<std::string> sorted;
  sorted.reserve(order.size());
  for (std::uint32_t i = 0; i < order.size(); ++i) {
    rank[order[i]] = i;
    sorted.push_back(std::move(keys.values[order[i]]));
  }
  keys.values = std::move(sorted);
  for (std::uint32_t& code : keys.codes)
    code = rank[code];
  return keys;
}

ScoringInputs scoring_settings(const ScoringSpec& spec) {
  ScoringInputs in;
  in.task = spec.task;
  in.classes = spec.task == ScoringTask::binary ? 2
               : spec.task == ScoringTask::multiclass
                   ? static_cast<std::size_t>(spec.classes.value_or(0))
                   : 0;
  in.metrics = spec.metrics.empty() ? task_metrics(spec.task) : spec.metrics;
  in.thresholds = spec.thresholds;
  if (spec.task == ScoringTask::binary && in.thresholds.empty())
    in.thresholds = {0.5};
  in.k = static_cast<std::size_t>(spec.k.value_or(0));
  return in;
}

std::optional<std::string> label_violation(ScoringTask task, std::size_t classes, double label) {
  if (is_label(task, classes, label))
    return std::nullopt;
  if (!std::isfinite(label))
    return std::string("a finite number");
  switch (task) {
    case ScoringTask::binary:
      return std::string("0 or 1 (task binary)");
    case ScoringTask::multiclass:
      return "an integer in 0.." + std::to_string(classes - 1) +
             " (the declared classes: " + std::to_string(classes) + ")";
    case ScoringTask::ranking:
      return std::string("a relevance grade >= 0 (task ranking)");
    case ScoringTask::regression:
      break;
  }
  return std::string("a finite number");
}

}  // namespace reverify
