// Manifest validation: evaluation.scoring, the spec reverify scores predictions with.
#include <algorithm>
#include <array>
#include <initializer_list>

#include "core/manifest_fields.hpp"
#include "core/manifest_path.hpp"
#include "core/names.hpp"
#include "core/statistic.hpp"

namespace reverify::manifest_fields {
namespace {

// evaluation.scoring (docs/job-guide.md "Scoring spec"), every key but task and labels optional:
//   "scoring": {"task": "multiclass", "labels": {"column": "label"}, "classes": 10,
//               "metrics": ["accuracy", "f1"], "segments": [{"column": "label", "name": "digit"}],
//               "thresholds": [0.5], "k": 10, "query": {"uri": "qid.csv", "sha256": "..."}}
// The rules that tie fields to the task (classes, thresholds, k, query, each metric) are checked
// once the task is known; a column of the eval set needs evaluation.set.
constexpr std::string_view kRecordColumn =
    "an object naming a column of the eval set ({\"column\": NAME}) or a file ({\"uri\", "
    "\"sha256\"} and, for a CSV with a header row, \"column\")";

RecordColumn read_record_fields(ObjectReader& r, bool eval_set_recorded) {
  RecordColumn c;
  c.uri = optional_string(r, "uri");
  c.sha256 = optional_sha256(r, "sha256");
  c.column = optional_string(r, "column");
  const json& object = r.object();
  if (!object.contains("uri") && !object.contains("column")) {
    r.findings().error(r.path(),
                       "must name a column of the eval set ({\"column\": NAME}) or a "
                       "file ({\"uri\", \"sha256\"})");
  } else if (object.contains("uri") && !object.contains("sha256")) {
    r.findings().error(r.path("sha256"), "required field is missing with \"uri\" (must be " +
                                             std::string(kSha256) + " of the file)");
  } else if (!object.contains("uri") && !eval_set_recorded) {
    r.findings().error(r.path("column"),
                       "names a column of the eval set, but evaluation.set is missing (record "
                       "the eval set, or give the file's \"uri\" and \"sha256\")");
  }
  return c;
}

std::optional<RecordColumn> read_record_column(ObjectReader& parent, std::string_view key,
                                               bool eval_set_recorded) {
  return read_section(parent, key, [eval_set_recorded](ObjectReader& r) {
    return read_record_fields(r, eval_set_recorded);
  });
}

std::string metric_names(ScoringTask task) {
  std::string names;
  for (ScoringMetric metric : task_metrics(task))
    names += (names.empty() ? "" : ", ") + std::string(to_string(metric));
  return names;
}

void read_scoring_metrics(ObjectReader& r, std::optional<ScoringTask> task, ScoringSpec& spec) {
  const json* v = r.optional("metrics");
  if (!v)
    return;
  constexpr std::string_view kArray = "a non-empty array of metric names";
  const std::string at = r.path("metrics");
  if (!v->is_array() || v->empty()) {
    r.findings().mismatch(at, kArray, *v);
    return;
  }
  const std::string expected =
      task ? "a metric of task " + std::string(to_string(*task)) + ": one of " + metric_names(*task)
           : "a metric name";
  for (std::size_t i = 0; i < v->size(); ++i) {
    const json& name = (*v)[i];
    const auto metric = name.is_string()
                            ? enum_from_string<ScoringMetric>(name.get_ref<const std::string&>())
                            : std::nullopt;
    if (!metric || (task && !metric_applies(*metric, *task))) {
      r.findings().mismatch(json_path_index(at, i), expected, name);
    } else if (std::find(spec.metrics.begin(), spec.metrics.end(), *metric) != spec.metrics.end()) {
      r.findings().error(json_path_index(at, i), "duplicate metric " + describe(name));
    } else {
      spec.metrics.push_back(*metric);
    }
  }
}

void read_scoring_segments(ObjectReader& r, bool eval_set_recorded, ScoringSpec& spec) {
  const json* v = r.optional("segments");
  if (!v)
    return;
  const std::string at = r.path("segments");
  if (!v->is_array()) {
    r.findings().mismatch(at, "an array of segment keys", *v);
    return;
  }
  std::map<std::string, std::size_t> first_with;
  for (std::size_t i = 0; i < v->size(); ++i) {
    const std::string key_at = json_path_index(at, i);
    if (!is_object(r.findings(), (*v)[i], key_at))
      continue;
    ObjectReader k(r.findings(), (*v)[i], key_at);
    SegmentKeySpec key;
    key.values = read_record_fields(k, eval_set_recorded);
    const json* name = k.optional("name");
    if (name) {
      key.name = string_matching(k, name, "name", kName, [](const std::string& n) {
                   return is_valid_name(n);
                 }).value_or("");
    } else {
      key.name = default_segment_key_name(key.values);
      if (!key.name.empty() && !is_valid_name(key.name)) {
        r.findings().error(k.path("name"), "required field is missing: the default, " +
                                               describe(key.name) + ", is not " +
                                               std::string(kName));
        key.name.clear();
      }
    }
    k.warn_unknown_keys();
    if (key.name.empty())
      continue;
    if (auto [it, fresh] = first_with.emplace(key.name, i); !fresh) {
      r.findings().error(k.path("name"), "duplicate segment key name " + describe(key.name) + " (" +
                                             json_path_index(at, it->second) + " has it)");
    }
    spec.segments.push_back(std::move(key));
  }
}

// Fields that only some tasks take: required for `needed_by`, refused for tasks not in `taken_by`.
void check_task_field(ObjectReader& r, std::string_view key, ScoringTask task,
                      std::initializer_list<ScoringTask> taken_by,
                      std::optional<ScoringTask> needed_by, std::string_view expected) {
  const bool present = r.object().contains(key) && !r.object().at(key).is_null();
  const bool taken = std::find(taken_by.begin(), taken_by.end(), task) != taken_by.end();
  if (!present && needed_by == task) {
    r.findings().error(r.path(key), "required field is missing for task " +
                                        std::string(to_string(task)) + " (must be " +
                                        std::string(expected) + ")");
  } else if (present && !taken) {
    std::string tasks;
    for (ScoringTask t : taken_by)
      tasks += (tasks.empty() ? "" : " and ") + std::string(to_string(t));
    r.findings().error(r.path(key), "not taken by task " + std::string(to_string(task)) +
                                        " (only by " + tasks + ")");
  }
}

}  // namespace

ScoringSpec read_scoring(ObjectReader& r, bool eval_set_recorded) {
  ScoringSpec spec;
  const std::string task_expected = "one of " + enum_names<ScoringTask>();
  std::optional<ScoringTask> task;
  if (const json* v = r.required("task", task_expected)) {
    if (auto text = string_matching(r, v, "task", task_expected, [](const std::string& t) {
          return enum_from_string<ScoringTask>(t).has_value();
        })) {
      task = enum_from_string<ScoringTask>(*text);
    }
  }
  spec.task = task.value_or(ScoringTask::binary);
  if (const json* v = r.required("labels", kRecordColumn)) {
    if (is_object(r.findings(), *v, r.path("labels"))) {
      ObjectReader labels(r.findings(), *v, r.path("labels"));
      spec.labels = read_record_fields(labels, eval_set_recorded);
      labels.warn_unknown_keys();
    }
  }
  constexpr std::string_view kClasses = "an integer >= 2 (the number of classes)";
  spec.classes = optional_integer(r, "classes", 2, kClasses);
  read_scoring_metrics(r, task, spec);
  read_scoring_segments(r, eval_set_recorded, spec);
  if (const json* v = r.optional("thresholds")) {
    const std::string at = r.path("thresholds");
    if (!v->is_array() || v->empty()) {
      r.findings().mismatch(at, "a non-empty array of numbers", *v);
    } else if (auto values = read_numbers(r.findings(), *v, at)) {
      for (std::size_t i = 0; i < values->size(); ++i) {
        if (std::find(values->begin(), values->begin() + i, (*values)[i]) != values->begin() + i)
          r.findings().error(json_path_index(at, i), "duplicate threshold " + describe((*v)[i]));
      }
      spec.thresholds = std::move(*values);
    }
  }
  constexpr std::string_view kK = "an integer >= 1 (the cut-off of ndcg@k and precision@k)";
  spec.k = optional_integer(r, "k", 1, kK);
  spec.query = read_record_column(r, "query", eval_set_recorded);
  if (task) {
    using enum ScoringTask;
    check_task_field(r, "classes", *task, {binary, multiclass}, multiclass, kClasses);
    check_task_field(r, "thresholds", *task, {binary, regression}, std::nullopt, "");
    check_task_field(r, "k", *task, {ranking}, ranking, kK);
    check_task_field(r, "query", *task, {ranking}, ranking, kRecordColumn);
    if (*task == binary && spec.classes && *spec.classes != 2) {
      r.findings().mismatch(r.path("classes"), "2 for task binary (labels are 0 and 1)",
                            r.object().at("classes"));
    }
  }
  return spec;
}

}  // namespace reverify::manifest_fields
