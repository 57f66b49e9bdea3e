// Manifest v1 validation: one pass over the DOM that fills the typed model and collects every
// problem. Field expectations are phrased once each, so an error reads "must be <expectation>,
// got <value>" and a missing field "required field is missing (must be <expectation>)".

#include "core/manifest_parse.hpp"

#include <algorithm>
#include <array>
#include <initializer_list>

#include "core/manifest_fields.hpp"
#include "core/manifest_path.hpp"
#include "core/manifest_strict_json.hpp"
#include "core/names.hpp"
#include "core/statistic.hpp"
#include "core/subsample_rule.hpp"

namespace reverify {
namespace {
using namespace manifest_fields;

constexpr std::string_view kSha256 = "64 lowercase hex characters (sha256)";
constexpr std::string_view kCommit = "40 lowercase hex characters (git commit)";
constexpr std::string_view kName = "a name matching [A-Za-z0-9][A-Za-z0-9._-]{0,127}";
constexpr std::string_view kImage = "referenced by digest (name@sha256:<64 hex>)";
constexpr std::string_view kLevel = "one of rerunnable, equivalent, bitwise";
constexpr std::string_view kSnapshotKind = "one of files, iceberg, delta, hudi, lakefs, dvc";
constexpr std::string_view kTimestamp = "an RFC 3339 timestamp (2026-11-02T03:00:00Z)";

template <class T>
void assign(std::optional<T>& target, std::optional<T> value) {
  if (value)
    target = std::move(value);
}

// Runs `read` on the object at `key` when present; the object's unknown keys are warned about.
template <class Read>
auto read_section(ObjectReader& parent, std::string_view key, Read read)
    -> std::optional<decltype(read(std::declval<ObjectReader&>()))> {
  const json* value = parent.optional(key);
  if (!value || !is_object(parent.findings(), *value, parent.path(key)))
    return std::nullopt;
  ObjectReader reader(parent.findings(), *value, parent.path(key));
  auto result = read(reader);
  reader.warn_unknown_keys();
  return result;
}

std::optional<std::string> optional_string(ObjectReader& r, std::string_view key) {
  const json* v = r.optional(key);
  return v ? read_string(r.findings(), *v, r.path(key)) : std::nullopt;
}

std::optional<std::string> required_string(ObjectReader& r, std::string_view key) {
  const json* v = r.required(key, "a non-empty string");
  return v ? read_string(r.findings(), *v, r.path(key)) : std::nullopt;
}

std::optional<std::string> optional_sha256(ObjectReader& r, std::string_view key) {
  const json* v = r.optional(key);
  return v ? read_hex(r.findings(), *v, r.path(key), 64, kSha256) : std::nullopt;
}

std::optional<bool> optional_bool(ObjectReader& r, std::string_view key) {
  const json* v = r.optional(key);
  return v ? read_bool(r.findings(), *v, r.path(key)) : std::nullopt;
}

std::optional<std::int64_t> optional_integer(ObjectReader& r, std::string_view key,
                                             std::int64_t minimum, std::string_view expected) {
  const json* v = r.optional(key);
  return v ? read_integer(r.findings(), *v, r.path(key), minimum, expected) : std::nullopt;
}

template <class Predicate>
std::optional<std::string> string_matching(ObjectReader& r, const json* v, std::string_view key,
                                           std::string_view expected, Predicate ok) {
  if (!v)
    return std::nullopt;
  if (!v->is_string() || !ok(v->get_ref<const std::string&>())) {
    r.findings().mismatch(r.path(key), expected, *v);
    return std::nullopt;
  }
  return v->get<std::string>();
}

// Reads an object whose values all have the same shape, e.g. seeds or env.
template <class T, class ReadValue>
std::map<std::string, T> read_map(Findings& f, const json& object, const std::string& path,
                                  ReadValue read_value) {
  std::map<std::string, T> out;
  if (!is_object(f, object, path))
    return out;
  for (const auto& [key, value] : object.items()) {
    const std::string at = json_path_key(path, key);
    if (key.empty()) {
      f.error(at, "must be a non-empty key");
      continue;
    }
    if (auto v = read_value(value, at))
      out.emplace(key, std::move(*v));
  }
  return out;
}

template <class T, class ReadValue>
std::map<std::string, T> optional_map(ObjectReader& r, std::string_view key, ReadValue read_value) {
  const json* v = r.optional(key);
  return v ? read_map<T>(r.findings(), *v, r.path(key), read_value) : std::map<std::string, T>{};
}

bool is_digest_reference(std::string_view image) {
  return parse_digest_reference(image).has_value();
}

bool all_digits(std::string_view text) {
  for (char c : text) {
    if (c < '0' || c > '9')
      return false;
  }
  return true;
}

// Whether `name` names a parity check (policies/own_scores.hpp): "parity:<statistic>", optionally
// scoped to a segment; the per-class ones are made for the whole eval set only.
bool is_parity_check(std::string_view name) {
  auto consume = [&name](std::string_view prefix) {
    if (!name.starts_with(prefix))
      return false;
    name.remove_prefix(prefix.size());
    return true;
  };
  auto is_class = [](std::string_view c) { return !c.empty() && all_digits(c); };
  if (!consume("parity:"))
    return false;
  if (const auto scope = name.find(":segment:"); scope != std::string_view::npos) {
    const std::string_view segment = name.substr(scope + 9);
    const auto eq = segment.find('=');
    if (eq == std::string_view::npos || eq == 0 || eq + 1 == segment.size())
      return false;
    name = name.substr(0, scope);
    if (name.find(":class=") != std::string_view::npos || name.starts_with("class="))
      return false;
  }
  if (name == "argmax" || name == "top-k-set" || name == "top-k-order" || name == "tau-distance")
    return true;
  if (consume("class="))
    return is_class(name);
  if (!consume("threshold="))
    return false;
  const auto cls = name.find(":class=");
  if (cls != std::string_view::npos && !is_class(name.substr(cls + 7)))
    return false;
  return cls != 0 && !name.empty();
}

int number_at(std::string_view text, std::size_t pos, std::size_t length) {
  int n = 0;
  for (std::size_t i = pos; i < pos + length; ++i)
    n = n * 10 + (text[i] - '0');
  return n;
}

// RFC 3339 date-time: 2026-11-02T03:00:00Z, optional fraction, Z or +hh:mm / -hh:mm.
bool is_rfc3339(std::string_view t) {
  if (t.size() < 20 || t[4] != '-' || t[7] != '-' || (t[10] != 'T' && t[10] != 't') ||
      t[13] != ':' || t[16] != ':') {
    return false;
  }
  for (std::size_t pos : {0, 5, 8, 11, 14, 17}) {
    if (!all_digits(t.substr(pos, pos == 0 ? 4 : 2)))
      return false;
  }
  const int month = number_at(t, 5, 2), day = number_at(t, 8, 2);
  if (month < 1 || month > 12 || day < 1 || day > 31 || number_at(t, 11, 2) > 23 ||
      number_at(t, 14, 2) > 59 || number_at(t, 17, 2) > 60) {
    return false;
  }
  std::string_view rest = t.substr(19);
  if (rest.front() == '.') {
    std::size_t digits = 1;
    while (digits < rest.size() && rest[digits] >= '0' && rest[digits] <= '9')
      ++digits;
    if (digits == 1)
      return false;
    rest = rest.substr(digits);
  }
  if (rest == "Z" || rest == "z")
    return true;
  return rest.size() == 6 && (rest[0] == '+' || rest[0] == '-') && all_digits(rest.substr(1, 2)) &&
         rest[3] == ':' && all_digits(rest.substr(4, 2)) && number_at(rest, 1, 2) <= 23 &&
         number_at(rest, 4, 2) <= 59;
}

CodeInfo read_code(ObjectReader& r) {
  CodeInfo code;
  code.repo = optional_string(r, "repo");
  if (const json* v = r.required("commit", kCommit)) {
    code.commit = read_hex(r.findings(), *v, r.path("commit"), 40, kCommit).value_or("");
  }
  code.dirty = optional_bool(r, "dirty").value_or(false);
  code.diff_sha256 = optional_sha256(r, "diff_sha256");
  return code;
}

Environment read_environment(ObjectReader& r) {
  Environment env;
  env.image = string_matching(r, r.optional("image"), "image", kImage, is_digest_reference);
  env.lockfile = read_section(r, "lockfile", [](ObjectReader& l) {
    return Lockfile{required_string(l, "path").value_or(""), optional_sha256(l, "sha256")};
  });
  env.python = optional_string(r, "python");
  env.framework = read_section(r, "framework", [](ObjectReader& fw) {
    return Framework{required_string(fw, "name").value_or(""),
                     required_string(fw, "version").value_or("")};
  });
  env.accelerator = read_section(r, "accelerator", [](ObjectReader& a) {
    Accelerator acc;
    acc.model = required_string(a, "model").value_or("");
    acc.count = optional_integer(a, "count", 0, "a non-negative integer").value_or(0);
    acc.driver = optional_string(a, "driver");
    acc.cuda = optional_string(a, "cuda");
    acc.cudnn = optional_string(a, "cudnn");
    return acc;
  });
  Findings& f = r.findings();
  env.env = optional_map<std::string>(r, "env", [&f](const json& v, const std::string& at) {
    // Values reach a process environment: a NUL byte would silently truncate them.
    if (!v.is_string() || v.get_ref<const std::string&>().find('\0') != std::string::npos) {
      f.mismatch(at, "a string without NUL bytes", v);
      return std::optional<std::string>();
    }
    return std::optional<std::string>(v.get<std::string>());
  });
  for (const auto& [name, value] : env.env) {
    if (name.find_first_of(std::string_view("=\0", 2)) != std::string::npos) {
      f.error(json_path_key(r.path("env"), name), "variable names must not contain '=' or NUL");
    }
  }
  env.determinism = read_section(r, "determinism", [](ObjectReader& d) {
    return Determinism{optional_bool(d, "deterministic_algorithms"),
                       optional_bool(d, "cudnn_benchmark"), optional_bool(d, "tf32"),
                       optional_bool(d, "cudnn_deterministic")};
  });
  env.threads = read_section(r, "threads", [](ObjectReader& t) {
    constexpr std::string_view kCount = "an integer >= 1";
    return Threads{optional_integer(t, "intra_op", 1, kCount),
                   optional_integer(t, "inter_op", 1, kCount),
                   optional_integer(t, "dataloader_workers", 0, "a non-negative integer")};
  });
  env.world_size = optional_integer(r, "world_size", 1, "an integer >= 1");
  return env;
}

Snapshot read_snapshot(ObjectReader& r) {
  Snapshot s;
  std::optional<SnapshotKind> kind;
  if (const json* value = r.required("kind", kSnapshotKind)) {
    if (auto text = string_matching(r, value, "kind", kSnapshotKind, [](const std::string& k) {
          return enum_from_string<SnapshotKind>(k).has_value();
        })) {
      kind = enum_from_string<SnapshotKind>(*text);
    }
  }
  s.kind = kind.value_or(SnapshotKind::files);
  s.uri = required_string(r, "uri").value_or("");
  s.sha256 = optional_sha256(r, "sha256");
  s.id = optional_string(r, "id");
  if (kind == SnapshotKind::files && !s.sha256 && !r.object().contains("sha256")) {
    r.findings().error(r.path("sha256"), "required field is missing for kind \"files\" (must be " +
                                             std::string(kSha256) +
                                             ", the root hash of the file manifest)");
  }
  return s;
}

Data read_data(ObjectReader& r) {
  Data data;
  data.snapshot = read_section(r, "snapshot", read_snapshot);
  data.split = read_section(r, "split", [](ObjectReader& s) {
    return Split{required_string(s, "rule").value_or(""), optional_string(s, "salt")};
  });
  data.labels = read_section(r, "labels", [](ObjectReader& l) {
    return Labels{optional_string(l, "version"), optional_string(l, "guidance_rev")};
  });
  return data;
}

std::optional<double> optional_seconds(ObjectReader& r, std::string_view key) {
  const json* v = r.optional(key);
  if (!v)
    return std::nullopt;
  auto seconds = read_number(r.findings(), *v, r.path(key), "a non-negative number");
  if (seconds && *seconds < 0) {
    r.findings().mismatch(r.path(key), "a non-negative number", *v);
    return std::nullopt;
  }
  return seconds;
}

Run read_run(ObjectReader& r) {
  Run run;
  constexpr std::string_view kArgv = "a non-empty array of strings (argv, never a shell string)";
  if (const json* argv = r.required("entrypoint", kArgv)) {
    const std::string path = r.path("entrypoint");
    if (!argv->is_array() || argv->empty()) {
      r.findings().mismatch(path, kArgv, *argv);
    } else {
      for (std::size_t i = 0; i < argv->size(); ++i) {
        const json& arg = (*argv)[i];
        const bool ok =
            arg.is_string() && arg.get_ref<const std::string&>().find('\0') == std::string::npos;
        if (!ok || (i == 0 && arg.get_ref<const std::string&>().empty())) {
          r.findings().mismatch(
              json_path_index(path, i),
              i == 0 ? "a non-empty string (the program)" : "a string without NUL bytes", arg);
        } else {
          run.entrypoint.push_back(arg.get<std::string>());
        }
      }
    }
  }
  run.workdir = optional_string(r, "workdir");
  run.started_at = string_matching(r, r.optional("started_at"), "started_at", kTimestamp,
                                   [](const std::string& t) { return is_rfc3339(t); });
  run.duration_s = optional_seconds(r, "duration_s");
  run.runner = optional_string(r, "runner");
  run.source_date_epoch =
      optional_integer(r, "source_date_epoch", 0, "a non-negative integer (seconds since 1970)");
  return run;
}

std::optional<FileRef> read_file_ref(ObjectReader& parent, std::string_view key) {
  return read_section(parent, key, [](ObjectReader& r) {
    return FileRef{required_string(r, "uri").value_or(""), optional_sha256(r, "sha256")};
  });
}

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

// Reads one segment's metrics ({"accuracy": 0.95, ...}: metric -> number), for optional_map.
auto metric_values(Findings& f) {
  return [&f](const json& v, const std::string& at) {
    return std::optional(read_map<double>(
        f, v, at, [&f](const json& n, const std::string& p) { return read_number(f, n, p); }));
  };
}

Evaluation read_evaluation(ObjectReader& r) {
  Evaluation e;
  e.set = read_file_ref(r, "set");
  constexpr std::string_view kPrimary = "an object {\"name\", \"value\", \"higher_is_better\"}";
  if (const json* p = r.required("primary", kPrimary)) {
    if (is_object(r.findings(), *p, r.path("primary"))) {
      ObjectReader pr(r.findings(), *p, r.path("primary"));
      e.primary.name = required_string(pr, "name").value_or("");
      if (const json* v = pr.required("value", "a number")) {
        e.primary.value = read_number(r.findings(), *v, pr.path("value")).value_or(0);
      }
      e.primary.higher_is_better = optional_bool(pr, "higher_is_better").value_or(true);
      e.primary.examples = optional_integer(pr, "examples", 1, "a positive integer");
      pr.warn_unknown_keys();
    }
  }
  Findings& f = r.findings();
  e.segments = optional_map<std::map<std::string, double>>(r, "segments", metric_values(f));
  e.segment_examples =
      optional_map<std::int64_t>(r, "segment_examples", [&f](const json& v, const std::string& at) {
        return read_integer(f, v, at, 1, "a positive integer");
      });
  e.predictions = read_file_ref(r, "predictions");
  e.steps = read_section(r, "steps", [](ObjectReader& s) {
    StepValues steps;
    steps.metric = required_string(s, "metric").value_or("");
    if (const json* v = s.required("values", "an array of numbers")) {
      steps.values =
          read_numbers(s.findings(), *v, s.path("values")).value_or(std::vector<double>{});
    }
    return steps;
  });
  const bool eval_set_recorded = e.set.has_value();
  e.scoring = read_section(r, "scoring", [eval_set_recorded](ObjectReader& s) {
    return read_scoring(s, eval_set_recorded);
  });
  return e;
}

Weights read_weights(ObjectReader& r) {
  Weights w;
  w.uri = required_string(r, "uri").value_or("");
  w.format = optional_string(r, "format").value_or("safetensors");
  w.tensor_sha256 = optional_sha256(r, "tensor_sha256");
  return w;
}

// The "tolerance" section maps onto ToleranceSpec; every key is optional:
//   "tolerance": {
//     "seed_runs": {"accuracy": [0.9605, 0.9622, ...]},       metric -> its value in each seed run
//     "segment_seed_runs": {"digit=8": {"accuracy": [...]}},  segment -> metric -> values
//     "seed_overrides": [1, 2, ...],                          each seed run's seed override
//     "distribution_seed_runs": {"ks": [...], "psi": [...]},  statistic -> its value between the
//                                 release's predictions and each seed run's (ks, psi, wasserstein,
//                                 max_abs_diff, mean_abs_diff, flip_rate)
//     "parity_seed_runs": {"parity:threshold=0.5": [...]},   parity check -> the share of its
//                                 scope's records whose decision differs from the release's in
//                                 each seed run (keys start with "parity:threshold=")
//     "steps_same_seed_runs": [[2.30, 2.11, ...], ...],       same-seed reruns' step values
//     "same_seed_scores": [{"predictions_sha256": "<64 hex>",  same-seed reruns' predictions:
//                           "primary": 0.97,                    their values' hash (required),
//                           "segments": {"digit=3":             the primary metric and segment
//                                        {"accuracy": 0.95}}}], metrics reverify scored
//     "floor": {"accuracy": 0.0005},                          metric -> smallest band (>= 0)
//     "detect": {"accuracy": 0.01}                            check key -> shift to catch (> 0)
//   }
// Keys of earlier releases (distribution_pairs, steps_pairs_max_abs: statistics between pairs
// of different-seed runs) are warned about and dropped: they cannot give an honest band.
ToleranceSpec read_tolerance(ObjectReader& r) {
  ToleranceSpec t;
  Findings& f = r.findings();
  auto runs = [&f](const json& v, const std::string& at) { return read_numbers(f, v, at); };
  t.seed_runs = optional_map<std::vector<double>>(r, "seed_runs", runs);
  t.segment_seed_runs = optional_map<std::map<std::string, std::vector<double>>>(
      r, "segment_seed_runs", [&f, &runs](const json& v, const std::string& at) {
        return std::optional(read_map<std::vector<double>>(f, v, at, runs));
      });
  if (const json* v = r.optional("seed_overrides")) {
    const std::string at = r.path("seed_overrides");
    if (!v->is_array()) {
      f.mismatch(at, "an array of integers", *v);
    } else {
      for (std::size_t i = 0; i < v->size(); ++i) {
        if (auto seed = read_integer(f, (*v)[i], at + "[" + std::to_string(i) + "]",
                                     std::numeric_limits<std::int64_t>::min(), "an integer"))
          t.seed_overrides.push_back(*seed);
      }
    }
  }
  t.distribution_seed_runs = optional_map<std::vector<double>>(
      r, "distribution_seed_runs",
      [&f, &runs](const json& v, const std::string& at) { return runs(v, at); });
  for (const auto& [stat, values] : t.distribution_seed_runs) {
    if (!enum_from_string<Statistic>(stat)) {
      f.error(json_path_key(r.path("distribution_seed_runs"), stat),
              "unknown statistic (must be one of " + enum_names<Statistic>() + ")");
    }
  }
  t.parity_seed_runs = optional_map<std::vector<double>>(
      r, "parity_seed_runs",
      [&f, &runs](const json& v, const std::string& at) { return runs(v, at); });
  for (const auto& [check, values] : t.parity_seed_runs) {
    if (!is_parity_check(check)) {
      f.error(json_path_key(r.path("parity_seed_runs"), check),
              "not a parity check (expected \"parity:<statistic>\" or "
              "\"parity:<statistic>:segment:<key>=<value>\", the statistic one of "
              "threshold=<t>, threshold=<t>:class=<c>, argmax, class=<c>, top-k-set, "
              "top-k-order, tau-distance)");
    }
  }
  if (const json* v = r.optional("steps_same_seed_runs")) {
    const std::string at = r.path("steps_same_seed_runs");
    if (!v->is_array()) {
      f.mismatch(at, "an array of arrays of numbers", *v);
    } else {
      for (std::size_t i = 0; i < v->size(); ++i) {
        if (auto values = read_numbers(f, (*v)[i], at + "[" + std::to_string(i) + "]"))
          t.steps_same_seed_runs.push_back(std::move(*values));
      }
    }
  }
  if (const json* v = r.optional("same_seed_scores")) {
    const std::string at = r.path("same_seed_scores");
    if (!v->is_array()) {
      f.mismatch(at, "an array of objects (one per same-seed rerun)", *v);
    } else {
      for (std::size_t i = 0; i < v->size(); ++i) {
        const std::string run_at = at + "[" + std::to_string(i) + "]";
        if (!is_object(f, (*v)[i], run_at))
          continue;
        ObjectReader run(f, (*v)[i], run_at);
        SameSeedScore score;
        if (const json* sha = run.required("predictions_sha256", kSha256)) {
          score.predictions_sha256 =
              read_hex(f, *sha, run.path("predictions_sha256"), 64, kSha256).value_or("");
        }
        if (const json* primary = run.optional("primary"))
          score.primary = read_number(f, *primary, run.path("primary"));
        score.segments =
            optional_map<std::map<std::string, double>>(run, "segments", metric_values(f));
        run.warn_unknown_keys();
        t.same_seed_scores.push_back(std::move(score));
      }
    }
  }
  auto bounded_below = [&f](std::string_view expected, bool strict) {
    return [&f, expected, strict](const json& v, const std::string& at) {
      auto n = read_number(f, v, at, expected);
      if (n && (strict ? *n <= 0 : *n < 0)) {
        f.mismatch(at, expected, v);
        return std::optional<double>();
      }
      return n;
    };
  };
  t.floor = optional_map<double>(r, "floor", bounded_below("a non-negative number", false));
  t.detect = optional_map<double>(r, "detect", bounded_below("a positive number", true));
  for (const char* legacy : {"distribution_pairs", "steps_pairs_max_abs"}) {
    if (r.optional(legacy)) {
      f.warn(r.path(legacy) +
             ": dropped: statistics between pairs of different-seed runs give no honest band "
             "(calibrate this version again: a calibration records distribution_seed_runs and "
             "steps_same_seed_runs)");
    }
  }
  return t;
}

// "subsample": {"fraction": 0.25, "salt": "...", "key": "...", "evaluation": {primary, segments,
// segment_examples, predictions}, "weights": {...}, "tolerance": {...}, "duration_s": 1.2}
SubsampleReference read_subsample(ObjectReader& r) {
  SubsampleReference s;
  Findings& f = r.findings();
  constexpr std::string_view kFraction =
      "a number in (0, 1] with at most 18 digits after the point (the share of training records)";
  if (const json* v = r.required("fraction", kFraction)) {
    auto fraction = read_number(f, *v, r.path("fraction"), kFraction);
    if (fraction && !subsample_fraction_of(*fraction).ok())
      f.mismatch(r.path("fraction"), kFraction, *v);
    else if (fraction)
      s.fraction = *fraction;
  }
  s.salt = required_string(r, "salt").value_or("");
  s.key = optional_string(r, "key");
  constexpr std::string_view kPrimary = "an object {\"primary\", \"segments\", \"predictions\"}";
  if (const json* v = r.required("evaluation", kPrimary);
      v && is_object(f, *v, r.path("evaluation"))) {
    ObjectReader e(f, *v, r.path("evaluation"));
    s.evaluation = read_evaluation(e);
    e.warn_unknown_keys();
    // One frozen eval set, one way to score it: the top level's.
    for (const char* shared : {"set", "scoring", "steps"}) {
      if (e.object().contains(shared))
        f.error(e.path(shared), "not allowed here: the top-level evaluation's applies");
    }
  }
  s.weights = read_section(r, "weights", read_weights);
  s.tolerance = read_section(r, "tolerance", read_tolerance);
  s.duration_s = optional_seconds(r, "duration_s");
  s.drawn = read_section(r, "drawn", [](ObjectReader& d) {
    SubsampleDrawn drawn;
    constexpr std::string_view kCount = "a non-negative integer";
    drawn.records = optional_integer(d, "records", 0, kCount).value_or(0);
    drawn.keys = optional_integer(d, "keys", 0, kCount).value_or(0);
    drawn.candidates = optional_integer(d, "candidates", 0, kCount);
    drawn.keys_sha256 = optional_sha256(d, "keys_sha256").value_or("");
    if (!d.object().contains("keys_sha256"))
      d.findings().error(d.path("keys_sha256"),
                         "required field is missing (must be " + std::string(kSha256) + ")");
    return drawn;
  });
  return s;
}

// Required sections whose absence is reported at their required leaf ("code.commit").
template <class Read>
auto read_required_section(ObjectReader& top, std::string_view key, std::string_view leaf,
                           std::string_view leaf_expected, Read read) {
  if (!top.object().contains(key)) {
    top.optional(key);
    top.findings().error(json_path_key(top.path(key), leaf),
                         "required field is missing (must be " + std::string(leaf_expected) + ")");
  }
  return read_section(top, key, read);
}

void read_identity(ObjectReader& top, Manifest& m) {
  auto name = [&top](std::string_view key) {
    const json* v = top.required(key, kName);
    return string_matching(top, v, key, kName,
                           [](const std::string& n) { return is_valid_name(n); })
        .value_or("");
  };
  m.model = name("model");
  m.version = name("version");
  m.owner = required_string(top, "owner").value_or("");
  if (const json* v = top.required("level", kLevel)) {
    auto level = string_matching(top, v, "level", kLevel, [](const std::string& l) {
      return enum_from_string<ReproLevel>(l).has_value();
    });
    if (level)
      m.level = *enum_from_string<ReproLevel>(*level);
  }
}

void read_manifest(ObjectReader& top, Manifest& m) {
  read_identity(top, m);
  if (auto code = read_required_section(top, "code", "commit", kCommit, read_code))
    m.code = *code;
  m.environment = read_section(top, "environment", read_environment);
  m.data = read_section(top, "data", read_data);
  if (const json* config = top.optional("config")) {
    if (is_object(top.findings(), *config, "config"))
      m.config = *config;
  }
  Findings& f = top.findings();
  m.seeds = optional_map<std::int64_t>(top, "seeds", [&f](const json& v, const std::string& at) {
    return read_integer(f, v, at, std::numeric_limits<std::int64_t>::min(), "an integer");
  });
  constexpr std::string_view kArgv = "a non-empty array of strings (argv, never a shell string)";
  if (auto run = read_required_section(top, "run", "entrypoint", kArgv, read_run))
    m.run = *run;
  constexpr std::string_view kPrimary = "an object {\"name\", \"value\", \"higher_is_better\"}";
  if (auto evaluation =
          read_required_section(top, "evaluation", "primary", kPrimary, read_evaluation)) {
    m.evaluation = *evaluation;
  }
  m.weights = read_section(top, "weights", read_weights);
  m.tolerance = read_section(top, "tolerance", read_tolerance);
  m.subsample = read_section(top, "subsample", read_subsample);
  // The same metric on both models, or a subsample verdict would judge another one.
  if (m.subsample && !m.evaluation.primary.name.empty() &&
      m.subsample->evaluation.primary.name != m.evaluation.primary.name) {
    f.error("subsample.evaluation.primary.name", "must be the top-level primary metric \"" +
                                                     m.evaluation.primary.name + "\", got \"" +
                                                     m.subsample->evaluation.primary.name + "\"");
  }
}
}  // namespace

std::string ValidationError::to_string() const {
  return path.empty() ? message : path + ": " + message;
}

EnvironmentParse parse_environment(const nlohmann::json& value, const std::string& path) {
  EnvironmentParse out;
  Findings findings;
  if (is_object(findings, value, path)) {
    ObjectReader reader(findings, value, path);
    Environment environment = read_environment(reader);
    reader.warn_unknown_keys();
    if (findings.errors().empty())
      out.environment = std::move(environment);
  }
  out.errors = std::move(findings.errors());
  out.warnings = std::move(findings.warnings());
  return out;
}

ManifestParse parse_manifest(std::string_view document, const ManifestLimits& limits) {
  ManifestParse out;
  StrictJson dom = parse_strict_json(document, limits);
  if (dom.error) {
    out.errors.push_back(std::move(*dom.error));
    return out;
  }
  Findings findings;
  if (!dom.value.is_object()) {
    findings.mismatch("", "a JSON object (a reverify.manifest/v1 document)", dom.value);
    out.errors = std::move(findings.errors());
    return out;
  }
  ObjectReader top(findings, dom.value, "");
  // Another schema means other fields: its v1 errors would only be noise.
  if (const json* schema = top.required("schema", "\"reverify.manifest/v1\"")) {
    if (*schema != kManifestSchemaV1) {
      findings.mismatch("schema", "\"reverify.manifest/v1\" (the only schema this reverify reads)",
                        *schema);
      out.errors = std::move(findings.errors());
      return out;
    }
  }
  Manifest manifest;
  read_manifest(top, manifest);
  for (const std::string& key : top.unknown_keys()) {
    manifest.extra.emplace(key, dom.value.at(key));
    findings.warn(json_path_key("", key) + ": unknown top-level field, kept as is (not part of " +
                  std::string(kManifestSchemaV1) + ")");
  }
  out.errors = std::move(findings.errors());
  out.warnings = std::move(findings.warnings());
  if (out.errors.empty())
    out.manifest = std::move(manifest);
  return out;
}

}  // namespace reverify
