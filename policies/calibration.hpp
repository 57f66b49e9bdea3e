#pragma once
// Calibration data (docs/design.md, "Verdict" -> tolerance), pure: seed-only reruns -> the
// ToleranceSpec the verdict reads, and the leave-one-out estimate of how often honest reruns page.

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/manifest.hpp"
#include "core/predictions.hpp"
#include "policies/own_scores.hpp"
#include "policies/scoring.hpp"
#include "policies/verdict.hpp"

namespace reverify {

// What one seed-only (or same-seed) rerun produced.
struct SeedRun {
  std::optional<double> primary;
  SegmentMetrics segments;
  std::optional<std::vector<double>> steps;
  const Predictions* predictions = nullptr;  // not owned
  // evaluation.scoring: parity check -> the share of its scope's records whose decision differs
  // from the release's (parity_values, policies/own_scores.hpp)
  std::map<std::string, double> parity;
};

// Seed-only reruns -> seed_runs[primary_name], segment_seed_runs, and distribution_seed_runs:
// each statistic between the release's predictions (the reference side) and each run's. Runs
// without predictions (or without a release to compare with) add no distribution values.
ToleranceSpec seed_run_tolerance(const std::string& primary_name, const std::vector<SeedRun>& runs,
                                 const Predictions* release, double flip_threshold = 0.5);

// Same-seed reruns -> steps_same_seed_runs (their step curves) and, for each run with
// predictions, same_seed_scores: its predictions' values_sha256, its primary and its segments.
ToleranceSpec same_seed_tolerance(const std::vector<SeedRun>& runs);

// Seed runs that are not draws from the seed spread: a run whose predictions were the release's
// own, bit for bit (every distribution statistic against the release exactly 0: a seed override
// that reproduces the release, e.g. one equal to a recorded seed), or a copy of an earlier run's
// (every statistic equal to an earlier run's, to the last bit). Either would narrow or widen every
// band at once (one release copy doubled every distribution bound of a measured model). Their
// indices among the `primary_name` seed runs, in order; only runs whose statistics were recorded
// can be told apart.
struct CopiedRuns {
  std::vector<std::size_t> of_release;
  std::vector<std::size_t> of_other_runs;
  bool empty() const { return of_release.empty() && of_other_runs.empty(); }
};
CopiedRuns copied_runs(const ToleranceSpec& spec, const std::string& primary_name);

// `spec` without the seed runs at `indices` of its `primary_name` runs: every series of values
// holding one per run (seed_runs, segment_seed_runs, distribution_seed_runs, parity_seed_runs)
// loses them. The seed_overrides stay: a seed that reproduced the release must not be tried again.
ToleranceSpec without_runs(ToleranceSpec spec, const std::string& primary_name,
                           const std::vector<std::size_t>& indices);

// `more` appended to `base`, key by key (the runs of an extended calibration).
ToleranceSpec appended(ToleranceSpec base, const ToleranceSpec& more);

// The number of seed runs a spec holds for its primary metric.
std::size_t seed_run_count(const ToleranceSpec& spec, const std::string& primary_name);

// The low end of what a spread measured from n runs may really be, as a fraction of it: the
// one-sided lower confidence limit of a standard deviation, sqrt((n - 1) / chi2(n - 1, conf)).
// REQUIRES: n >= 2.
double spread_lower_limit(std::size_t n, double confidence = 0.95);

// The spec with every seed-run spread scaled by `factor` around its centre: metrics and segment
// metrics around their mean, distribution statistics on the log scale (as their bounds are
// modelled, without the half-step offset of KS and flip rate) around their geometric mean (zeros
// kept), parity values around their mean (never below 0). Same-seed step curves are left as they
// are.
ToleranceSpec with_spread_scaled(ToleranceSpec spec, double factor);

// What calibration knows of the release beyond its manifest, so that the bands it describes and
// the held-out runs it judges are a verification's own: the shape of the release's predictions
// (the distribution statistics' steps and whether every value is in [0, 1]) and, with
// evaluation.scoring, reverify's scores of them (the exact counts a verification judges a
// proportion over) and every parity scope's size (the release scored against itself). Empty
// without predictions: no distribution or parity checks, the job's numbers alone.
struct ReleaseShape {
  std::size_t rows = 0;                   // records of the release's predictions
  std::size_t scores = 0;                 // values of them (rows x columns)
  bool unit_interval = false;             // every value in [0, 1]
  std::optional<scoring::Scores> scored;  // evaluation.scoring: the release's own scores
  std::vector<ParityStatistic> parity;    // the release against itself: each scope's size
};

// The bands of a calibration and their power: decide_verdict on an observation at the seed
// means and the statistics' means, judged as run_verification judges a rebuild (reverify's scores
// with a scoring spec, the same checks, scopes and metrics); its outcomes mean nothing, its bands
// and power do. Checks a rebuild gets that no seed band makes (job:metric-agrees against the
// rebuild's own predictions, the same-seed note against the same-seed reruns) are listed as
// not judged, saying what judges them. Then a steps-mode one on the recorded curve when same-seed
// reruns exist.
std::vector<CheckResult> describe_bands(const Manifest& manifest, const ToleranceSpec& tolerance,
                                        const VerdictPolicy& policy, const ReleaseShape& release,
                                        const std::map<std::string, double>& detect = {});

// Leave-one-out: each seed run judged exactly as `reverify run --seed-override` would judge a
// rebuild that produced its numbers, against the bands the other runs give, with decide_verdict
// itself: the same checks, scopes and metric set (with a scoring spec, reverify's scores of every
// scored scope with the release's exact counts; without, the segment metrics the manifest
// records), its recorded distribution and parity statistics against the release. A series that
// does not hold one value per run (a calibration extended by runs that recorded other metrics)
// cannot say what the held-out run scored: that check is left out of every fold.
struct LeaveOneOutRun {
  std::size_t index = 0;
  Verdict verdict;
};
struct LeaveOneOut {
  std::vector<LeaveOneOutRun> runs;
  std::size_t paged = 0;  // verdicts failed:*
};
LeaveOneOut leave_one_out(const Manifest& manifest, const ToleranceSpec& tolerance,
                          const VerdictPolicy& policy, const ReleaseShape& release,
                          const std::map<std::string, double>& detect = {});

// Held-out runs paging more often than the false-page rate allows: with honest bands the number of
// runs paged is at most binomial(n, α), and fewer than 5% of calibrations would page `paged` or
// more (the binomial tail). The checks that failed in those runs are to blame, most often first,
// each with the tolerance.floor that would have held every held-out run of it (metric checks: the
// largest distance of a failing held-out value from its fold's seed mean; distribution
// statistics: the largest failing value; absent for checks without a floor, the parity checks).
struct LeaveOneOutBlame {
  std::string check;
  std::size_t runs = 0;         // held-out runs it failed
  std::optional<double> floor;  // tolerance.floor that holds them all

