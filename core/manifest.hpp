#pragma once
// The typed model of a build manifest, schema "reverify.manifest/v1" (docs/design.md, "Manifest
// v1"). Parsing and validation live in manifest_parse.hpp; serialisation in manifest_json.hpp.
// Optional fields are std::optional: absent in the JSON means absent here (lint scores absence).

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/enum_names.hpp"

namespace reverify {

inline constexpr const char* kManifestSchemaV1 = "reverify.manifest/v1";

enum class ReproLevel { rerunnable, equivalent, bitwise };
template <>
struct EnumNames<ReproLevel> {
  static constexpr EnumName<ReproLevel> table[] = {
      {ReproLevel::rerunnable, "rerunnable"},
      {ReproLevel::equivalent, "equivalent"},
      {ReproLevel::bitwise, "bitwise"},
  };
};

struct CodeInfo {
  std::optional<std::string> repo;  // URL or local path of the git repository
  std::string commit;               // 40 lowercase hex
  bool dirty = false;
  std::optional<std::string> diff_sha256;  // 64 hex; sha256 of `git diff HEAD` when dirty

  bool operator==(const CodeInfo&) const = default;
};

struct Lockfile {
  std::string path;                   // relative to the code checkout
  std::optional<std::string> sha256;  // 64 hex

  bool operator==(const Lockfile&) const = default;
};

struct Framework {
  std::string name;
  std::string version;

  bool operator==(const Framework&) const = default;
};

struct Accelerator {
  std::string model;
  std::int64_t count = 0;  // 0 = CPU only
  std::optional<std::string> driver;
  std::optional<std::string> cuda;
  std::optional<std::string> cudnn;

  bool operator==(const Accelerator&) const = default;
};

// The framework's determinism switches as the job set them (PyTorch: use_deterministic_algorithms,
// torch.backends.cudnn.deterministic / .benchmark, TF32 for matmul or cuDNN).
struct Determinism {
  std::optional<bool> deterministic_algorithms;
  std::optional<bool> cudnn_benchmark;
  std::optional<bool> tf32;
  std::optional<bool> cudnn_deterministic;

  bool operator==(const Determinism&) const = default;
};

// The parallelism a CPU reduction order and a data loader's sample-to-worker mapping depend on.
struct Threads {
  std::optional<std::int64_t> intra_op;            // >= 1 (torch.get_num_threads())
  std::optional<std::int64_t> inter_op;            // >= 1 (torch.get_num_interop_threads())
  std::optional<std::int64_t> dataloader_workers;  // >= 0 (DataLoader num_workers)

  bool operator==(const Threads&) const = default;
};

struct Environment {
  std::optional<std::string> image;  // name@sha256:<64 hex>, never a tag
  std::optional<Lockfile> lockfile;
  std::optional<std::string> python;
  std::optional<Framework> framework;
  std::optional<Accelerator> accelerator;
  std::map<std::string, std::string> env;  // passed to the job as is
  std::optional<Determinism> determinism;
  std::optional<Threads> threads;
  std::optional<std::int64_t> world_size;  // >= 1

  bool operator==(const Environment&) const = default;
};

// Snapshot kinds: files is verified by the file-manifest root hash; the table and versioning
// formats (iceberg, delta, hudi, lakefs, dvc) are recorded ids passed through to the job.
enum class SnapshotKind { files, iceberg, delta, hudi, lakefs, dvc };
template <>
struct EnumNames<SnapshotKind> {
  static constexpr EnumName<SnapshotKind> table[] = {
      {SnapshotKind::files, "files"},   {SnapshotKind::iceberg, "iceberg"},
      {SnapshotKind::delta, "delta"},   {SnapshotKind::hudi, "hudi"},
      {SnapshotKind::lakefs, "lakefs"}, {SnapshotKind::dvc, "dvc"},
  };
};

struct Snapshot {
  SnapshotKind kind = SnapshotKind::files;
  std::string uri;
  std::optional<std::string> sha256;  // root hash of the file manifest (kind "files")
  std::optional<std::string> id;      // snapshot/commit id for the table formats

  bool operator==(const Snapshot&) const = default;
};

struct Split {
  std::string rule;
  std::optional<std::string> salt;

  bool operator==(const Split&) const = default;
};

struct Labels {
  std::optional<std::string> version;
  std::optional<std::string> guidance_rev;

  bool operator==(const Labels&) const = default;
};

struct Data {
  std::optional<Snapshot> snapshot;
  std::optional<Split> split;
  std::optional<Labels> labels;

