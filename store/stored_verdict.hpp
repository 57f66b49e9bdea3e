#pragma once
// Reads a verdict the store kept (to_json(Verdict), policies/verdict_model.hpp) back into the
// typed Verdict: the one place a stored verdict's JSON is read by key, in C++ or SQL. What lists
// need of a verdict without its checks (its summary) is kept in typed columns beside it, written
// and read here too. Rows written by earlier
// versions are read too: a check that carried `tolerance` instead of `band` gets the band it
// meant ([reference - tolerance, reference + tolerance] for metrics, <= tolerance for
// distances), and a `power` object or an `underpowered` flag kept in a check's evidence counts as
// its power.

#include <optional>

#include <nlohmann/json.hpp>

#include "core/result.hpp"
#include "policies/headline.hpp"
#include "policies/verdict_model.hpp"
#include "store/sqlite.hpp"

namespace reverify {

// nullopt when `j` is not a verdict (no known class, a check without a name, kind or outcome).
std::optional<Verdict> verdict_from_json(const nlohmann::json& j);

// A summary as /v1 serves it (to_json(VerdictSummary), policies/headline.hpp), for the CLI that
// reads the daemon's answers; nullopt when `j` is not one.
std::optional<VerdictSummary> summary_from_json(const nlohmann::json& j);

// A verdict's summary as the verifications table keeps it (typed columns, migration 11): the
// column list for a SELECT or an UPDATE, in the order bind_summary binds and summary_at reads.
inline constexpr const char* kSummaryColumns =
    "headline, checks_failed, checks_uncalibrated, checks_passed, checks_not_judged, checks_notes, "
    "checks_notes_outside, failing_checks, underpowered, runs_needed, underpowered_checks, "
    "seed_runs";
inline constexpr int kSummaryColumnCount = 12;
// Binds the summary's kSummaryColumnCount values from parameter `first` on.
void bind_summary(sql::Statement& s, int first, const VerdictSummary& summary);
// The summary in the columns from `first` on; nullopt when the headline is NULL (no verdict).
std::optional<VerdictSummary> summary_at(const sql::Statement& s, int first, VerdictClass cls);

// Migration 11's fill: every row with a verdict gets its summary columns, and the check counts an
// explanation of an earlier version carried ("[29 passed, 1 failed, 0 uncalibrated; ...]",
// counted before the input checks were added) are dropped from its explanation (the column and
// the verdict's JSON alike), so that count_checks is the only count any surface shows.
Status fill_verdict_summaries(sqlite3* db);

}  // namespace reverify
