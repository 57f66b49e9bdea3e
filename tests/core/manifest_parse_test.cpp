// Manifest v1 validation: valid fixtures parse, and each malformed manifest gives its exact errors.

#include <doctest/doctest.h>

#include <cstdlib>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "core/manifest_parse.hpp"
#include "tests/support/manifest_fixture.hpp"

using reverify::test::manifest_fixture_text;

namespace doctest {
template <>
struct StringMaker<std::vector<std::string>> {
  static String convert(const std::vector<std::string>& lines) {
    std::string text = "[";
    for (const auto& line : lines)
      text += "\n  " + line;
    return (text + "]").c_str();
  }
};
}  // namespace doctest

using nlohmann::json;
using reverify::ManifestLimits;
using reverify::parse_manifest;

namespace {
json full() {
  return json::parse(manifest_fixture_text("valid_full.json"));
}

std::vector<std::string> error_texts_of(const std::vector<reverify::ValidationError>& errors) {
  std::vector<std::string> texts;
  for (const auto& e : errors)
    texts.push_back(e.to_string());
  return texts;
}

std::vector<std::string> error_texts(const reverify::ManifestParse& parse) {
  return error_texts_of(parse.errors);
}

void set(json& doc, const std::string& pointer, json value) {
  doc[json::json_pointer(pointer)] = std::move(value);
}

void erase(json& doc, const std::string& pointer) {
  json::json_pointer p(pointer);
  doc[p.parent_pointer()].erase(p.back());
}

const std::string kName = "a name matching [A-Za-z0-9][A-Za-z0-9._-]{0,127}";
const std::string kSha = "64 lowercase hex characters (sha256)";
const std::string kCommit = "40 lowercase hex characters (git commit)";
const std::string kArgv = "a non-empty array of strings (argv, never a shell string)";
const std::string kHex63(63, 'a');

struct Case {
  std::string name;
  std::function<void(json&)> mutate;
  std::vector<std::string> expected;
};
}  // namespace

TEST_CASE("the full and minimal fixtures are valid") {
  auto parse = parse_manifest(manifest_fixture_text("valid_full.json"));
  REQUIRE(error_texts(parse).empty());
  CHECK(parse.warnings.empty());
  const auto& m = *parse.manifest;
  CHECK(m.id() == "digits-mlp@2026.11.1");
  CHECK(m.level == reverify::ReproLevel::equivalent);
  CHECK(m.code.commit.size() == 40);
  CHECK_FALSE(m.code.diff_sha256.has_value());  // null = not recorded
  CHECK(m.environment->accelerator->count == 8);
  CHECK(m.environment->env.at("CUBLAS_WORKSPACE_CONFIG") == ":4096:8");
  CHECK(m.data->snapshot->kind == reverify::SnapshotKind::files);
  CHECK(m.seeds.at("dataloader") == 123);
  CHECK(m.run.entrypoint == std::vector<std::string>{"python3", "train.py"});
  CHECK(m.evaluation.segments.at("digit=8").at("accuracy") == doctest::Approx(0.93));
  CHECK(m.evaluation.steps->values.size() == 3);
  CHECK(m.tolerance->seed_runs.at("accuracy").size() == 5);
  CHECK(m.tolerance->distribution_seed_runs.at("ks").size() == 5);
  CHECK(m.tolerance->steps_same_seed_runs.size() == 3);
  CHECK(m.tolerance->seed_overrides == std::vector<std::int64_t>{1, 2, 3, 4, 5});
  CHECK(m.tolerance->detect.at("accuracy") == doctest::Approx(0.01));
  CHECK(m.evaluation.primary.examples == 10000);
  CHECK(m.evaluation.segment_examples.at("digit=8") == 1000);
  CHECK(m.tolerance->floor.at("accuracy") == doctest::Approx(0.0005));
  CHECK(m.config->at("optimizer").at("name") == "adamw");
  CHECK(m.subsample->fraction == doctest::Approx(0.25));
  CHECK(m.subsample->salt == "digits-subsample-1");
  CHECK(m.subsample->evaluation.primary.value == doctest::Approx(0.9335));
  CHECK(m.subsample->evaluation.predictions->uri == "subsample/predictions.npy");
  CHECK(m.subsample->tolerance->seed_runs.at("accuracy").size() == 5);
  CHECK(m.subsample->duration_s == doctest::Approx(1350));

  auto minimal = parse_manifest(manifest_fixture_text("valid_minimal.json"));
  REQUIRE(error_texts(minimal).empty());
  CHECK_FALSE(minimal.manifest->environment.has_value());
  CHECK(minimal.manifest->evaluation.primary.higher_is_better == false);
}

