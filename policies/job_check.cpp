#include "policies/job_check.hpp"

#include <algorithm>
#include <cmath>

#include "core/subsample_rule.hpp"
#include "policies/number_text.hpp"

namespace reverify {
namespace {

constexpr double kStartRelative = 1e-6;  // float rounding, not another batch or another init

JobFinding finding(std::string id, FindingStatus status, std::string summary,
                   JobFailure failure = JobFailure::none, std::string fix = {}) {
  return JobFinding{std::move(id), status, std::move(summary), failure, std::move(fix), {}};
}

std::string count_text(std::size_t n, const char* what) {
  return std::to_string(n) + " " + what + (n == 1 ? "" : "s");
}

double max_abs_difference(const std::vector<double>& a, const std::vector<double>& b) {
  double worst = 0;
  for (std::size_t i = 0; i < std::min(a.size(), b.size()); ++i)
    worst = std::max(worst, std::fabs(a[i] - b[i]));
  return worst;
}

const std::string* string_field(const nlohmann::json& j, const char* key) {
  return j.is_object() && j.contains(key) && j[key].is_string()
             ? j[key].get_ptr<const std::string*>()
             : nullptr;
}

std::optional<std::int64_t> integer_field(const nlohmann::json& j, const char* key) {
  if (j.is_object() && j.contains(key) && j[key].is_number_integer())
    return j[key].get<std::int64_t>();
  return std::nullopt;
}

constexpr const char* kSeedFix =
    "draw every random choice from a generator seeded from the contract's seeds: the data order "
    "from seed \"dataloader\" (job kit: job.numpy_rng(\"dataloader\"), or a DataLoader with "
    "generator=job.loader_generator()), weights from \"numpy\"/\"framework\", augmentation in "
    "workers from a worker_init_fn that derives each worker's seed from the contract "
    "(job.worker_init_fn)";

}  // namespace

RunDistance run_distance(const JobRunRecord& a, const JobRunRecord& b) {
  RunDistance d;
  if (a.predictions && b.predictions) {
    const auto& pa = *a.predictions;
    const auto& pb = *b.predictions;
    d.predictions_equal = pa.rows == pb.rows && pa.cols == pb.cols && pa.values == pb.values;
    d.predictions_max_abs =
        pa.values.size() == pb.values.size() ? max_abs_difference(pa.values, pb.values) : INFINITY;
  }
  d.weights_equal = a.weights_hash && b.weights_hash && *a.weights_hash == *b.weights_hash;
  d.steps_compared = std::min(a.steps.size(), b.steps.size());
  for (std::size_t i = 0; i < d.steps_compared; ++i) {
    const double diff = std::fabs(a.steps[i] - b.steps[i]);
    d.steps_max_abs = std::max(d.steps_max_abs, diff);
    if (diff > 0 && !d.first_differing_step) {
      d.first_differing_step = i;
      const double scale = std::max({std::fabs(a.steps[i]), std::fabs(b.steps[i]), 1e-30});
      d.steps_start_close = diff / scale <= kStartRelative;
    }
  }
  return d;
}

JobFinding judge_outputs(const std::vector<JobRunRecord>& runs,
                         std::optional<std::size_t> eval_records, ReproLevel level) {
  for (const auto& run : runs) {
    if (run.error) {
      auto f =
          finding("outputs", FindingStatus::fail, "the " + run.name + " run failed: " + *run.error,
                  JobFailure::contract_outputs,
                  "make the job exit 0 and write $REVERIFY_OUT/result.json in every mode the "
                  "contract names (docs/design.md, \"The rebuild contract\")");
      return f;
    }
  }
  const JobRunRecord& full = runs.front();
  if (!full.predictions) {
    return finding("outputs", FindingStatus::fail,
                   "result.json names no predictions file: no rebuild can be compared with the "
                   "release record by record",
                   JobFailure::contract_outputs,
                   "write one row of scores per eval record, in eval-set order, to an .npy or CSV "
                   "file and name it in result.json \"predictions\" (job kit: "
                   "job.write_predictions)");
  }
  const Predictions& p = *full.predictions;
  if (eval_records && p.rows != *eval_records) {
    return finding("outputs", FindingStatus::fail,
                   "the predictions have " + count_text(p.rows, "row") + ", the eval set " +
                       count_text(*eval_records, "record") +
                       ": rebuilt and released predictions would not pair up record by record",
                   JobFailure::contract_outputs,
                   "predict every eval record once, in eval-set order (no shuffled or batched-out "
                   "eval loader, no validation split instead of the eval set)");
  }
  std::string shape = std::to_string(p.rows) + (p.two_d ? " x " + std::to_string(p.cols) : "");
  std::string summary = "result.json valid in every run; predictions " + shape +
                        (eval_records ? " (one row per eval record)" : "") + "; " +
                        (full.weights_hash ? "weights hashed" : "no weights");
  if (!full.weights_hash && level == ReproLevel::bitwise) {
    return finding("outputs", FindingStatus::fail, summary + ": level bitwise compares weights",
                   JobFailure::contract_outputs,
                   "write the weights as safetensors and name them in result.json \"weights\" "
                   "(job kit: job.write_weights)");
  }
  auto f = finding("outputs", FindingStatus::pass, summary);
  if (!eval_records)
    f.details.push_back(
        "the rows per eval record were not counted: give the scoring spec "
        "(--task and --labels) to check them");
  return f;
}

JobFinding judge_same_seed(const JobRunRecord& full, const JobRunRecord& again, ReproLevel level) {
  const RunDistance d = run_distance(full, again);
  if (d.exact() && (d.weights_equal || !full.weights_hash)) {
    return finding("same-seed", FindingStatus::pass,
                   "two runs with the same seeds gave identical predictions" +
                       std::string(full.weights_hash ? ", weights" : "") +
                       " and step values: level bitwise is possible on this platform");
  }
  std::string where;
  JobFailure failure = JobFailure::nondeterministic_kernels;
  std::string fix =
      "for bitwise results: deterministic kernels (torch.use_deterministic_algorithms(True), "
      "cudnn.benchmark off, CUBLAS_WORKSPACE_CONFIG), fixed thread counts (OMP_NUM_THREADS, "
      "torch.set_num_threads) in environment.env; or release at level equivalent";
  if (d.first_differing_step && (*d.first_differing_step == 0 || !d.steps_start_close)) {
    where = "they differ from step " + std::to_string(*d.first_differing_step) +
            (*d.first_differing_step == 0 ? " (before any update: the first batch or the weights' "
                                            "initialisation differ)"
                                          : " by more than float rounding") +
            ": something draws from a generator the contract's seeds do not reach (the data "
            "order, dataloader workers, augmentation or weight initialisation)";
    failure = JobFailure::unseeded_generator;
    fix = kSeedFix;
  } else if (d.first_differing_step) {
    where = "the first " + count_text(*d.first_differing_step, "step") +
            " agree and then the values drift by float rounding (largest " +
            number_text(d.steps_max_abs) +
            "): nondeterministic kernels, reduction order or thread counts";
  } else {
    where = "the step values agree; predictions differ by at most " +
            number_text(d.predictions_max_abs) + (d.weights_equal ? "" : ", weights differ");
  }
  const bool unseeded = failure == JobFailure::unseeded_generator;
  const bool fails = unseeded || level == ReproLevel::bitwise;
  auto f =
      finding("same-seed", fails ? FindingStatus::fail : FindingStatus::warn,
              "two runs with the same seeds differ: " + where + ". Level bitwise is not possible" +
                  (unseeded ? "; steps mode cannot be exact and seed-only calibration "
                              "mixes in noise no seed controls"
                            : "; level equivalent is, judged against seed spread"),
              failure, fix);
  f.details.push_back("predictions: largest difference " + number_text(d.predictions_max_abs) +
                      "; step values: largest difference " + number_text(d.steps_max_abs) +
                      " over " + count_text(d.steps_compared, "step"));
  return f;
}

JobFinding judge_seed_override(const JobRunRecord& full, const JobRunRecord& overridden,
                               std::int64_t seed) {
  const RunDistance d = run_distance(full, overridden);
  const std::string given = "REVERIFY_SEED_OVERRIDE=" + std::to_string(seed);
  if (!d.predictions_equal) {
    return finding("seed-override", FindingStatus::pass,
                   given + " changed the predictions (largest difference " +
                       number_text(d.predictions_max_abs) + ")");
  }
  return finding("seed-override", FindingStatus::fail,
                 given +
                     " changed nothing: calibration's seed-only runs would all be one run, "
                     "their spread zero, and every band too narrow for an honest rebuild",
                 JobFailure::override_ignored,
                 "when REVERIFY_SEED_OVERRIDE is set, replace every seed with it before seeding "
                 "anything (job kit: reverify_job.Job does)");
}

JobFinding judge_steps_mode(const JobRunRecord& steps, const JobRunRecord& full,
                            std::int64_t max_steps, const RunDistance& same_seed) {
  const auto n = static_cast<std::size_t>(max_steps);
  const std::string given = "REVERIFY_MAX_STEPS=" + std::to_string(max_steps);
  if (steps.steps.empty()) {
    return finding("steps-mode", FindingStatus::fail,
                   given +
                       ": result.json has no steps values: a steps rebuild has nothing to "
                       "compare",
                   JobFailure::steps_mode_ignored,
                   "record one value per optimizer step (the loss) in result.json \"steps\" (job "
                   "kit: job.record_loss)");
  }
  if (steps.steps.size() > n) {
    return finding("steps-mode", FindingStatus::fail,
                   given + ": the job recorded " + count_text(steps.steps.size(), "step") +
                       ": it does not stop at N, so a steps rebuild costs a full one",
                   JobFailure::steps_mode_ignored,
                   "in steps mode run min(configured, REVERIFY_MAX_STEPS) optimizer steps (job "
                   "kit: job.steps(configured))");
  }
  if (same_seed.first_differing_step && !same_seed.steps_start_close) {
    return finding("steps-mode", FindingStatus::pass,
                   given + ": " + count_text(steps.steps.size(), "step") +
                       " recorded; not compared with the full run's, since runs with the same "
                       "seeds already differ (same-seed)");
  }
  JobRunRecord prefix = full;
  prefix.steps.resize(std::min(full.steps.size(), n));
  const RunDistance d = run_distance(steps, prefix);
  const double allowed = same_seed.exact() ? 0.0 : same_seed.steps_max_abs;
  if (d.steps_max_abs > allowed || steps.steps.size() > full.steps.size()) {
    return finding("steps-mode", FindingStatus::fail,
                   given + ": its first " + count_text(d.steps_compared, "step") +
                       " differ from the full run's by up to " + number_text(d.steps_max_abs) +
                       " (same-seed runs: " + number_text(allowed) +
                       "): steps mode runs another computation than the full run",
                   JobFailure::steps_mode_ignored,
                   "steps mode must be the full run stopped after N steps: same data order, same "
                   "schedule, same seeds (a schedule that depends on the total number of steps "
                   "must keep the full run's total)");
  }
  return finding("steps-mode", FindingStatus::pass,
                 given + ": " + count_text(steps.steps.size(), "step") +
                     " recorded, equal to the full run's first " +
                     std::to_string(steps.steps.size()) +
                     (allowed > 0 ? " within same-seed noise " + number_text(allowed) : ""));
}

JobFinding judge_seed_reach(const std::string& seed_name, const JobRunRecord& steps,
                            const JobRunRecord& varied, const RunDistance& same_seed) {
  const std::string id = "seed:" + seed_name;
  if (same_seed.first_differing_step && !same_seed.steps_start_close) {
    return finding(id, FindingStatus::skip,
                   "not judged: runs with the same seeds already differ (same-seed)");
  }
  const RunDistance d = run_distance(steps, varied);
  const double noise = same_seed.exact() ? 0.0 : std::max(same_seed.steps_max_abs, 1e-12) * 10;
  const double noise_p = same_seed.exact() ? 0.0 : same_seed.predictions_max_abs * 10;
  if (d.steps_max_abs > noise || d.predictions_max_abs > noise_p) {
    return finding(id, FindingStatus::pass,
                   "changing seed \"" + seed_name + "\" alone changed the first " +
                       count_text(d.steps_compared, "step") + " (largest difference " +
                       number_text(std::max(d.steps_max_abs, d.predictions_max_abs)) + ")");
  }
  const bool named = seed_name == "dataloader" || seed_name == "augmentation";
  auto f = finding(
      id, named ? FindingStatus::fail : FindingStatus::warn,
      "changing seed \"" + seed_name + "\" alone changed nothing in the first " +
          count_text(d.steps_compared, "step") + " nor the predictions: " +
          (named ? "what it is named for (the " +
                       std::string(seed_name == "dataloader" ? "data order"
                                                             : "augmentation in the workers") +
                       ") draws from a generator it does not seed, so seed runs "
                       "never vary it and the bands leave its noise out"
                 : "nothing draws from it, or what does acts only after these "
                   "steps"),
      JobFailure::seed_not_reached,
      named ? kSeedFix
            : "drop the seed if nothing needs it; if a generator should draw from "
              "it, seed that generator from it");
  return f;
}

JobFinding judge_subsample(const SubsampleCheckInput& in) {
  const JobRunRecord& run = *in.run;
  const nlohmann::json report = run.result.is_object() && run.result.contains("subsample")
                                    ? run.result["subsample"]
                                    : nlohmann::json();
  const std::string fix_report =
      "train on the records the subsample rule keeps and report them (job kit: "
      "job.subsample_mask(keys); docs/design.md, \"The subsample rule\")";
  if (!report.is_object() || !string_field(report, "keys_sha256") || !run.keys_file) {
    return finding("subsample", FindingStatus::fail,
                   "subsample mode: the job reports no drawn records (result.json \"subsample\" "
                   "with keys_sha256, and its keys file): a verification cannot tell a subsample "
                   "drawn by the rule from a shuffle",
                   JobFailure::subsample_not_by_rule, fix_report);
  }
  auto fraction = parse_subsample_fraction(in.fraction);
  if (!fraction.ok())
    return finding("subsample", FindingStatus::skip, fraction.error().message);
  auto checked =
      check_keys_file(*run.keys_file, *string_field(report, "keys_sha256"), in.salt, *fraction);
  if (!checked.ok()) {
    return finding("subsample", FindingStatus::fail, "subsample mode: " + checked.error().message,
                   JobFailure::subsample_not_by_rule, fix_report);
  }
  if (checked->outside > 0) {
    return finding("subsample", FindingStatus::fail,
                   std::to_string(checked->outside) + " of the " +
                       count_text(checked->keys, "key") +
                       " the job trained on are not in the subsample by the rule (\"" +
                       checked->first_outside + "\" is out at fraction " + fraction->text +
                       "): it drew its subsample another way (a shuffle, a slice, a float "
                       "comparison)",
                   JobFailure::subsample_not_by_rule, fix_report);
  }
  const nlohmann::json* other = in.overridden && in.overridden->result.is_object() &&
                                        in.overridden->result.contains("subsample")
                                    ? &in.overridden->result["subsample"]
                                    : nullptr;
  const std::string* other_digest = other ? string_field(*other, "keys_sha256") : nullptr;
  if (in.overridden && (!other_digest || *other_digest != *string_field(report, "keys_sha256"))) {
    return finding("subsample", FindingStatus::fail,
                   "the seed override changed which records the job trained on: the subsample "
                   "follows the seed (a shuffle), not the rule",
                   JobFailure::subsample_not_by_rule, fix_report);
  }
  const auto candidates = integer_field(report, "candidates");
  const double f = static_cast<double>(fraction->numerator) / std::pow(10.0, fraction->digits);
  const std::size_t keys = checked->keys;
  std::string summary = "subsample mode: every one of the " + count_text(keys, "key") +
                        " trained on is a member by the rule";
  if (candidates && *candidates > 0) {
    const double expected = f * static_cast<double>(*candidates);
    const double sd = std::sqrt(expected * (1 - f));
    summary += " (" + std::to_string(keys) + " of " + std::to_string(*candidates) +
               " candidates, " + number_text(expected) + " expected)";
    if (std::fabs(static_cast<double>(keys) - expected) > 5 * sd + 1) {
      return finding("subsample", FindingStatus::fail,
                     summary +
                         ": far fewer or more than the rule keeps of that many: some "
                         "eligible records were left out before the rule was applied",
                     JobFailure::subsample_not_by_rule, fix_report);
    }
  }
  auto out = finding("subsample", FindingStatus::pass, summary);
  if (in.full && !in.full->steps.empty()) {
    out.details.push_back(std::to_string(run.steps.size()) + " steps against the full run's " +
                          std::to_string(in.full->steps.size()) +
                          ": a schedule counted in epochs keeps them on fewer records, one "
                          "counted in steps runs ceil(steps x fraction)");
  }
  return out;
}

JobFinding judge_metrics(const CheckResult& agreement) {
  std::string summary = agreement.explanation;
  if (summary.rfind("job:metric-agrees: ", 0) == 0)
    summary = summary.substr(19);
  if (agreement.outcome == CheckOutcome::passed)
    return finding("metrics", FindingStatus::pass, summary);
  if (agreement.outcome != CheckOutcome::failed)
    return finding("metrics", FindingStatus::warn, summary);
  return finding("metrics", FindingStatus::fail,
                 summary +
                     ": what it reports is not what its predictions score (another split, "
                     "another threshold, other records)",
                 JobFailure::metric_mismatch,
                 "compute the reported metrics from the predictions it writes, on the whole eval "
                 "set in eval-set order; report other splits under other names (\"validation\")");
}

FindingStatus overall_status(const std::vector<JobFinding>& findings) {
  FindingStatus worst = FindingStatus::pass;
  for (const auto& f : findings) {
    if (f.status == FindingStatus::fail)
      return FindingStatus::fail;
    if (f.status == FindingStatus::warn)
      worst = FindingStatus::warn;
  }
  return worst;
}

}  // namespace reverify
