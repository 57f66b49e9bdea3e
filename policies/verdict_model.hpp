#pragma once
// The verdict of one verification and its checks, as typed data: produced by the verdict engine
// (policies/verdict.hpp), stored by store/ (which alone reads its JSON back: store/stored_verdict),
// and read field by field by the pages, the pager, the signed summary and the CLI.
//
// A check's JSON (to_json below; the store keeps it, /v1 serves it, pages carry it):
//   {"name": "primary:accuracy", "kind": "primary", "outcome": "passed",
//    "informational": false,                  true: reported, never decides the verdict
//    "observed": 0.9693,                      the rebuild's value
//    "reference": 0.9689,                     the seed mean (0 for distances)
//    "band": {"lower": 0.954, "upper": 0.9821},  accepted: lower <= observed <= upper; "lower" is
//                                             null for a one-sided upper bound (printed as <=)
//    "margin": 0.0128,                        distance to the nearest edge, negative outside
//    "power": {"shift": 0.0166, "probability": 0.8, "detect": 0.02, "underpowered": false,
//              "runs_needed": null},          docs/design.md property 2 (null when the check has no
//              band)
//    "explanation": "...",
//    "evidence": {"seed_runs": 40, "cannot_fail": false, "fallback": "policy fallback",
//                 "not_computed": true, ...}}
// evidence holds the typed fields below (seed_runs, cannot_fail, fallback, not_computed) and
// everything else
// about how the band was made (alpha, model, mean, sd, ...), which is shown whole and never read
// by key.

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/enum_names.hpp"
#include "core/verdict_class.hpp"

namespace reverify {

// job: the job's own figures cross-checked against reverify's scoring; parity: records whose
// decision changed against the release (both policies/own_scores.hpp)
enum class CheckKind {
  input,
  primary,
  segment,
  distribution,
  steps,
  weights,
  job,
  parity,
  same_seed
};
template <>
struct EnumNames<CheckKind> {
  static constexpr EnumName<CheckKind> table[] = {
      {CheckKind::input, "input"},
      {CheckKind::primary, "primary"},
      {CheckKind::segment, "segment"},
      {CheckKind::distribution, "distribution"},
      {CheckKind::steps, "steps"},
      {CheckKind::weights, "weights"},
      {CheckKind::job, "job"},
      {CheckKind::parity, "parity"},
      {CheckKind::same_seed, "same-seed"},
  };
};

// not_judged: the check cannot say anything here (a metric undefined on a segment, a band that
// no honest rule can give): reported with the reason, never decides, never pages.
enum class CheckOutcome { passed, failed, uncalibrated, not_judged };
template <>
struct EnumNames<CheckOutcome> {
  static constexpr EnumName<CheckOutcome> table[] = {
      {CheckOutcome::passed, "passed"},
      {CheckOutcome::failed, "failed"},
      {CheckOutcome::uncalibrated, "uncalibrated"},
      {CheckOutcome::not_judged, "not-judged"},
  };
};

// Accepted observed values: lower <= x <= upper, or x <= upper when lower is absent.
struct CheckBand {
  std::optional<double> lower;
  double upper = 0;

  double half_width() const { return lower ? (upper - *lower) / 2 : upper; }
};

// The band's power (docs/design.md property 2; policies/power.hpp).
struct CheckPower {
  std::optional<double> shift;   // smallest shift caught with 80% probability; absent: none is
  std::optional<double> detect;  // the shift the owner declared must be caught (tolerance.detect)
  bool underpowered = false;     // detect declared and not met
  // Seed runs (in all) with which the band would meet detect; absent when not underpowered or
  // when no number of runs would (the spread itself is too wide at this alpha).
  std::optional<std::size_t> runs_needed;
};

struct CheckResult {
  std::string name;  // "primary:accuracy", "segment:digit=8:accuracy", "distribution:ks", ...
  CheckKind kind = CheckKind::primary;
  CheckOutcome outcome = CheckOutcome::uncalibrated;
  bool informational = false;       // reported, never decides the verdict
  std::optional<double> observed;   // the rebuild's value (or statistic)
  std::optional<double> reference;  // mean of seed runs / the released value / 0 for distances
  std::optional<CheckBand> band;
  std::optional<double> margin;  // distance to the nearest band edge; negative = outside
  std::optional<CheckPower> power;
  std::string explanation;  // one human sentence
  // How the band was made, where a reader needs it:
  std::optional<std::size_t> seed_runs;  // the runs behind the band
  bool cannot_fail = false;              // its bound is at or above the statistic's range
  std::optional<std::string> fallback;   // a band not calibrated: where it came from
  // A deciding check its release defines (policies/coverage.hpp) that this verification could
  // not compute: the explanation says why, and it fails (a family of them is one such row).
  bool not_computed = false;
  // The rest, for people; the headline (policies/headline.cpp) reads only a few keys a check
  // sets for it, the way it sets them (a ranking parity check's "unit", "k", "changed", "of").
  nlohmann::json evidence = nlohmann::json::object();

  bool decides() const { return !informational && outcome != CheckOutcome::not_judged; }
};

// What a verdict says about its bands' power: any check whose declared detect is not met.
struct PowerSummary {
  std::vector<std::string> underpowered;   // check names
  std::optional<std::size_t> runs_needed;  // the most any of them needs; absent if one cannot
  bool unreachable = false;                // some declared detect cannot be met by more runs
};

// How many of the deciding checks a release defines (policies/coverage.hpp) the verdict judged:
// `judged` < `defined` never passes and is never signed PASSED. 0 of 0 for verdicts that judge
// nothing (errors, input drift) and for rows stored before coverage was counted.
struct CheckCoverage {
  std::size_t defined = 0;
  std::size_t judged = 0;
  std::vector<std::string> not_computed;  // the defined checks that were not judged, by name

  bool complete() const { return judged >= defined; }
};

struct Verdict {
  VerdictClass cls = VerdictClass::uncalibrated;
  std::vector<CheckResult> checks;
  // Short: which check, by how much, against what band, from how many seed runs.
  std::string explanation;
  PowerSummary power;
  CheckCoverage coverage;
  // error:job only: the job exited with this status (1-127) by itself, not killed for memory,
  // time or by the runner, or ran into a pids or memory bound the runner sets for every job
  // (then the status may be a kill's): the recorded job failed to rerun, which is evidence about
  // the build, not about reverify (docs/design.md, verdict classes). Absent for every other error.
  std::optional<int> job_exit_status;
  // error:job only: the job exited 0 but what it wrote breaks the rebuild contract, in words that
  // name the file or field and the limit ("result.json: 83886080 bytes, over the contract's
  // limit of 16777216"): the job's fault, like job_exit_status.
  std::optional<std::string> job_output_fault;
  // The job ran unisolated because the config trusts its code (runner.trust_job_code): it could
  // have read the verifier's secrets or written what it reported anywhere. Said in the
  // explanation too, so every page and summary carries it.
  bool job_code_trusted = false;

  // The primary metric's check, when the verdict has one with an observed value.
  const CheckResult* primary() const;
};

// null for an absent band or power.
nlohmann::json to_json(const std::optional<CheckBand>& band);
nlohmann::json to_json(const std::optional<CheckPower>& power);
nlohmann::json to_json(const CheckResult& check);
nlohmann::json to_json(const Verdict& verdict);

}  // namespace reverify
