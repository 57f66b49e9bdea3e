#pragma once
// reverify's own numbers in a verdict (evaluation.scoring; docs/verdicts.md "Scoring"). Pure.
//
// With a scoring spec the verify layer scores the release's and the rebuild's predictions itself
// (policies/scoring.hpp, inputs from core/eval_columns.hpp) and the verdict engine
// (policies/verdict.hpp) judges those numbers instead of the ones the job reports:
// - the primary metric, when scoring computes a metric of its name: observed = reverify's score
//   of the rebuild's predictions, recorded = its score of the release's, and the band's examples
//   = the exact denominator of the release's count (accuracy: the eval set's records), never one
//   inferred from the values;
// - every segment scope reverify scores ("digit=3"): the primary metric and every metric the
//   manifest records for that segment that scoring computes, as "segment:<scope>:<metric>", with
//   the scope's exact count; segments the job reports under other names stay job-reported;
// - the job's own figures become a cross-check, "job:metric-agrees": each metric the job reports
//   (primary and segments) that reverify scores on the same rebuilt predictions must agree to
//   kJobAgreement relative; a disagreement fails it, naming the metric, the job's figure and the
//   predictions' ("the job's evaluation code and its predictions disagree").
// - a failed metric check of a scored scope says how many of the scope's records changed side
//   against the release (changed_side_text).
// - parity checks (policies/own_scores.cpp parity_statistics), each the rebuild's change against
//   the release in one scope, judged against the upper edge of a band from the same statistic in
//   each seed run (parity_seed_runs), so that the seed runs' own changes are the null
//   distribution:
//   - "parity:threshold=<t>[:segment:<scope>]" (binary and regression with thresholds): the share
//     of the scope's records whose decision at t differs from the release's;
//   - the confusion shift, per true class c of the whole eval set: "parity:class=<c>"
//     (multiclass, the argmax) and "parity:threshold=<t>:class=<c>" (binary, c = 0 or 1): the
//     share of class c's records whose predicted class changed; a failure names the classes they
//     moved into and how many ("12 of class 3's 50 records changed predicted class against the
//     release: 10 to class 8, 2 to class 5"). Not per segment: classes times segments would
//     spend alpha on thin cells, and a segment by true class is such a check already;
//   - "parity:argmax[:segment:<scope>]" (multiclass): the share of the scope's records whose
//     argmax class changed; not for a segment whose records are exactly one class's (a segment
//     keyed by the label), which "parity:class=<c>" judges already;
//   - ranking, per scope: "parity:top-k-set" and "parity:top-k-order", the share of the scope's
//     queries (of 2 records or more) whose top k, as a set / as an ordered list, differs from
//     the release's, and "parity:tau-distance", 1 - the mean Kendall tau-b of the two score
//     lists over the queries where it is defined. Their words count queries and name k ("12 of
//     the eval set's 80 queries have another top-3 order"), and each check's evidence carries
//     "unit": "queries" and "k", from which the headline counts them (policies/headline.hpp).
//   Counts (every statistic but the tau distance) are banded as a proportion over the scope's
//   records, members or queries (policies/bands.hpp: the angular t interval joined with the
//   rare-change allowance in whole counts; two-sided at 2 alpha, so alpha above it; the flip
//   rate's log-normal bound is far wider at few changes); the tau distance, continuous, gets a
//   distance's upper bound at alpha. They spend the distribution family's alpha (they compare
//   predictions with the release's) but fail as out-of-tolerance. Without recorded seed values
//   they are informational (uncalibrated, never deciding): a calibration from before them must
//   not turn every verdict uncalibrated.
// Seed runs: the calibration scores each seed run's predictions the same way (reported_form
// below), so bands are built from reverify's numbers too; a stored calibration from before keeps
// the job's seed values, judged with the exact count.

#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/manifest.hpp"
#include "policies/scoring.hpp"
#include "policies/verdict_model.hpp"