TEST_CASE("unknown fields are kept (top level) or ignored (nested), with a warning each") {
  json doc = full();
  set(doc, "/x-provenance", {{"builder", "ci"}});
  set(doc, "/code/comit", "typo");
  auto parse = parse_manifest(doc.dump());
  REQUIRE(error_texts(parse).empty());
  CHECK(parse.manifest->extra.at("x-provenance") == json{{"builder", "ci"}});
  CHECK(parse.warnings ==
        std::vector<std::string>{
            "code.comit: unknown field, ignored",
            "[\"x-provenance\"]: unknown top-level field, kept as is (not part of "
            "reverify.manifest/v1)"});
}

TEST_CASE("tolerance keys of earlier releases are dropped with a warning that says why") {
  json doc = full();
  set(doc, "/tolerance/distribution_pairs", {{"ks", {0.1, 0.2, 0.3}}});
  set(doc, "/tolerance/steps_pairs_max_abs", json::array({0.3, 0.4, 0.5}));
  auto parse = parse_manifest(doc.dump());
  REQUIRE(error_texts(parse).empty());
  REQUIRE(parse.warnings.size() == 2);
  CHECK(parse.warnings[0].rfind("tolerance.distribution_pairs: dropped: statistics between pairs "
                                "of different-seed runs give no honest band",
                                0) == 0);
  CHECK(parse.warnings[1].rfind("tolerance.steps_pairs_max_abs: dropped", 0) == 0);
  CHECK(parse.manifest->tolerance->distribution_seed_runs.at("ks").size() == 5);
}

TEST_CASE("reproducibility levels round-trip through their names") {
  for (auto level : {reverify::ReproLevel::rerunnable, reverify::ReproLevel::equivalent,
                     reverify::ReproLevel::bitwise}) {
    CHECK(reverify::enum_from_string<reverify::ReproLevel>(reverify::to_string(level)) == level);
  }
  CHECK_FALSE(reverify::enum_from_string<reverify::ReproLevel>("Bitwise").has_value());
}

