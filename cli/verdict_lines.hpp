#pragma once
// What `reverify status` and `reverify trigger --wait` print of a verdict the daemon serves
// (/v1/models, /v1/verifications/{id}): its stored summary (policies/headline.hpp), in the words
// and counts every other surface shows, read back by store/stored_verdict's one reader. An
// error's own explanation (the job's last lines, whose fault) is shown too: its headline says
// only whose fault it is.

#include <string>

#include <nlohmann/json.hpp>

#include "core/unix_time.hpp"
#include "policies/attention.hpp"

namespace reverify::cli {

// The REASON column is cut to this many bytes (the headline is cut, never the counts).
inline constexpr std::size_t kReasonBytes = 100;

// Why a version (an entry of /v1/models) stands where it does, in one line: what the verdict that
// put it there says, else the gate's reason.
std::string status_reason(const nlohmann::json& version, Attention attention, UnixSeconds now);

// "3 d ago" from a verdict brief's finished_at ("" when there is none).
std::string verdict_age(const nlohmann::json& brief, UnixSeconds now);

// "failed:out-of-tolerance: <headline> Checks: 1 failed, 33 passed." for a verification
// (/v1/verifications/{id}); "no verdict" when it has none.
std::string verdict_line(const nlohmann::json& verification);

}  // namespace reverify::cli
