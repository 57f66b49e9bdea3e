#include "policies/lint.hpp"

#include <algorithm>
#include <cctype>
#include <functional>

#include "core/text.hpp"
#include "policies/bands.hpp"

namespace reverify {
namespace {
using Findings = std::vector<LintFinding>;
using RuleCheck = std::function<void(const Manifest&, const LintRule&, Findings&)>;

void add(Findings& out, const LintRule& rule, LintSeverity severity, std::string path,
         std::string message, std::string fix) {
  const int weight = severity == LintSeverity::info ? 0 : rule.weight;
  out.push_back({rule.id, severity, std::move(path), std::move(message), std::move(fix), weight});
}

void check_image(const Manifest& m, const LintRule& rule, Findings& out) {
  if (m.environment && m.environment->image)
    return;
  add(out, rule, LintSeverity::error, "environment.image",
      "no container image recorded: the rebuild cannot use the original software stack",
      "train in a container and record its image as name@sha256:<digest>");
}

void check_lockfile(const Manifest& m, const LintRule& rule, Findings& out) {
  const auto* lock = m.environment && m.environment->lockfile ? &*m.environment->lockfile : nullptr;
  if (!lock) {
    add(out, rule, LintSeverity::error, "environment.lockfile",
        "no lockfile recorded: dependency versions can drift between builds",
        "pin dependencies in a lockfile and record its path and sha256");
  } else if (!lock->sha256) {
    add(out, rule, LintSeverity::error, "environment.lockfile.sha256",
        "lockfile " + lock->path + " has no sha256: a changed lockfile would go unnoticed",
        "record the lockfile's sha256");
  }
}

void check_snapshot(const Manifest& m, const LintRule& rule, Findings& out) {
  const auto* snapshot = m.data && m.data->snapshot ? &*m.data->snapshot : nullptr;
  if (!snapshot) {
    add(out, rule, LintSeverity::error, "data.snapshot",
        "no data snapshot recorded: training read live data that can change under the rebuild",
        "snapshot the training data and record its kind, uri and sha256 (files) or id (tables)");
    return;
  }
  if (snapshot->kind == SnapshotKind::files)
    return;  // validation already requires its root hash
  const std::string kind = to_string(snapshot->kind);
  if (!snapshot->id) {
    add(out, rule, LintSeverity::error, "data.snapshot.id",
        kind + " snapshot without an id: the rebuild would read the table's latest state",
        "record the " + kind + " snapshot/commit id the job read");
  } else {
    add(out, rule, LintSeverity::info, "data.snapshot.kind",
        kind + " snapshot " + *snapshot->id +
            " is passed to the job as recorded; reverify cannot recompute its hash",
        "none needed; use kind \"files\" where the data can be hashed");
  }
}

bool names_hash_function(std::string rule) {
  std::transform(rule.begin(), rule.end(), rule.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  for (const char* word : {"sha", "md5", "hash", "xxh", "murmur", "crc", "farm", "city", "blake"}) {
    if (rule.find(word) != std::string::npos)
      return true;
  }
  return false;
}

void check_split(const Manifest& m, const LintRule& rule, Findings& out) {
  const auto* split = m.data && m.data->split ? &*m.data->split : nullptr;
  const std::string fix =
      "split by a hash of a stable record id plus a recorded salt, e.g. "
      "sha256(id + salt) % 100 < 20";
  if (!split) {
    add(out, rule, LintSeverity::warning, "data.split",
        "no split rule recorded: a shuffled split changes with the seed and the data order", fix);
  } else if (!names_hash_function(split->rule)) {
    add(out, rule, LintSeverity::warning, "data.split.rule",
        "split rule \"" + split->rule + "\" names no hash function: it likely depends on order",
        fix);
  } else if (!split->salt || split->salt->empty()) {
    add(out, rule, LintSeverity::warning, "data.split.salt",
        "split rule without a salt: the split cannot be recomputed exactly", fix);
  }
}

bool is_torch(const Manifest& m) {
  return m.environment && m.environment->framework &&
         (m.environment->framework->name == "torch" || m.environment->framework->name == "pytorch");
}

// What makes a PyTorch run's numerics depend on the machine beyond the flags: thread counts (CPU
// reduction order), data-loader workers (which worker's seed augments which sample) and, on a
// GPU, cuBLAS's workspace setting (required by deterministic algorithms).
void torch_determinism(const Manifest& m, std::vector<std::string>& unsafe,
                       std::vector<std::string>& unrecorded) {
  const Environment& env = *m.environment;
  const auto* d = env.determinism ? &*env.determinism : nullptr;
  if (d && d->cudnn_deterministic && !*d->cudnn_deterministic &&
      !d->deterministic_algorithms.value_or(false)) {
    unsafe.push_back("cudnn_deterministic is false");
  }
  if (env.accelerator && env.accelerator->count > 0) {
    auto workspace = env.env.find("CUBLAS_WORKSPACE_CONFIG");
    if (workspace == env.env.end()) {
      unsafe.push_back("a GPU run without CUBLAS_WORKSPACE_CONFIG in environment.env");
    } else if (workspace->second != ":4096:8" && workspace->second != ":16:8") {
      unsafe.push_back("CUBLAS_WORKSPACE_CONFIG is \"" + workspace->second +
                       "\" (deterministic cuBLAS needs :4096:8 or :16:8)");
    }
  }
  const auto* threads = env.threads ? &*env.threads : nullptr;
  if (!(threads && threads->intra_op) && !env.env.count("OMP_NUM_THREADS"))
    unrecorded.push_back("the intra-op thread count (environment.threads.intra_op)");
  if (!(threads && threads->dataloader_workers))
    unrecorded.push_back("the data-loader worker count (environment.threads.dataloader_workers)");
}

void check_determinism(const Manifest& m, const LintRule& rule, Findings& out) {
  const auto* d =
      m.environment && m.environment->determinism ? &*m.environment->determinism : nullptr;
  std::vector<std::string> unsafe, unrecorded;
  if (d) {
    if (d->cudnn_benchmark.value_or(false))
      unsafe.push_back("cudnn_benchmark is true");
    if (d->deterministic_algorithms && !*d->deterministic_algorithms)
      unsafe.push_back("deterministic_algorithms is false");
    if (d->tf32.value_or(false))
      unsafe.push_back("tf32 is true");
  }
  if (is_torch(m))
    torch_determinism(m, unsafe, unrecorded);
  const std::string fix =
      "release with deterministic_algorithms=true, cudnn_benchmark=false, tf32=false" +
      std::string(is_torch(m) ? ", CUBLAS_WORKSPACE_CONFIG=:4096:8 on a GPU, and record the "
                                "thread counts and data-loader workers (environment.threads)"
                              : "");
  if (!unsafe.empty()) {
    add(out, rule, LintSeverity::error, "environment.determinism",
        joined(unsafe) +
            ": autotuned, reduced-precision or nondeterministic kernels vary between "
            "runs" +
            (unrecorded.empty() ? "" : "; not recorded: " + joined(unrecorded)),
        fix);
  } else if (!d) {
    add(out, rule, LintSeverity::warning, "environment.determinism",
        "determinism flags not recorded: autotuning may have chosen different kernels" +
            (unrecorded.empty() ? "" : "; not recorded either: " + joined(unrecorded)),
        is_torch(m) ? fix
                    : "record deterministic_algorithms, cudnn_benchmark and tf32 as the job set "
                      "them");
  } else if (!unrecorded.empty()) {
    add(out, rule, LintSeverity::warning, "environment.threads",
        "not recorded: " + joined(unrecorded) +
            ": a rebuild on a machine with other counts reduces and augments in another order",
        fix);
  }
}

void check_machine_emitted(const Manifest& m, const LintRule& rule, Findings& out) {
  std::string missing;
  if (!m.run.runner)
    missing = "run.runner";
  if (!m.run.started_at)
    missing += missing.empty() ? "run.started_at" : " and run.started_at";
  if (missing.empty())
    return;
  add(out, rule, LintSeverity::warning, missing.find(' ') == std::string::npos ? missing : "run",
      "no " + missing + ": the manifest looks hand-written, not emitted by the training job",
      "emit the manifest from the job itself (reverify capture)");
}

void check_eval_set(const Manifest& m, const LintRule& rule, Findings& out) {
  if (!m.evaluation.set) {
    add(out, rule, LintSeverity::error, "evaluation.set",
        "no evaluation set recorded: metrics cannot be recomputed on the same records",
        "record the evaluation set's uri and sha256");
  } else if (!m.evaluation.set->sha256) {
    add(out, rule, LintSeverity::error, "evaluation.set.sha256",
        "evaluation set without sha256: a changed eval set would move the metrics silently",
        "record the evaluation set's sha256");
  }
}

void check_dirty_tree(const Manifest& m, const LintRule& rule, Findings& out) {
  if (!m.code.dirty || m.code.diff_sha256)
    return;
  add(out, rule, LintSeverity::error, "code.diff_sha256",
      "trained from a dirty tree without a diff hash: the exact code cannot be recovered",
      "train from a clean commit, or record sha256 of `git diff HEAD` as code.diff_sha256");
}

void check_seeds(const Manifest& m, const LintRule& rule, Findings& out) {
  if (!m.seeds.empty())
    return;
  add(out, rule, LintSeverity::warning, "seeds",
      "no seeds recorded: the rebuild cannot replay the original randomness",
      "record every seed the job set (python, numpy, framework, dataloader, ...)");
}

void check_world_size(const Manifest& m, const LintRule& rule, Findings& out) {
  if (m.environment && m.environment->world_size)
    return;
  add(out, rule, LintSeverity::warning, "environment.world_size",
      "no world size recorded: a different device count changes reductions and batches",
      "record the number of processes the job ran with as environment.world_size");
}

// Not a way a build stops being reproducible, so it costs no points; but what the verdict can say
// depends on it, and the owner should know what is missing and what that costs.
void check_counts(const Manifest& m, const LintRule& rule, Findings& out) {
  const auto& ev = m.evaluation;
  std::size_t uncounted = 0;
  for (const auto& [segment, metrics] : ev.segments)
    uncounted += ev.segment_examples.count(segment) ? 0 : metrics.size();
  if (ev.primary.examples && uncounted == 0)
    return;
  const std::string what =
      std::string(ev.primary.examples ? "" : "the primary metric") +
      (ev.primary.examples || uncounted == 0 ? "" : " and ") +
      (uncounted ? std::to_string(uncounted) + " segment metric(s)" : std::string());
  add(out, rule, LintSeverity::warning,
      ev.primary.examples ? "evaluation.segment_examples" : "evaluation.primary.examples",
      "the verdict rests on the job's own numbers, and " + what +
          " come without an example count: their bands use a count inferred from the values "
          "(the smallest common denominator, at most as fine as the true one, so wider), and a "
          "metric that every seed run scored alike with no count to infer is not judged at all",
      "record evaluation.scoring (capture --task/--labels/--segment-key) so reverify scores "
      "the predictions itself, or report \"examples\" and \"segment_examples\" in result.json");
}

// Costs no points (it is not a way a build stops being reproducible), but a metric scoring
// computes and the job names otherwise is judged on the job's own figures alone.
void check_metric_names(const Manifest& m, const LintRule& rule, Findings& out) {
  for (const auto& misspelled : misspelled_metrics(m.evaluation)) {
    add(out, rule, LintSeverity::error, misspelled.path,
        "\"" + misspelled.name +
            "\" is a metric evaluation.scoring computes, under a name scoring does not take: "
            "it is judged on the job's own figures, not on reverify's score of the predictions",
        misspelled.use + " where the job reports it, and capture again");
  }
}

// Costs no points either: a subsample reference is what lets a model too costly to rebuild in
// full every cycle get a whole-run verdict between full rebuilds (docs/job-guide.md "Subsample
// mode").
void check_subsample(const Manifest& m, const LintRule& rule, Findings& out) {
  if (!m.subsample) {
    add(out, rule, LintSeverity::info, "subsample",
        "no subsample reference: a subsample rebuild of this version is refused, so a model too "
        "costly to rebuild in full every cycle is checked between full rebuilds by steps mode "
        "alone",
        "release with `reverify capture --subsample-out DIR --subsample-seed-runs DIR "
        "--subsample-fraction F --subsample-salt S` (the job trained with REVERIFY_MODE="
        "subsample)");
    return;
  }
  const auto& tolerance = m.subsample->tolerance;
  const auto runs = tolerance && tolerance->seed_runs.count(m.evaluation.primary.name)
                        ? tolerance->seed_runs.at(m.evaluation.primary.name).size()
                        : 0;
  if (runs < kMinSeedRuns) {
    add(out, rule, LintSeverity::warning, "subsample.tolerance.seed_runs",
        "the subsample reference has " + std::to_string(runs) +
            " seed run(s): a subsample rebuild gets no band from fewer than " +
            std::to_string(kMinSeedRuns) + " and is judged uncalibrated",
        "record subsample seed runs at release (`reverify capture --subsample-seed-runs DIR`), "
        "or add them later with `reverify calibrate MODEL@VERSION --mode subsample --seeds N "
        "--config FILE`, stored where subsample verdicts read them");
  }
  if (!m.subsample->drawn) {
    add(out, rule, LintSeverity::info, "subsample.drawn",
        "the subsample reference records no draw: its rebuilds cannot check that they trained on "
        "the release's records (input:subsample-draw is not judged)",
        "release with a job that reports the records it trained on (the job kit's "
        "subsample_mask; docs/design.md \"The subsample rule\")");
  }
}

struct RuleEntry {
  LintRule rule;
  RuleCheck check;
};

const std::vector<RuleEntry>& rule_table() {
  static const std::vector<RuleEntry> table = {
      {{"image-digest", 15, "the container image is recorded by digest"}, check_image},
      {{"lockfile-hash", 10, "a lockfile is recorded with its sha256"}, check_lockfile},
      {{"data-snapshot", 15, "training data is a snapshot with a hash or id"}, check_snapshot},
      {{"split-hash-rule", 10, "the split is a hash rule with a salt"}, check_split},
      {{"determinism", 15, "no autotuning, nondeterministic or TF32 kernels"}, check_determinism},
      {{"machine-emitted", 10, "run.runner and run.started_at are recorded"},
       check_machine_emitted},
      {{"eval-set-hash", 10, "the evaluation set is recorded with its sha256"}, check_eval_set},
      {{"dirty-tree", 5, "a dirty tree has its diff hash"}, check_dirty_tree},
      {{"seeds", 5, "seeds are recorded"}, check_seeds},
      {{"world-size", 5, "the world size is recorded"}, check_world_size},
      {{"counts", 0, "metrics come with their example counts (or a scoring spec)"}, check_counts},
      {{"metric-names", 0, "metrics scoring computes are reported under names it takes"},
       check_metric_names},
      {{"subsample-reference", 0, "a subsample reference with its own seed runs"}, check_subsample},
  };
  return table;
}
}  // namespace

const std::vector<LintRule>& lint_rules() {
  static const std::vector<LintRule> rules = [] {
    std::vector<LintRule> out;
    for (const auto& entry : rule_table())
      out.push_back(entry.rule);
    return out;
  }();
  return rules;
}

LintReport lint_manifest(const Manifest& manifest) {
  LintReport report;
  for (const auto& entry : rule_table())
    entry.check(manifest, entry.rule, report.findings);
  for (const auto& finding : report.findings)
    report.score -= finding.weight;
  return report;
}

nlohmann::json to_json(const LintReport& report) {
  nlohmann::json findings = nlohmann::json::array();
  for (const auto& f : report.findings) {
    findings.push_back({{"rule", f.rule},
                        {"severity", to_string(f.severity)},
                        {"path", f.path},
                        {"message", f.message},
                        {"fix", f.fix},
                        {"weight", f.weight}});
  }
  nlohmann::json rules = nlohmann::json::array();
  for (const auto& rule : lint_rules()) {
    const bool failed =
        std::any_of(report.findings.begin(), report.findings.end(), [&](const LintFinding& f) {
          return f.rule == rule.id && f.severity != LintSeverity::info;
        });
    rules.push_back(
        {{"id", rule.id}, {"weight", rule.weight}, {"checks", rule.checks}, {"passed", !failed}});
  }
  return {{"score", report.score}, {"findings", findings}, {"rules", rules}};
}

}  // namespace reverify