TEST_CASE("malformed manifests: each gives its exact errors") {
  const std::vector<Case> cases = {
      {"missing schema",
       [](json& d) { erase(d, "/schema"); },
       {"schema: required field is missing (must be \"reverify.manifest/v1\")"}},
      {"unknown schema",
       [](json& d) { set(d, "/schema", "reverify.manifest/v2"); },
       {"schema: must be \"reverify.manifest/v1\" (the only schema this reverify reads), got "
        "\"reverify.manifest/v2\""}},
      {"missing model",
       [](json& d) { erase(d, "/model"); },
       {"model: required field is missing (must be " + kName + ")"}},
      {"model with a space",
       [](json& d) { set(d, "/model", "digits mlp"); },
       {"model: must be " + kName + ", got \"digits mlp\""}},
      {"model with a slash",
       [](json& d) { set(d, "/model", "../etc"); },
       {"model: must be " + kName + ", got \"../etc\""}},
      {"model null",
       [](json& d) { set(d, "/model", nullptr); },
       {"model: must be " + kName + ", got null"}},
      {"version as a number",
       [](json& d) { set(d, "/version", 2026); },
       {"version: must be " + kName + ", got number 2026"}},
      {"empty owner",
       [](json& d) { set(d, "/owner", ""); },
       {"owner: must be a non-empty string, got \"\""}},
      {"unknown level",
       [](json& d) { set(d, "/level", "fast"); },
       {"level: must be one of rerunnable, equivalent, bitwise, got \"fast\""}},
      {"missing code",
       [](json& d) { erase(d, "/code"); },
       {"code.commit: required field is missing (must be " + kCommit + ")"}},
      {"code as a string",
       [](json& d) { set(d, "/code", "abc"); },
       {"code: must be an object, got \"abc\""}},
      {"subsample fraction zero and no salt",
       [](json& d) {
         set(d, "/subsample/fraction", 0);
         erase(d, "/subsample/salt");
       },
       {"subsample.fraction: must be a number in (0, 1] with at most 18 digits after the point "
        "(the share of training records), got "
        "number 0",
        "subsample.salt: required field is missing (must be a non-empty string)"}},
      {"subsample fraction above one",
       [](json& d) { set(d, "/subsample/fraction", 1.5); },
       {"subsample.fraction: must be a number in (0, 1] with at most 18 digits after the point "
        "(the share of training records), got "
        "number 1.5"}},
      {"subsample fraction finer than the rule reads",
       [](json& d) { set(d, "/subsample/fraction", 1e-20); },
       {"subsample.fraction: must be a number in (0, 1] with at most 18 digits after the point "
        "(the share of training records), got number 1e-20"}},
      {"subsample draw without its keys hash, with a negative count",
       [](json& d) {
         set(d, "/subsample/drawn", json{{"records", -1}, {"keys", 3}});
       },
       {"subsample.drawn.records: must be a non-negative integer, got number -1",
        "subsample.drawn.keys_sha256: required field is missing (must be 64 lowercase hex "
        "characters (sha256))"}},
      {"subsample with its own eval set",
       [](json& d) {
         set(d, "/subsample/evaluation/set", json{{"uri", "other.csv"}});
       },
       {"subsample.evaluation.set: not allowed here: the top-level evaluation's applies"}},
      {"subsample judging another metric",
       [](json& d) { set(d, "/subsample/evaluation/primary/name", "f1"); },
       {"subsample.evaluation.primary.name: must be the top-level primary metric \"accuracy\", "
        "got \"f1\""}},
      {"subsample tolerance validated like the top level's",
       [](json& d) { set(d, "/subsample/tolerance/seed_runs/accuracy", "many"); },
       {"subsample.tolerance.seed_runs.accuracy: must be an array of numbers, got \"many\""}},
      {"uppercase commit",
       [](json& d) { set(d, "/code/commit", std::string(40, 'A')); },
       {"code.commit: must be " + kCommit + ", got \"" + std::string(40, 'A') + "\""}},
      {"short commit",
       [](json& d) { set(d, "/code/commit", "abc123"); },
       {"code.commit: must be " + kCommit + ", got \"abc123\""}},
      {"dirty as a string",
       [](json& d) { set(d, "/code/dirty", "no"); },
       {"code.dirty: must be true or false, got \"no\""}},
      {"bad diff hash",
       [](json& d) { set(d, "/code/diff_sha256", kHex63); },
       {"code.diff_sha256: must be " + kSha + ", got \"" + kHex63 + "\""}},
      {"image by tag",
       [](json& d) { set(d, "/environment/image", "python:3.11-slim"); },
       {"environment.image: must be referenced by digest (name@sha256:<64 hex>), got "
        "\"python:3.11-slim\""}},
      {"image digest too short",
       [](json& d) { set(d, "/environment/image", "r.example/train@sha256:" + kHex63); },
       {"environment.image: must be referenced by digest (name@sha256:<64 hex>), got "
        "\"r.example/train@sha256:" +
        kHex63.substr(0, 57) + "\"..."}},
      {"image digest without a name",
       [](json& d) { set(d, "/environment/image", "@sha256:" + std::string(64, 'a')); },
       {"environment.image: must be referenced by digest (name@sha256:<64 hex>), got "
        "\"@sha256:" +
        std::string(64, 'a') + "\""}},
      {"image digest with another algorithm",
       [](json& d) { set(d, "/environment/image", "train@sha512:abcd"); },
       {"environment.image: must be referenced by digest (name@sha256:<64 hex>), got "
        "\"train@sha512:abcd\""}},
      {"lockfile without path",
       [](json& d) { erase(d, "/environment/lockfile/path"); },
       {"environment.lockfile.path: required field is missing (must be a non-empty string)"}},
      {"lockfile uppercase hash",
       [](json& d) { set(d, "/environment/lockfile/sha256", std::string(64, 'F')); },
       {"environment.lockfile.sha256: must be " + kSha + ", got \"" + std::string(64, 'F') + "\""}},
      {"negative accelerator count",
       [](json& d) { set(d, "/environment/accelerator/count", -1); },
       {"environment.accelerator.count: must be a non-negative integer, got number -1"}},
      {"fractional accelerator count",
       [](json& d) { set(d, "/environment/accelerator/count", 1.5); },
       {"environment.accelerator.count: must be a non-negative integer, got number 1.5"}},
      {"world size zero",
       [](json& d) { set(d, "/environment/world_size", 0); },
       {"environment.world_size: must be an integer >= 1, got number 0"}},
      {"world size as a string",
       [](json& d) { set(d, "/environment/world_size", "8"); },
       {"environment.world_size: must be an integer >= 1, got \"8\""}},
      {"env value as a number",
       [](json& d) { set(d, "/environment/env/OMP_NUM_THREADS", 8); },
       {"environment.env.OMP_NUM_THREADS: must be a string without NUL bytes, got number 8"}},
      {"env name with '='",
       [](json& d) { set(d, "/environment/env/A=B", "1"); },
       {"environment.env[\"A=B\"]: variable names must not contain '=' or NUL"}},
      {"tf32 as a string",
       [](json& d) { set(d, "/environment/determinism/tf32", "false"); },
       {"environment.determinism.tf32: must be true or false, got \"false\""}},
      {"cudnn_deterministic as a number",
       [](json& d) { set(d, "/environment/determinism/cudnn_deterministic", 1); },
       {"environment.determinism.cudnn_deterministic: must be true or false, got number 1"}},
      {"no intra-op threads",
       [](json& d) { set(d, "/environment/threads/intra_op", 0); },
       {"environment.threads.intra_op: must be an integer >= 1, got number 0"}},
      {"negative data-loader workers",
       [](json& d) { set(d, "/environment/threads/dataloader_workers", -1); },
       {"environment.threads.dataloader_workers: must be a non-negative integer, got number -1"}},
      {"fractional inter-op threads",
       [](json& d) { set(d, "/environment/threads/inter_op", 1.5); },
       {"environment.threads.inter_op: must be an integer >= 1, got number 1.5"}},
      {"framework without version",
       [](json& d) { erase(d, "/environment/framework/version"); },
       {"environment.framework.version: required field is missing (must be a non-empty "
        "string)"}},
      {"unknown snapshot kind",
       [](json& d) { set(d, "/data/snapshot/kind", "s3"); },
       {"data.snapshot.kind: must be one of files, iceberg, delta, hudi, lakefs, dvc, got "
        "\"s3\""}},
      {"files snapshot without hash",
       [](json& d) { erase(d, "/data/snapshot/sha256"); },
       {"data.snapshot.sha256: required field is missing for kind \"files\" (must be " + kSha +
        ", the root hash of the file manifest)"}},
      {"snapshot without uri",
       [](json& d) { erase(d, "/data/snapshot/uri"); },
       {"data.snapshot.uri: required field is missing (must be a non-empty string)"}},
      {"split without rule",
       [](json& d) { erase(d, "/data/split/rule"); },
       {"data.split.rule: required field is missing (must be a non-empty string)"}},
      {"config as an array",
       [](json& d) {
         set(d, "/config", json::array({1, 2}));
       },
       {"config: must be an object, got an array"}},
      {"seed as a string",
       [](json& d) { set(d, "/seeds/python", "42"); },
       {"seeds.python: must be an integer, got \"42\""}},
      {"fractional seed",
       [](json& d) { set(d, "/seeds/numpy", 4.2); },
       {"seeds.numpy: must be an integer, got number 4.2"}},
      {"seed above 2^63-1",
       [](json& d) { set(d, "/seeds/cuda", 10000000000000000000ULL); },
       {"seeds.cuda: must be an integer, got number 10000000000000000000"}},
      {"missing run",
       [](json& d) { erase(d, "/run"); },
       {"run.entrypoint: required field is missing (must be " + kArgv + ")"}},
      {"entrypoint as a shell string",
       [](json& d) { set(d, "/run/entrypoint", "python3 train.py"); },
       {"run.entrypoint: must be " + kArgv + ", got \"python3 train.py\""}},
      {"empty entrypoint",
       [](json& d) { set(d, "/run/entrypoint", json::array()); },
       {"run.entrypoint: must be " + kArgv + ", got an array"}},
      {"entrypoint program not a string",
       [](json& d) {
         set(d, "/run/entrypoint", json::array({1, "train.py"}));
       },
       {"run.entrypoint[0]: must be a non-empty string (the program), got number 1"}},
      {"entrypoint argument with NUL",
       [](json& d) { set(d, "/run/entrypoint/1", std::string("train\0.py", 9)); },
       {"run.entrypoint[1]: must be a string without NUL bytes, got \"train\\u0000.py\""}},
      {"started_at not a timestamp",
       [](json& d) { set(d, "/run/started_at", "yesterday"); },
       {"run.started_at: must be an RFC 3339 timestamp (2026-11-02T03:00:00Z), got "
        "\"yesterday\""}},
      {"started_at month 13",
       [](json& d) { set(d, "/run/started_at", "2026-13-02T03:00:00Z"); },
       {"run.started_at: must be an RFC 3339 timestamp (2026-11-02T03:00:00Z), got "
        "\"2026-13-02T03:00:00Z\""}},
      {"negative duration",
       [](json& d) { set(d, "/run/duration_s", -5); },
       {"run.duration_s: must be a non-negative number, got number -5"}},
      {"negative source_date_epoch",
       [](json& d) { set(d, "/run/source_date_epoch", -1); },
       {"run.source_date_epoch: must be a non-negative integer (seconds since 1970), got number "
        "-1"}},
      {"missing evaluation",
       [](json& d) { erase(d, "/evaluation"); },
       {"evaluation.primary: required field is missing (must be an object {\"name\", \"value\", "
        "\"higher_is_better\"})"}},
      {"primary value as a string",
       [](json& d) { set(d, "/evaluation/primary/value", "0.96"); },
       {"evaluation.primary.value: must be a number, got \"0.96\""}},
      {"primary without name",
       [](json& d) { erase(d, "/evaluation/primary/name"); },
       {"evaluation.primary.name: required field is missing (must be a non-empty string)"}},
      {"segment metric as a string",
       [](json& d) { set(d, "/evaluation/segments/digit=8/accuracy", "high"); },
       {"evaluation.segments[\"digit=8\"].accuracy: must be a number, got \"high\""}},
      {"eval set hash with a prefix",
       [](json& d) { set(d, "/evaluation/set/sha256", "sha256:" + std::string(64, 'a')); },
       {"evaluation.set.sha256: must be " + kSha + ", got \"sha256:" + std::string(64, 'a') +
        "\""}},
      {"predictions without uri",
       [](json& d) { erase(d, "/evaluation/predictions/uri"); },
       {"evaluation.predictions.uri: required field is missing (must be a non-empty string)"}},
      {"step value as a string",
       [](json& d) { set(d, "/evaluation/steps/values/1", "x"); },
       {"evaluation.steps.values[1]: must be a number, got \"x\""}},
      {"bad tensor hash",
       [](json& d) { set(d, "/weights/tensor_sha256", 42); },
       {"weights.tensor_sha256: must be " + kSha + ", got number 42"}},
      {"seed runs not an array",
       [](json& d) { set(d, "/tolerance/seed_runs/accuracy", 0.96); },
       {"tolerance.seed_runs.accuracy: must be an array of numbers, got number 0.96"}},
      {"seed run null",
       [](json& d) { set(d, "/tolerance/seed_runs/accuracy/2", nullptr); },
       {"tolerance.seed_runs.accuracy[2]: must be a number, got null"}},
      {"unknown distribution statistic",
       [](json& d) { set(d, "/tolerance/distribution_seed_runs/kolmogorov", json::array({0.1})); },
       {"tolerance.distribution_seed_runs.kolmogorov: unknown statistic (must be one of ks, psi, "
        "wasserstein, max_abs_diff, mean_abs_diff, flip_rate)"}},
      {"parity check of no known statistic",
       [](json& d) { set(d, "/tolerance/parity_seed_runs/parity:top-3", json::array({0.1})); },
       {"tolerance.parity_seed_runs[\"parity:top-3\"]: not a parity check (expected "
        "\"parity:<statistic>\" or \"parity:<statistic>:segment:<key>=<value>\", the statistic "
        "one of threshold=<t>, threshold=<t>:class=<c>, argmax, class=<c>, top-k-set, "
        "top-k-order, tau-distance)"}},
      {"detect not positive",
       [](json& d) { set(d, "/tolerance/detect/accuracy", 0); },
       {"tolerance.detect.accuracy: must be a positive number, got number 0"}},
      {"same-seed steps run not an array",
       [](json& d) { set(d, "/tolerance/steps_same_seed_runs/1", 2.3); },
       {"tolerance.steps_same_seed_runs[1]: must be an array of numbers, got number 2.3"}},
      {"seed override not an integer",
       [](json& d) { set(d, "/tolerance/seed_overrides/0", 1.5); },
       {"tolerance.seed_overrides[0]: must be an integer, got number 1.5"}},
      {"examples zero",
       [](json& d) { set(d, "/evaluation/primary/examples", 0); },
       {"evaluation.primary.examples: must be a positive integer, got number 0"}},
      {"segment examples not an integer",
       [](json& d) { set(d, "/evaluation/segment_examples/digit=8", "x"); },
       {"evaluation.segment_examples[\"digit=8\"]: must be a positive integer, got \"x\""}},
      {"negative floor",
       [](json& d) { set(d, "/tolerance/floor/accuracy", -0.1); },
       {"tolerance.floor.accuracy: must be a non-negative number, got number -0.1"}},
      {"segment seed runs with a string",
       [](json& d) { set(d, "/tolerance/segment_seed_runs/digit=8/accuracy/0", "a"); },
       {"tolerance.segment_seed_runs[\"digit=8\"].accuracy[0]: must be a number, got \"a\""}},
      {"same-seed scores not an array",
       [](json& d) { set(d, "/tolerance/same_seed_scores", 3); },
       {"tolerance.same_seed_scores: must be an array of objects (one per same-seed rerun), got "
        "number 3"}},
      {"same-seed score without its predictions' hash",
       [](json& d) {
         set(d, "/tolerance/same_seed_scores", json::array({{{"primary", 0.9}}}));
       },
       {"tolerance.same_seed_scores[0].predictions_sha256: required field is missing (must be " +
        kSha + ")"}},
      {"same-seed score with a short hash",
       [](json& d) {
         set(d, "/tolerance/same_seed_scores",
             json::array({{{"predictions_sha256", "abc"}, {"primary", 0.9}}}));
       },
       {"tolerance.same_seed_scores[0].predictions_sha256: must be " + kSha + ", got \"abc\""}},
      {"same-seed primary as a string",
       [](json& d) {
         set(d, "/tolerance/same_seed_scores",
             json::array({{{"predictions_sha256", std::string(64, 'a')}, {"primary", "0.9"}}}));
       },
       {"tolerance.same_seed_scores[0].primary: must be a number, got \"0.9\""}},
      {"same-seed segment metric as a string",
       [](json& d) {
         set(d, "/tolerance/same_seed_scores",
             json::array({{{"predictions_sha256", std::string(64, 'a')},
                           {"segments", {{"digit=8", {{"accuracy", "x"}}}}}}}));
       },
       {"tolerance.same_seed_scores[0].segments[\"digit=8\"].accuracy: must be a number, got "
        "\"x\""}},
      {"document is an array",
       [](json& d) { d = json::array({d}); },
       {"must be a JSON object (a reverify.manifest/v1 document), got an array"}},
      {"several errors at once",
       [](json& d) {
         set(d, "/model", "a b");
         set(d, "/environment/image", "python:3.11-slim");
         set(d, "/environment/world_size", 0);
         erase(d, "/run/entrypoint");
       },
       {"model: must be " + kName + ", got \"a b\"",
        "environment.image: must be referenced by digest (name@sha256:<64 hex>), got "
        "\"python:3.11-slim\"",
        "environment.world_size: must be an integer >= 1, got number 0",
        "run.entrypoint: required field is missing (must be " + kArgv + ")"}},
  };
  CHECK(cases.size() >= 40);
  for (const auto& c : cases) {
    CAPTURE(c.name);
    json doc = full();
    c.mutate(doc);
    auto parse = parse_manifest(doc.dump());
    CHECK(error_texts(parse) == c.expected);
    CHECK_FALSE(parse.ok());
  }
}

