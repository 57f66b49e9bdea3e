#pragma once
// Pieces shared by the HTML pages (pages.hpp): each model version's status in attention order,
// and the cells and tables more than one page shows.

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "api/snapshot.hpp"
#include "api/version_status.hpp"

namespace reverify {

// The gate's max_age when a caller gives none (api.default_max_age_s; 40 d without a config).
std::int64_t default_max_age_s(const ReadModel& model);

// Every listed (not removed) version with its status, most urgent first: by attention rank, then
// the newest problem first, then by name.
std::vector<VersionStatus> statuses_by_attention(const ReadModel& model, UnixSeconds now);
// Sets model.standing and standing_until as of `now` (build_read_model calls it).
void attach_standing(ReadModel& model, UnixSeconds now);
// The standing as of `now`: the model's own while it holds, else worked out again.
std::shared_ptr<const std::vector<VersionStatus>> standing_at(const ReadModel& model,
                                                              UnixSeconds now);

// A string member of a stored JSON object, "" when it is missing or not a string (a page never
// throws on what it reads back).
std::string string_field(const nlohmann::json& object, const char* key);

// Store text made safe for a page: secrets redacted, then HTML-escaped.
std::string page_text(const ReadModel& model, const std::string& text);

// Where a verification runs or ran, in words: "slurm 12: pending in partition gpu (Resources)",
// "slurm 12: ran in partition gpu on node17", "process 4711:90210" (kind, reference, and the job's
// latest standing when its runner queues jobs). Not escaped.
std::string runner_text(const VerificationRow& row);

// A command the pages suggest, as <code>, runnable as printed: "reverify <args>" then the
// daemon's --config (ApiConfig::command_scope). `args` is escaped here.
std::string command_html(const ReadModel& model, const std::string& args);

// What a rank means to an operator, as a coloured label ("failed", "cannot verify", ...).
std::string attention_html(Attention attention);
// The same for a version: "underpowered" where its rank comes from an underpowered pass.
std::string attention_html(const VersionStatus& status);

// Table rows (<tr>…</tr>) and their header row, shared by the status and the versions page.
void version_status_header(std::ostream& out);
void version_status_row(std::ostream& out, const ReadModel& model, const VersionStatus& status,
                        const VerificationRow* active, UnixSeconds now);

// A verification's verdict as a person reads it first: its class, the headline (the cause in plain
// words, policies/headline.hpp), the checks counted with notes apart (its stored summary, as every
// surface shows it), the full explanation folded below.
void verdict_headline_html(std::ostream& out, const ReadModel& model, const VerificationRow& row);

// The checks of a verification's verdict in reading order (failures first, notes tagged as
// notes): observed, band (drawn), margin, why; a failure whose evidence the verification page
// lists in full (the tensors that differ, the files that moved) links to it.
// REQUIRES: row.verdict.
void checks_table(std::ostream& out, const ReadModel& model, const VerificationRow& row);

// "?page=" navigation for lists of `total` rows shown `per_page` at a time.
void pagination(std::ostream& out, const std::string& path, std::size_t page, std::size_t total,
                std::size_t per_page);

}  // namespace reverify