  bool operator==(const Data&) const = default;
};

struct Run {
  std::vector<std::string> entrypoint;  // argv, never a shell string; non-empty
  std::optional<std::string> workdir;
  std::optional<std::string> started_at;  // RFC 3339 UTC
  std::optional<double> duration_s;
  std::optional<std::string> runner;  // the machine/CI runner that emitted the manifest
  std::optional<std::int64_t> source_date_epoch;

  bool operator==(const Run&) const = default;
};

struct FileRef {
  std::string uri;                    // relative URIs resolve against the manifest's location
  std::optional<std::string> sha256;  // 64 hex

  bool operator==(const FileRef&) const = default;
};

struct PrimaryMetric {
  std::string name;
  double value = 0;
  bool higher_is_better = true;
  // k: the metric is a proportion over this many eval examples (moves in steps of 1/k).
  std::optional<std::int64_t> examples = std::nullopt;

  bool operator==(const PrimaryMetric&) const = default;
};

struct StepValues {
  std::string metric;
  std::vector<double> values;

  bool operator==(const StepValues&) const = default;
};

// evaluation.scoring: what reverify needs to score every set of predictions itself from the
// frozen eval set's labels (docs/job-guide.md "Scoring spec"); validation in manifest_parse.cpp.
enum class ScoringTask { binary, multiclass, regression, ranking };
template <>
struct EnumNames<ScoringTask> {
  static constexpr EnumName<ScoringTask> table[] = {
      {ScoringTask::binary, "binary"},
      {ScoringTask::multiclass, "multiclass"},
      {ScoringTask::regression, "regression"},
      {ScoringTask::ranking, "ranking"},
  };
};

enum class ScoringMetric {
  accuracy,
  balanced_accuracy,
  precision,
  recall,
  f1,
  roc_auc,
  pr_auc,
  log_loss,
  brier,
  rmse,
  mae,
  r2,
  ndcg_at_k,
  mrr,
  precision_at_k,
};
// The tasks a metric is computed for: classification is binary and multiclass.
enum class MetricFamily { classification, regression, ranking };
// A metric's row of its name table also holds its family and its direction.
struct ScoringMetricName {
  ScoringMetric value;
  const char* name;
  MetricFamily family;
  bool higher_is_better;
};
template <>
struct EnumNames<ScoringMetric> {
  using enum MetricFamily;
  static constexpr ScoringMetricName table[] = {
      {ScoringMetric::accuracy, "accuracy", classification, true},
      {ScoringMetric::balanced_accuracy, "balanced_accuracy", classification, true},
      {ScoringMetric::precision, "precision", classification, true},
      {ScoringMetric::recall, "recall", classification, true},
      {ScoringMetric::f1, "f1", classification, true},
      {ScoringMetric::roc_auc, "roc_auc", classification, true},
      {ScoringMetric::pr_auc, "pr_auc", classification, true},
      {ScoringMetric::log_loss, "log_loss", classification, false},
      {ScoringMetric::brier, "brier", classification, false},
      {ScoringMetric::rmse, "rmse", regression, false},
      {ScoringMetric::mae, "mae", regression, false},
      {ScoringMetric::r2, "r2", regression, true},
      {ScoringMetric::ndcg_at_k, "ndcg@k", ranking, true},
      {ScoringMetric::mrr, "mrr", ranking, true},
      {ScoringMetric::precision_at_k, "precision@k", ranking, true},
  };
};
// From the table above (core/scoring_spec.cpp).
bool metric_applies(ScoringMetric metric, ScoringTask task);
bool higher_is_better(ScoringMetric metric);
// The task's full metric set, in table order (the default when the spec names none).
std::vector<ScoringMetric> task_metrics(ScoringTask task);
// A ranking metric with a cut-off (ndcg@k, precision@k): its name with k written out
// ("ndcg@10"), the way jobs name it; nullopt for a metric without a cut-off.
std::optional<std::string> metric_name_at(ScoringMetric metric, std::size_t k);

// One value per eval record: a named column of the eval set (evaluation.set, a CSV file with a
// header row) when only `column` is set; else the file at `uri` (relative URIs resolve against
// the manifest's location), pinned by `sha256`, and in it the named `column` of a CSV with a
// header row, or, without `column`, its only column (.npy 1-D, or one value per line).
struct RecordColumn {
  std::optional<std::string> uri;
  std::optional<std::string> sha256;  // 64 hex; required with uri
  std::optional<std::string> column;