TEST_CASE("malformed documents: exact errors, never a crash") {
  const std::string valid = manifest_fixture_text("valid_minimal.json");
  struct TextCase {
    std::string name;
    std::string text;
    std::string expected;
  };
  const std::string owner_key = "\"owner\": \"team-x";
  const std::size_t owner_at = valid.find(owner_key) + owner_key.size();
  auto with_owner_suffix = [&](const std::string& bytes) {
    return valid.substr(0, owner_at) + bytes + valid.substr(owner_at);
  };
  const std::vector<TextCase> cases = {
      {"invalid UTF-8 byte", with_owner_suffix("\xff"),
       "invalid UTF-8 at byte offset " + std::to_string(owner_at)},
      {"overlong UTF-8", with_owner_suffix("\xc0\xaf"),
       "invalid UTF-8 at byte offset " + std::to_string(owner_at)},
      {"UTF-16 surrogate in UTF-8", with_owner_suffix("\xed\xa0\x80"),
       "invalid UTF-8 at byte offset " + std::to_string(owner_at)},
      {"truncated UTF-8 at the end", valid + "\xe2\x82",
       "invalid UTF-8 at byte offset " + std::to_string(valid.size())},
      {"duplicate top-level key", "{\"model\": \"a\", \"model\": \"b\"}",
       "model: duplicate key \"model\" (a key may appear once per object)"},
      {"duplicate nested key", "{\"environment\": {\"env\": {\"A\": \"1\", \"A\": \"2\"}}}",
       "environment.env.A: duplicate key \"A\" (a key may appear once per object)"},
      {"number overflow", "{\"evaluation\": {\"primary\": {\"value\": 1e400}}}",
       "evaluation.primary.value: number overflow parsing '1e400' (must be a finite number)"},
      {"negative number overflow", "{\"seeds\": [-1e999]}",
       "seeds[0]: number overflow parsing '-1e999' (must be a finite number)"},
      {"empty document", "",
       "invalid JSON at byte offset 1: parse error at line 1, column 1: syntax error while "
       "parsing value - unexpected end of input; expected '[', '{', or a literal"},
      {"truncated document", "{\"schema\": ",
       "invalid JSON at byte offset 12: parse error at line 1, column 12: syntax error while "
       "parsing value - unexpected end of input; expected '[', '{', or a literal"},
      {"trailing garbage", "{} x",
       "invalid JSON at byte offset 4: parse error at line 1, column 4: syntax error while "
       "parsing value - invalid literal; last read: '{} x'; expected end of input"},
      // Found #8: a manifest with a UTF-8 BOM linted as valid (nlohmann skips it silently).
      {"byte order mark", "\xEF\xBB\xBF" + valid,
       "starts with a UTF-8 byte order mark (EF BB BF), which JSON text must not have (RFC 8259, "
       "section 8.1): save it as UTF-8 without a BOM"},
      {"comment", "{/* c */}",
       "invalid JSON at byte offset 2: parse error at line 1, column 2: syntax error while "
       "parsing object key - invalid literal; last read: '{/'; expected string literal"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.name);
    auto parse = parse_manifest(c.text);
    CHECK(error_texts(parse) == std::vector<std::string>{c.expected});
  }
}

