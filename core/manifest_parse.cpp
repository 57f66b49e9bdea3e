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

bool is_digest_reference(std::string_view image) {
  return parse_digest_reference(image).has_value();
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
