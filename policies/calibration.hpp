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

// The bands of a calibration and their power: decide_verdict on an observation at the seed
// means and the statistics' means (its outcomes mean nothing; its bands and power do), and a
// steps-mode one on the recorded curve when same-seed reruns exist. `parity_shape`: the release's
// parity statistics against itself (every scope's size, policies/own_scores.hpp), so that the
// parity checks' bands and power are described too; empty without a scoring spec.
std::vector<CheckResult> describe_bands(const Manifest& manifest, const ToleranceSpec& tolerance,
                                        const VerdictPolicy& policy, std::size_t rows,
                                        std::size_t scores,
                                        const std::map<std::string, double>& detect = {},
                                        const std::vector<ParityStatistic>& parity_shape = {});

// Leave-one-out: each seed run judged as a full rebuild against the bands of the others, with
// decide_verdict itself. The statistics of the held-out run against the release are the
// recorded ones (rows/scores: the release's predictions' shape, for the flip-rate and KS steps),
// its parity checks' too (their scopes' sizes from `parity_shape`, as describe_bands), so that
// leave-one-out judges every check a rebuild is judged by.
struct LeaveOneOutRun {
  std::size_t index = 0;
  Verdict verdict;
};
struct LeaveOneOut {
  std::vector<LeaveOneOutRun> runs;
  std::size_t paged = 0;  // verdicts failed:*
};
LeaveOneOut leave_one_out(const Manifest& manifest, const ToleranceSpec& tolerance,
                          const VerdictPolicy& policy, std::size_t rows, std::size_t scores,
                          const std::map<std::string, double>& detect = {},
                          const std::vector<ParityStatistic>& parity_shape = {});

// Held-out runs paging more often than the false-page rate allows: with honest bands the number of
// runs paged is at most binomial(n, α), and fewer than 5% of calibrations would page `paged` or
// more (the binomial tail). The checks that failed in those runs are to blame, most often first.
struct LeaveOneOutExcess {
  std::size_t runs = 0;
  std::size_t paged = 0;
  double expected = 0;                                      // n·α
  double tail = 0;                                          // P(X >= paged), X ~ binomial(n, α)
  std::vector<std::pair<std::string, std::size_t>> blamed;  // check name, held-out runs it failed
};
inline constexpr double kLeaveOneOutTail = 0.05;
std::optional<LeaveOneOutExcess> leave_one_out_excess(const LeaveOneOut& loo,
                                                      double false_page_rate);
// "2 of 24 seed runs paged where 0.24 are expected ...; to blame: segment:radius=low:accuracy (2)
// ...": what leave-one-out found (the calibration's stored record of it).
std::string excess_text(const LeaveOneOutExcess& excess, double false_page_rate);
// excess_text and what to do, with the command that adds seed runs to `model_version`
// (suggested_command with `scope`, so it runs as printed): the warning `reverify calibrate`
// and `reverify plan` print.
std::string excess_warning(const LeaveOneOutExcess& excess, double false_page_rate,
                           const std::string& model_version, const std::string& scope);

// What leave-one-out found, as a calibration keeps it (store/, `reverify plan`): the held-out
// runs, how many paged at which false-page rate, and the excess with the checks to blame when
// that is more than the rate allows.
struct LeaveOneOutFinding {
  std::size_t runs = 0;
  std::size_t paged = 0;
  double false_page_rate = 0;
  std::optional<LeaveOneOutExcess> excess;

  // excess_warning, when there is an excess.
  std::optional<std::string> warning(const std::string& model_version,
                                     const std::string& scope) const;
};
LeaveOneOutFinding leave_one_out_finding(const LeaveOneOut& loo, double false_page_rate);

// {"runs", "paged", "false_page_rate", "excess": null | {"expected", "tail",
//  "blamed": [{"check", "runs"}]}, "warning": null | excess_text}; the reader ignores "warning"
// (it is made again from the rest) and returns nullopt for anything else.
nlohmann::json to_json(const LeaveOneOutFinding& finding);
std::optional<LeaveOneOutFinding> leave_one_out_finding_from_json(const nlohmann::json& j);

}  // namespace reverify
