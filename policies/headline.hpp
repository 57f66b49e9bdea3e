#pragma once
// How a verdict reads to a person: its headline sentence, the order its checks are shown in, and
// how many of them are failures and how many only notes. Every place that shows a verdict (the
// verification and version pages, the status page and `reverify status`, `reverify run`'s report,
// `trigger --wait`, the gate's reason, a page's summary, a signed summary) goes through here, so
// they lead with the same cause and count the same way: count_checks is the one count of a
// verdict's checks, and a verdict's explanation carries none of its own. Pure.
//
// Reading order: the checks that failed the verdict first, by what they mean (inputs, then the
// model's numbers: primary, segments, the job's own figures, steps, weights; then its
// predictions: parity, distribution), the worst relative to its band first within a kind; then
// the uncalibrated ones, the notes outside their band, the passed, the not judged and last the
// notes inside their band. A note (an informational check, or any check of a level that enforces
// none) never comes before a failure and is never counted as one.
//
// The headline is one sentence in plain words from the failures in that order: no hashes, no
// commands, no Markdown. "An input moved" is said only when an input check failed; a check the
// release defines that could not be computed (CheckResult::not_computed) is said to be so, with
// its reason, never "outside its band". A ranking's parity failure counts queries and names k
// ("11 of 75 queries of market=us have another top-10 order than the release's"), never
// records changing a decision. The full
// explanation and the evidence stay beside it, where each place shows them.

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "core/enum_names.hpp"
#include "policies/verdict_model.hpp"

namespace reverify {

// What a check is to a reader of its verdict.
enum class CheckReading { failure, uncalibrated, note, passed, not_judged };
template <>
struct EnumNames<CheckReading> {
  static constexpr EnumName<CheckReading> table[] = {
      {CheckReading::failure, "failure"},
      {CheckReading::uncalibrated, "uncalibrated"},
      {CheckReading::note, "note"},
      {CheckReading::passed, "passed"},
      {CheckReading::not_judged, "not-judged"},
  };
};

// A note: informational, or a check of a verdict whose level enforces none (a passed verdict
// with a failed deciding check). Otherwise the check's outcome.
CheckReading reading_of(const Verdict& verdict, const CheckResult& check);

// A check's reading in the words every surface uses: "failed", "passed", "uncalibrated", "not
// judged", "note", "note: outside its band".
std::string reading_text(const Verdict& verdict, const CheckResult& check);

// The checks in reading order (pointers into verdict.checks).
std::vector<const CheckResult*> reading_order(const Verdict& verdict);

struct CheckCounts {
  std::size_t failed = 0;
  std::size_t uncalibrated = 0;
  std::size_t passed = 0;
  std::size_t not_judged = 0;
  std::size_t notes = 0;
  std::size_t notes_outside = 0;  // notes whose value is outside their band

  std::size_t deciding() const { return failed + uncalibrated + passed; }
  bool operator==(const CheckCounts&) const = default;
};
CheckCounts count_checks(const Verdict& verdict);
// "1 failed, 20 passed, 1 note (outside its band)": only the non-zero parts.
std::string counts_text(const CheckCounts& counts);

// The verdict's headline, one sentence ending in a full stop.
std::string verdict_headline(const Verdict& verdict);

// What every surface shows of a verdict, made once when the verdict is made (the store keeps it as
// typed columns beside the verdict, so lists and the gate read it without the checks): the
// headline, the checks counted, the failures by name in reading order, and the power facts.
struct VerdictSummary {
  VerdictClass cls = VerdictClass::uncalibrated;
  std::string headline;
  CheckCounts counts;
  std::vector<std::string> failing;              // the failures (not notes), in reading order
  bool underpowered = false;                     // a deciding band cannot catch its declared detect
  std::optional<std::size_t> runs_needed;        // seed runs in all that would meet every detect
  std::vector<std::string> underpowered_checks;  // their names
  std::optional<std::size_t> seed_runs;          // the most seed runs behind any of its bands

  bool operator==(const VerdictSummary&) const = default;
};
VerdictSummary verdict_summary(const Verdict& verdict);

// The one line a text surface prints: "<headline> Checks: 1 failed, 33 passed." (the counts left
// out when the verdict has no checks).
std::string summary_text(const VerdictSummary& summary);
// The same on one line for a narrow column: the headline's first sentence, cut (ending in "…")
// so that the counts always fit after it.
std::string summary_text(const VerdictSummary& summary, std::size_t max_bytes);

// {"class", "headline", "counts": {"failed", "uncalibrated", "passed", "not_judged", "notes",
//  "notes_outside"}, "counts_text", "text" (summary_text), "failing", "underpowered",
//  "runs_needed", "underpowered_checks", "seed_runs"}: how /v1 serves it (store/stored_verdict
// reads it back for the CLI).
nlohmann::json to_json(const VerdictSummary& summary);

}  // namespace reverify
