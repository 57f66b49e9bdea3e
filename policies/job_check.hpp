#pragma once
// What `reverify check-job` concludes from the runs it made of a job before its release (cli/
// cmd_check_job.cpp runs them; this judges them). Pure: the runs' outputs in, findings out.
//
// Each finding is one check with its status and, when it does not pass, the silent failure of the
// field notes it points to (JobFailure) and the fix. The runs a check needs (names used below):
//   full       the job with its seeds, in full mode (traced for file and network access)
//   same-seed  the same again
//   override   full mode with REVERIFY_SEED_OVERRIDE
//   steps      steps mode, REVERIFY_MAX_STEPS = N
//   seed:X     steps mode with only seed X changed
//   subsample  subsample mode, and subsample-override: the same with the seed override
// Judgements:
// - outputs: every run's result.json was valid (the runner's own validation); the full run's
//   predictions have one row per eval record when the count is known, and weights exist (level
//   bitwise needs them).
// - same-seed: predictions, weights and step values equal -> level bitwise possible; otherwise the
//   largest difference, which level that allows (equivalent), a failure at level bitwise, and
//   where it started: already at step 0 (before any update: the first batch or the weights'
//   initialisation differ, an unseeded generator) or later, by float rounding (nondeterministic
//   kernels or thread counts) when the first steps agree to within 1e-6 relative.
// - seed-override: the override run's predictions differ from the full run's (else the job
//   ignores REVERIFY_SEED_OVERRIDE: every calibration run is one run, the spread zero).
// - steps-mode: the steps run recorded at most N values (none recorded past N) and its values
//   equal the full run's first N, exactly when same-seed runs were exact, else within their own
//   largest difference (not compared when same-seed runs differ from step 0: same-seed says why).
// - seed:X: changing seed X alone changed the first N steps' values or the predictions by more than
//   same-seed noise. Unreached: a failure for "dataloader" and "augmentation" (the seeds the
//   contract names for the data order and the augmentation: declared, so something must draw from
//   them), a warning for any other name (an unused seed is harmless, but a generator meant to draw
//   from it does not). Not judged (skip) when same-seed runs differ from step 0.
// - subsample: the run reported the records it trained on (result.json "subsample" and its keys
//   file): the file hashes to keys_sha256, every key is a member by the rule (core/
//   subsample_rule.hpp), the count is within 5 standard deviations of fraction x candidates, the
//   draw is the same under the seed override (a shuffle changes with the seed; the rule does
//   not); the step count is a note.
// - metrics: the job's reported metrics equal reverify's scoring of its predictions
//   (policies/own_scores.hpp, job_agreement_check), when a scoring spec was given.
// File and network access is judged in policies/job_trace.hpp.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/enum_names.hpp"
#include "core/manifest.hpp"
#include "core/predictions.hpp"
#include "policies/verdict_model.hpp"

namespace reverify {

// The silent failures of the field notes a finding points to.
enum class JobFailure {
  none,
  contract_outputs,          // outputs a runner cannot read or compare
  unseeded_generator,        // the data order, workers, augmentation or init drawn unseeded
  seed_not_reached,          // a seed that does not reach what it is named for
  nondeterministic_kernels,  // same seeds, different numbers by float rounding
  override_ignored,          // REVERIFY_SEED_OVERRIDE changes nothing
  steps_mode_ignored,        // steps mode not stopping at N, or another curve
  subsample_not_by_rule,     // a subsample drawn by a shuffle or another rule
  hidden_input,              // a read outside the contract's paths, or the network
  metric_mismatch,           // reported metrics that are not its predictions'
};

template <>
struct EnumNames<JobFailure> {
  static constexpr EnumName<JobFailure> table[] = {
      {JobFailure::none, "none"},
      {JobFailure::contract_outputs, "outputs outside the contract"},
      {JobFailure::unseeded_generator, "an unseeded generator"},
      {JobFailure::seed_not_reached, "a seed that does not reach the data order or the workers"},
      {JobFailure::nondeterministic_kernels, "nondeterministic kernels"},
      {JobFailure::override_ignored, "a seed override the job ignores"},
      {JobFailure::steps_mode_ignored, "steps mode not honoured"},
      {JobFailure::subsample_not_by_rule, "a subsample by shuffle, not by the rule"},
      {JobFailure::hidden_input, "a hidden live input"},
      {JobFailure::metric_mismatch, "metrics computed on something else"},
  };
};

enum class FindingStatus { pass, warn, fail, skip };

template <>
struct EnumNames<FindingStatus> {
  static constexpr EnumName<FindingStatus> table[] = {{FindingStatus::pass, "pass"},
                                                      {FindingStatus::warn, "warn"},
                                                      {FindingStatus::fail, "fail"},
                                                      {FindingStatus::skip, "skip"}};
};

struct JobFinding {
  std::string id;  // "outputs", "same-seed", "seed-override", "steps-mode", "seed:<name>", ...
  FindingStatus status = FindingStatus::pass;
  std::string summary;  // what was observed, one or two sentences
  JobFailure failure = JobFailure::none;
  std::string fix;                   // what to change; empty when it passes
  std::vector<std::string> details;  // evidence, one line each
};

// One run of the job as check-job read it back.
struct JobRunRecord {
  std::string name;                  // "full", "same-seed", "seed:dataloader", ...
  std::optional<std::string> error;  // it failed, or its outputs broke the contract (why)
  nlohmann::json result;             // result.json
  std::vector<double> steps;         // result.json steps.values
  std::optional<Predictions> predictions;
  std::optional<std::string> weights_hash;  // the tensor hash of its weights
  std::optional<std::string> keys_file;     // subsample-keys.txt as written
};

// How far apart two runs are.
struct RunDistance {
  bool predictions_equal = false;
  double predictions_max_abs = 0;
  bool weights_equal = false;      // both have weights and their tensor hashes are equal
  std::size_t steps_compared = 0;  // the shorter curve's length
  double steps_max_abs = 0;
  std::optional<std::size_t> first_differing_step;
  bool steps_start_close = true;  // the first differing step is within 1e-6 relative
  bool exact() const { return predictions_equal && !first_differing_step; }
};
RunDistance run_distance(const JobRunRecord& a, const JobRunRecord& b);

JobFinding judge_outputs(const std::vector<JobRunRecord>& runs,
                         std::optional<std::size_t> eval_records, ReproLevel level);
JobFinding judge_same_seed(const JobRunRecord& full, const JobRunRecord& again, ReproLevel level);
JobFinding judge_seed_override(const JobRunRecord& full, const JobRunRecord& overridden,
                               std::int64_t seed);
JobFinding judge_steps_mode(const JobRunRecord& steps, const JobRunRecord& full,
                            std::int64_t max_steps, const RunDistance& same_seed);
JobFinding judge_seed_reach(const std::string& seed_name, const JobRunRecord& steps,
                            const JobRunRecord& varied, const RunDistance& same_seed);

struct SubsampleCheckInput {
  std::string fraction;  // as given to the job
  std::string salt;
  const JobRunRecord* run = nullptr;         // subsample mode
  const JobRunRecord* overridden = nullptr;  // subsample mode with the seed override
  const JobRunRecord* full = nullptr;        // for the step-count note
};
JobFinding judge_subsample(const SubsampleCheckInput& in);

// The "metrics" finding from the job:metric-agrees check of the full run's predictions
// (policies/own_scores.hpp job_agreement_check): failed names the first disagreement.
JobFinding judge_metrics(const CheckResult& agreement);

// "fail" if any finding failed, else "warn" if any warned, else "pass".
FindingStatus overall_status(const std::vector<JobFinding>& findings);

}  // namespace reverify