  bool operator==(const RecordColumn&) const = default;
};

// The name a segment key gets when none is given: the column's, else the file's stem
// ("data/radius.csv" -> "radius").
std::string default_segment_key_name(const RecordColumn& values);

// A record whose key value is v belongs to the segment "<name>=<v>".
struct SegmentKeySpec {
  std::string name;  // [A-Za-z0-9][A-Za-z0-9._-]{0,127}; defaults to the column's (or file's) name
  RecordColumn values;

  bool operator==(const SegmentKeySpec&) const = default;
};

struct ScoringSpec {
  ScoringTask task = ScoringTask::binary;
  RecordColumn labels;
  std::optional<std::int64_t> classes;  // multiclass: labels are 0..classes-1 (binary: 2 if set)
  std::vector<ScoringMetric> metrics;   // empty: the task's full set (task_metrics)
  std::vector<SegmentKeySpec> segments;
  // binary: the operating thresholds, decision = score >= t (empty: 0.5); regression: the
  // decisions whose crossings parity counts (none when empty); no other task takes any.
  std::vector<double> thresholds;
  std::optional<std::int64_t> k;      // ranking (required): the cut-off of ndcg@k, precision@k
  std::optional<RecordColumn> query;  // ranking (required): the query id of each record

  bool operator==(const ScoringSpec&) const = default;
};

// A metric name as a job reports it (evaluation.primary.name, a segment's metric) against the
// task of `spec`. Scoring takes the name of a metric in the table above as it is written
// ("accuracy", "ndcg@k"), with a threshold after it ("accuracy@0.5"), and a ranking metric with
// its cut-off written out as the spec's k ("ndcg@10" when k is 10). A name that means one of the
// task's metrics but is written otherwise (another case, "-" or "_at_" for "@", a "_score" suffix,
// "auc" for roc_auc, "p@10" for precision@10, a cut-off other than the spec's k) would leave that
// metric job-reported while scoring could compute it: the spelling to use, as a clause ("name it
// ndcg@10 (or ndcg@k)"). nullopt for a name scoring takes, and for one that means no metric the
// task computes ("map@10", and "mrr@10", "ndcg" without a cut-off: other metrics than reverify's).
std::optional<std::string> metric_spelling_to_use(std::string_view name, const ScoringSpec& spec);

// segment name ("digit=8") -> metric name -> value
using SegmentMetrics = std::map<std::string, std::map<std::string, double>>;

struct Evaluation {
  std::optional<FileRef> set;
  PrimaryMetric primary;
  SegmentMetrics segments;
  std::map<std::string, std::int64_t> segment_examples;  // segment -> its k examples
  std::optional<FileRef> predictions;
  std::optional<StepValues> steps;
  std::optional<ScoringSpec> scoring;

  bool operator==(const Evaluation&) const = default;
};

// Every metric the evaluation reports (its primary, its segments' metrics) whose name
// metric_spelling_to_use would have spelled otherwise; none without a scoring spec.
struct MisspelledMetric {
  std::string path;  // "evaluation.primary.name", "evaluation.segments.market=de"
  std::string name;  // as reported: "NDCG@10"
  std::string use;   // "name it ndcg@10 (or ndcg@k)"
};
std::vector<MisspelledMetric> misspelled_metrics(const Evaluation& evaluation);

struct Weights {
  std::string uri;
  std::string format = "safetensors";
  std::optional<std::string> tensor_sha256;  // tensor hash (docs/design.md), 64 hex

  bool operator==(const Weights&) const = default;
};

// One same-seed rerun (the release's own seeds) as reverify scored it: the reference for "is
// this difference only the platform's nondeterminism?" (the same-seed:predictions note,
// policies/verdict.hpp).
struct SameSeedScore {
  std::string predictions_sha256;  // core/predictions.hpp values_sha256 of its predictions
  std::optional<double> primary;   // evaluation.primary's metric (reverify's score, with a spec)
  // segment scope -> metric -> value, where a scoring spec scores segments
  std::map<std::string, std::map<std::string, double>> segments;