namespace reverify {

// Relative difference within which the job's figure and reverify's are the same number (a job
// computing in float32, or summing in another order, moves the last digits, never the sixth).
inline constexpr double kJobAgreement = 1e-6;

struct OwnScores {
  scoring::Scores release;
  scoring::Scores rebuild;
  std::optional<scoring::Parity> parity;    // the rebuild against the release
  std::optional<std::string> parity_error;  // why there is none, when it could not be computed
};

// What changed side in a scope, for the explanation of its failed metric check: at each
// threshold "N of its R records changed side at threshold t (B became wrong, C became right)",
// or the records whose argmax class changed; "" when parity has nothing for the scope. (The
// parity checks judge those changes against the seed runs' own.)
std::string changed_side_text(const scoring::Parity& parity, const std::string& segment);

// A run's scores in the shape a job reports its metrics in: the judged overall value of
// `primary_name` (absent when scoring has no metric of that name, or does not judge it), and per
// segment scope every judged metric by name.
struct ReportedForm {
  std::optional<double> primary;
  SegmentMetrics segments;
};
ReportedForm reported_form(const scoring::Scores& scores, const std::string& primary_name);

// The metric names judged per scored segment scope: the primary metric and every metric the
// manifest records for that scope, where scoring computes one of that name (in either run), each
// in scoring's spelling ("ndcg@k" for a recorded "ndcg@10"), as the seed runs record it
// (reported_form).
std::vector<std::string> scope_metrics(const scoring::ScopeScores& release_scope,
                                       const Evaluation& evaluation);

// One parity check's statistic, the rebuild's (or a seed run's) against the release.
struct ParityStatistic {
  std::string name;                  // "parity:class=3", "parity:top-k-order:segment:lang=de"
  double value = 0;                  // the share changed; the tau distance
  std::optional<std::size_t> count;  // a share: value = count / of; absent for the tau distance
  std::size_t of = 0;                // the scope's records, the class's members, the queries
  double resolution = 0;             // the tau distance's smallest step (one pair swapped)
  std::size_t top_k = 0;             // ranking: the k of the top k compared; 0 otherwise
  std::string what;                  // what changed, in one clause, for the explanation
};
// Every parity statistic of the whole set and every segment of at least one record.
std::vector<ParityStatistic> parity_statistics(const scoring::Parity& parity);

// Parity check name -> its statistic's value (what a seed run records in parity_seed_runs).
std::map<std::string, double> parity_values(const scoring::Parity& parity);

// The statistics of `shape` (the release's own parity_statistics: every scope's size) with the
// values a run recorded (parity_seed_runs): a held-out seed run in leave-one-out, or the seed
// means when calibrate describes its bands. A count is the value times the scope's size, rounded;
// statistics without a recorded value are left out.
std::vector<ParityStatistic> recorded_parity(const std::vector<ParityStatistic>& shape,
                                             const std::map<std::string, double>& values);

// The parity checks of a rebuild, at one-sided `alpha` each, with each band's power against
// tolerance.detect (keyed by the check's name, as a share of its scope; a tau distance in its own
// units); `banded` counts those with a bound (the distribution family's Bonferroni m) without
// judging.
std::vector<CheckResult> parity_checks(const std::vector<ParityStatistic>& statistics,
                                       const ToleranceSpec& tol, double alpha,
                                       const std::string& how_to_calibrate);
std::size_t banded_parity_checks(const std::vector<ParityStatistic>& statistics,
                                 const ToleranceSpec& tol);

// The "job:metric-agrees" check: the job's reported primary value and segment values against
// reverify's scores of the same rebuilt predictions. Not judged when the job reports nothing
// that scoring computes.
CheckResult job_agreement_check(const std::optional<double>& job_primary,
                                const std::string& primary_name, const SegmentMetrics& job_segments,
                                const scoring::Scores& rebuild);

// Without a scoring spec the job's numbers are the verdict's, so one more cross-check holds them
// to the predictions they describe: "job:evaluation-unchanged". When the rebuild's predictions
// are the release's bit for bit (equal values_sha256), or a same-seed rerun's (its recorded
// predictions_sha256), the job evaluating them must report the numbers recorded beside them: its
// primary metric and every segment value both report, to kJobAgreement relative. Another number
// fails the check ("the job's evaluation changed: same predictions, other numbers"), as
// out-of-tolerance: the job's evaluation code, not the model, moved, and every other check of the
// verdict compares numbers that code made. nullopt when the predictions reproduce neither
// (their numbers are expected to differ) or either hash is unknown.
struct EvaluationReference {
  std::string what;  // "the release", "same-seed rerun 2"
  std::optional<double> primary;
  const SegmentMetrics* segments = nullptr;
};
struct EvaluationSpec {
  std::string rebuilt_sha256;   // values_sha256 of the rebuild's predictions
  std::string released_sha256;  // of the release's ("" unknown)
  std::optional<double> released_primary;
  const SegmentMetrics* released_segments = nullptr;
  std::span<const SameSeedScore> same_seed;  // tolerance.same_seed_scores
  std::string primary_name;
  std::optional<double> rebuilt_primary;
  const SegmentMetrics* rebuilt_segments = nullptr;
};
std::optional<CheckResult> check_evaluation_unchanged(const EvaluationSpec& spec);

}  // namespace reverify