  bool operator==(const LeaveOneOutBlame&) const = default;
};
struct LeaveOneOutExcess {
  std::size_t runs = 0;
  std::size_t paged = 0;
  double expected = 0;  // n·α
  double tail = 0;      // P(X >= paged), X ~ binomial(n, α)
  std::vector<LeaveOneOutBlame> blamed;
};
inline constexpr double kLeaveOneOutTail = 0.05;
std::optional<LeaveOneOutExcess> leave_one_out_excess(const LeaveOneOut& loo,
                                                      double false_page_rate);
// "2 of 24 seed runs paged where 0.24 are expected at false_page_rate 0.01 (...): these bands are
// narrower than the runs' own spread": what leave-one-out found, without the checks.
std::string excess_text(const LeaveOneOutExcess& excess, double false_page_rate);
// "segment:radius=low:accuracy (2 runs), ...": the checks to blame, every one.
std::string blamed_text(const LeaveOneOutExcess& excess);
// What clears it: a tolerance.floor for each blamed check that takes one (the first few named,
// with the value that holds every held-out run, as `reverify capture --floor` records it), and
// more seed runs (`reverify calibrate MODEL@VERSION --seeds N`, suggested_command with `scope`,
// so it runs as printed), which narrow nothing but measure the spread better.
std::string excess_action(const LeaveOneOutExcess& excess, const std::string& model_version,
                          const std::string& scope);
// excess_text, "; to blame: " blamed_text, then excess_action: the WARNING `reverify calibrate`
// and `reverify plan` print.
std::string excess_warning(const LeaveOneOutExcess& excess, double false_page_rate,
                           const std::string& model_version, const std::string& scope);

// What leave-one-out found, as a calibration keeps it (store/, `reverify plan`): the held-out
// runs, how many paged at which false-page rate, and the excess with the checks to blame when
// that is more than the rate allows. A finding stored by an earlier leave-one-out, which judged
// checks no verification makes (every scored metric of a segment as an extra segment), is read
// back `stale`, without its excess: it warns of nothing until the version is calibrated again.
struct LeaveOneOutFinding {
  std::size_t runs = 0;
  std::size_t paged = 0;
  double false_page_rate = 0;
  std::optional<LeaveOneOutExcess> excess;
  bool stale = false;

  // excess_text and excess_action (the checks to blame are `excess->blamed`), when there is an
  // excess.
  std::optional<std::string> warning(const std::string& model_version,
                                     const std::string& scope) const;
};
LeaveOneOutFinding leave_one_out_finding(const LeaveOneOut& loo, double false_page_rate);

// {"judged_as": "verification", "runs", "paged", "false_page_rate", "excess": null |
//  {"expected", "tail", "blamed": [{"check", "runs", "floor"?}]}, "warning": null | excess_text};
// the reader ignores "warning" (it is made again from the rest), reads a finding without
// "judged_as" as stale, and returns nullopt for anything else.
nlohmann::json to_json(const LeaveOneOutFinding& finding);
std::optional<LeaveOneOutFinding> leave_one_out_finding_from_json(const nlohmann::json& j);

}  // namespace reverify