TEST_CASE("nesting deeper than the limit is refused before it can exhaust the stack") {
  // Root object = level 1, config = level 2, so the 65th container is config + 63 x ".a".
  std::string deep = "{\"config\": ";
  std::string path = "config";
  for (int i = 0; i < 100; ++i)
    deep += "{\"a\": ";
  deep += "1";
  for (int i = 0; i < 100; ++i)
    deep += "}";
  deep += "}";
  for (int i = 0; i < 63; ++i)
    path += ".a";
  CHECK(error_texts(parse_manifest(deep)) ==
        std::vector<std::string>{path + ": nesting deeper than the limit of 64 levels"});

  const std::string arrays = std::string(1000000, '[') + std::string(1000000, ']');
  std::string array_path;
  for (int i = 0; i < 64; ++i)
    array_path += "[0]";
  CHECK(error_texts(parse_manifest(arrays)) ==
        std::vector<std::string>{array_path + ": nesting deeper than the limit of 64 levels"});
}

// Found #8: a 2M-element seed_runs array linted for 5.8 s at 178 MB; arrays are now capped while
// parsing (ManifestLimits::max_array_elements), before any DOM of that size exists.
TEST_CASE("an array longer than the limit is refused while parsing, naming it") {
  const std::string valid = manifest_fixture_text("valid_minimal.json");
  auto with_seed_runs = [&](std::size_t n) {
    std::string values;
    values.reserve(n * 7);
    for (std::size_t i = 0; i < n; ++i)
      values += (i ? ",0.5" : "0.5");
    std::string doc = valid;
    doc.insert(doc.rfind('}'), ", \"tolerance\": {\"seed_runs\": {\"loss\": [" + values + "]}}");
    return doc;
  };
  auto at_limit = parse_manifest(with_seed_runs(100'000));
  REQUIRE(at_limit.ok());
  CHECK(at_limit.manifest->tolerance->seed_runs.at("loss").size() == 100'000);
  for (std::size_t n : {std::size_t{100'001}, std::size_t{2'000'000}}) {
    CHECK(error_texts(parse_manifest(with_seed_runs(n))) ==
          std::vector<std::string>{
              "tolerance.seed_runs.loss: array of more than 100000 elements exceeds the limit"});
  }
  ManifestLimits small;
  small.max_array_elements = 3;
  CHECK(error_texts(parse_manifest(with_seed_runs(4), small)) ==
        std::vector<std::string>{
            "tolerance.seed_runs.loss: array of more than 3 elements exceeds the limit"});
}

TEST_CASE("a 100 MB string is rejected without crashing") {
  const std::string valid = manifest_fixture_text("valid_minimal.json");
  const std::string big(100 * 1024 * 1024, 'x');
  const std::string owner = "\"team-x\"";
  std::string doc = valid;
  doc.replace(doc.find(owner), owner.size(), "\"" + big + "\"");
  CHECK(error_texts(parse_manifest(doc)) ==
        std::vector<std::string>{"document of " + std::to_string(doc.size()) +
                                 " bytes exceeds the limit of 67108864 bytes"});
  ManifestLimits roomy;
  roomy.max_bytes = 200 * 1024 * 1024;
  CHECK(error_texts(parse_manifest(doc, roomy)) ==
        std::vector<std::string>{"owner: string of 104857600 bytes exceeds the limit of 1048576 "
                                 "bytes"});
}

TEST_CASE("an environment reported by a job is validated on its own, under its own path") {
  json facts = {
      {"framework", {{"name", "torch"}, {"version", "1.13.0a0"}}},
      {"determinism", {{"deterministic_algorithms", true}, {"cudnn_deterministic", true}}},
      {"threads", {{"intra_op", 1}, {"inter_op", 1}, {"dataloader_workers", 2}}},
      {"surprise", 1}};
  auto ok = reverify::parse_environment(facts, "result.json: environment");
  REQUIRE(ok.environment);
  CHECK(ok.errors.empty());
  CHECK(ok.environment->threads->dataloader_workers == 2);
  CHECK(ok.environment->determinism->cudnn_deterministic == true);
  REQUIRE(ok.warnings.size() == 1);
  CHECK(ok.warnings[0] == "result.json: environment.surprise: unknown field, ignored");

  facts["threads"]["intra_op"] = "1";
  auto bad = reverify::parse_environment(facts, "result.json: environment");
  CHECK_FALSE(bad.environment);
  CHECK(error_texts_of(bad.errors) ==
        std::vector<std::string>{
            "result.json: environment.threads.intra_op: must be an integer >= 1, got \"1\""});
  CHECK(reverify::parse_environment(json::array(), "env").errors.size() == 1);
}

TEST_CASE("tolerance.parity_seed_runs: every parity check's name is accepted, nothing else") {
  auto errors_for = [](const std::string& name) {
    json doc = full();
    set(doc, "/tolerance/parity_seed_runs", json::object({{name, json::array({0.01, 0.02})}}));
    return error_texts(parse_manifest(doc.dump()));
  };
  for (const char* name :
       {"parity:threshold=0.5", "parity:threshold=0.5:segment:group=a",
        "parity:threshold=0.5:class=1", "parity:argmax", "parity:argmax:segment:digit=8",
        "parity:class=3", "parity:top-k-set", "parity:top-k-order:segment:lang=de",
        "parity:tau-distance", "parity:tau-distance:segment:lang=en:us"}) {
    CAPTURE(name);
    CHECK(errors_for(name).empty());
  }
  for (const char* name :
       {"parity:", "threshold=0.5", "parity:threshold=", "parity:class=", "parity:class=x",
        "parity:class=3:segment:digit=3", "parity:threshold=0.5:class=1:segment:g=a",
        "parity:argmax:segment:", "parity:argmax:segment:digit", "parity:argmax:segment:=8",
        "parity:top-k", "parity:threshold=0.5:class="}) {
    CAPTURE(name);
    CHECK(errors_for(name).size() == 1);
  }
}
