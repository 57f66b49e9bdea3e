#pragma once
// The outcome of one check in a verification, and the verdict that combines them.
// Pure data: produced by policies/, stored by the daemon as JSON, rendered by pages and the CLI.
//
// A check's JSON (to_json, read back by verdict_from_json; attestations carry it):
//   {"name": "primary:accuracy", "kind": "primary", "outcome": "passed",
//    "informational": false,                    true: reported, never decides the verdict
//    "observed": 0.9693, "reference": 0.9689,   the rebuild's value; the seed mean (0 for
//    distances) "band": {"lower": 0.9540, "upper": 0.9821} accepted: lower <= observed <= upper;
//    "lower" is
//                                               null for one-sided upper bounds (printed as <=)
//    "margin": 0.0128,                          distance to the nearest edge, negative outside
//    "power": {"shift": 0.0166, "probability": 0.8, "detect": 0.02, "underpowered": false,
//              "runs_needed": null},            property 2 (null when the check has no band)
//    "explanation": "...", "evidence": {...}}   evidence: how the band was made (n, alpha, model)

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/verdict_class.hpp"

#include "core/enum_names.hpp"

namespace reverify {

enum class CheckKind { input, primary, segment, distribution, steps, weights };
template <>
struct EnumNames<CheckKind> {
  static constexpr EnumName<CheckKind> table[] = {
      {CheckKind::input, "input"},     {CheckKind::primary, "primary"},
      {CheckKind::segment, "segment"}, {CheckKind::distribution, "distribution"},
      {CheckKind::steps, "steps"},     {CheckKind::weights, "weights"},
  };
};
enum class CheckOutcome { passed, failed, uncalibrated };
template <>
struct EnumNames<CheckOutcome> {
  static constexpr EnumName<CheckOutcome> table[] = {
      {CheckOutcome::passed, "passed"},
      {CheckOutcome::failed, "failed"},
      {CheckOutcome::uncalibrated, "uncalibrated"},
  };
};

// Accepted observed values: lower <= x <= upper, or x <= upper when lower is absent.
struct CheckBand {
  std::optional<double> lower;
  double upper = 0;

  double half_width() const { return lower ? (upper - *lower) / 2 : upper; }
};

// The band's power (DESIGN property 2).
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
  std::string explanation;                             // one human sentence
  nlohmann::json evidence = nlohmann::json::object();  // n, alpha, band model, recorded value...
};

// What a verdict says about its bands' power: any check whose declared detect is not met.
struct PowerSummary {
  std::vector<std::string> underpowered;   // check names
  std::optional<std::size_t> runs_needed;  // the most any of them needs; absent if one cannot
  bool unreachable = false;                // some declared detect cannot be met by more runs
};

struct Verdict {
  VerdictClass cls = VerdictClass::uncalibrated;
  std::vector<CheckResult> checks;
  // Short: which check, by how much, against what band, from how many seed runs.
  std::string explanation;
  PowerSummary power;
  // error:job only: the job exited with this status (1-127) by itself, not killed for memory,
  // time or by the runner, or ran into a pids or memory bound the runner sets for every job
  // (then the status may be a kill's): the recorded job failed to rerun, which is evidence about
  // the build, not about reverify (DESIGN, verdict classes). Absent for every other error.
  std::optional<int> job_exit_status;
};

nlohmann::json to_json(const CheckResult& check);
nlohmann::json to_json(const Verdict& verdict);
// Inverse of to_json, for verdicts read back from the store.
std::optional<Verdict> verdict_from_json(const nlohmann::json& j);

// The power summary of a verdict's checks (deciding checks only).
PowerSummary summarize_power(const std::vector<CheckResult>& checks);

}  // namespace reverify