  bool operator==(const SameSeedScore&) const = default;
};

// Seed-only reruns, the raw material of every tolerance band (policies/bands.hpp).
struct ToleranceSpec {
  // metric name -> values of that metric over seed-only reruns ("accuracy": [..])
  std::map<std::string, std::vector<double>> seed_runs;
  // segment -> metric -> seed-run values
  std::map<std::string, std::map<std::string, std::vector<double>>> segment_seed_runs;
  // REVERIFY_SEED_OVERRIDE of each seed run, in order, when known (a calibration adding runs
  // picks seeds not used yet)
  std::vector<std::int64_t> seed_overrides;
  // distribution statistic ("ks", "psi", "wasserstein", "max_abs_diff", "mean_abs_diff",
  // "flip_rate") -> its value between the release's predictions and each seed run's, one per run
  // (the distribution a rebuild's statistic against the release is drawn from)
  std::map<std::string, std::vector<double>> distribution_seed_runs;
  // parity check ("parity:threshold=0.5", "parity:threshold=0.5:segment:group=a",
  // "parity:class=3", "parity:top-k-order", ...) -> its statistic between the release's
  // predictions and each seed run's: the share of the scope's records (a class's members, the
  // queries) that changed, or the tau distance (evaluation.scoring; policies/own_scores.hpp)
  std::map<std::string, std::vector<double>> parity_seed_runs;
  // Same-seed reruns (the release's own seeds, the platform's nondeterminism only): each one's
  // step values, compared with evaluation.steps (the steps-mode band).
  std::vector<std::vector<double>> steps_same_seed_runs;
  // The same reruns' predictions, hashed and scored (`reverify capture --same-seed-runs` with
  // predictions; `reverify calibrate --mode steps` runs steps only and records none).
  std::vector<SameSeedScore> same_seed_scores;
  // metric (or check) name -> smallest band half-width / upper bound
  std::map<std::string, double> floor;
  // check key -> the shift the owner wants caught with 80% probability: the primary metric's
  // name ("accuracy"), "segment:<segment>:<metric>", "distribution:<statistic>", "steps:<metric>"
  std::map<std::string, double> detect;

  bool operator==(const ToleranceSpec&) const = default;
};

// subsample: the reference a subsample rebuild is judged against (docs/job-guide.md "Subsample
// mode"; docs/design.md, "The rebuild contract"). The job trains to completion on the training
// records whose key K has the first 8 bytes of SHA-256(salt + ":" + K), big-endian, below fraction
// x 2^64, and is scored on the frozen eval set. Its own metrics, predictions and seed runs, because
// a model trained on a quarter of the data is another model: the full release's bands say nothing
// about it.
// Which records the subsample job trained on, as it reported them (docs/design.md, "The subsample
// rule": result.json "subsample" and its keys file): a subsample rebuild must draw the same.
struct SubsampleDrawn {
  std::int64_t records = 0;                // records trained on
  std::int64_t keys = 0;                   // distinct keys among them
  std::optional<std::int64_t> candidates;  // records the rule picked from
  std::string keys_sha256;                 // of the keys file: distinct keys, sorted, one a line

  bool operator==(const SubsampleDrawn&) const = default;
};

struct SubsampleReference {
  double fraction = 1;             // 0 < fraction <= 1 (REVERIFY_SUBSAMPLE_FRACTION)
  std::string salt;                // non-empty (REVERIFY_SUBSAMPLE_SALT)
  std::optional<std::string> key;  // what a record's key is, in words (documentation)
  // The subsample model's primary, segments, segment_examples and predictions; the eval set, its
  // scoring spec and the steps are the top-level evaluation's.
  Evaluation evaluation;
  std::optional<Weights> weights;
  std::optional<ToleranceSpec> tolerance;  // its own seed runs
  std::optional<double> duration_s;        // the subsample job's wall time
  std::optional<SubsampleDrawn> drawn;     // absent: recorded before the job kit, not compared

  bool operator==(const SubsampleReference&) const = default;
};

struct Manifest {
  std::string schema = kManifestSchemaV1;
  std::string model;
  std::string version;
  std::string owner;
  ReproLevel level = ReproLevel::equivalent;
  CodeInfo code;
  std::optional<Environment> environment;
  std::optional<Data> data;
  std::optional<nlohmann::json> config;  // the fully resolved config, any JSON object
  std::map<std::string, std::int64_t> seeds;
  Run run;
  Evaluation evaluation;
  std::optional<Weights> weights;
  std::optional<ToleranceSpec> tolerance;
  std::optional<SubsampleReference> subsample;
  // Unknown top-level keys, kept verbatim for forward compatibility (warned about, not rejected).
  std::map<std::string, nlohmann::json> extra;

  std::string id() const { return model + "@" + version; }

  bool operator==(const Manifest&) const = default;
};

}  // namespace reverify
