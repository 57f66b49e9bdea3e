#pragma once
// Fail closed (docs/verdicts.md "Fail closed: no check disappears"): the deciding checks a release
// defines, worked out from its manifest before its rebuild is judged, and what a verdict does with
// those it cannot compute. Pure; used by the verdict engine (policies/verdict.hpp).
//
// The deciding checks a release defines, at a level that enforces its checks (equivalent,
// bitwise; level rerunnable enforces none and defines none):
// - steps mode: "steps:<metric>" when the release recorded its curve (evaluation.steps);
// - full and subsample mode:
//   - "primary:<metric>", always;
//   - "segment:<segment>:<metric>" for each segment metric the tolerance has seed runs for
//     (tolerance.segment_seed_runs) that a verdict judges: the primary metric, or a metric the
//     release records for that segment (evaluation.segments); not one whose seed runs give no
//     honest band (all alike with no count to give the grain: computed, and not judged);
//   - "distribution:<statistic>" for each statistic with seed runs
//     (tolerance.distribution_seed_runs), except the flip rate where no decision can flip on the
//     release's own predictions (single values outside [0, 1] with no threshold declared);
//   - each parity check with seed runs (tolerance.parity_seed_runs);
//   - "weights:tensor_sha256" at level bitwise.
// A check with seed runs was computed on each of them: a rebuild whose outputs cannot give it is
// unlike every honest rerun, which is evidence, so it fails (a missing predictions file fails its
// checks too). A release whose own side cannot give it (its predictions unreadable, its own score
// undefined where seed runs were recorded) is a release record that cannot be read whole:
// error:manifest-invalid, never a pass with fewer checks.

#include <map>
#include <string>
#include <vector>

#include "core/manifest.hpp"
#include "core/statistic.hpp"
#include "policies/verdict_model.hpp"

namespace reverify {

struct DefinedCheck {
  std::string name;  // as the verdict names its row: "distribution:psi", "parity:class=3"
  CheckKind kind = CheckKind::primary;
};

// `distribution` is tolerance.distribution_seed_runs by statistic (short and full names read);
// `flip_rate_decides` is false for a ranking (its flip rate is left out) and where the release's
// predictions are single values outside [0, 1] and no threshold is declared (then the flip rate
// is never judged).
std::vector<DefinedCheck> defined_checks(
    const Manifest& manifest, const ToleranceSpec& tolerance,
    const std::map<Statistic, std::vector<double>>& distribution, bool steps_mode,
    bool flip_rate_decides);

// Why a family of checks has no rows at all, and on whose side.
struct FamilyGap {
  bool release_side = false;  // the release's reference lacks it: error:manifest-invalid
  std::string reason;         // "the rebuild wrote no predictions file"
  // The family's row is added even when the release defines none of its checks (a missing
  // predictions file fails whether or not the distribution checks were calibrated).
  bool always = false;
};

struct CoverageGaps {
  std::map<CheckKind, FamilyGap> families;
  // Defined checks whose "not judged" row comes from the release's own side (its own score of
  // the metric is undefined), by name, with why.
  std::map<std::string, std::string> release_side;
};

// Makes every defined check a deciding row of `checks`:
// - a family none of whose defined checks has a row gets one row, "<family>:*" (kind of the
//   family), failed and not_computed, naming its checks and the gap's reason (a generic one when
//   the gap is not known);
// - a defined check without a row, or whose row is not judged, fails as not_computed, saying
//   why (the row's own reason, else the family gap's);
// - a defined check reported as an uncalibrated note decides (uncalibrated: not a pass).
// Release-side gaps are not turned into rows: their reasons are returned, and the caller makes
// the verdict error:manifest-invalid. Fills `coverage` (defined, judged, not_computed).
std::vector<std::string> apply_coverage(std::vector<CheckResult>& checks,
                                        const std::vector<DefinedCheck>& defined,
                                        const CoverageGaps& gaps, CheckCoverage& coverage);

// "17 of the 35 deciding checks the release defines were judged; 18 could not be computed
// (distribution:ks, ...)", or "" when every one was.
std::string coverage_text(const CheckCoverage& coverage);

}  // namespace reverify
