#pragma once
// Time as the daemon stores and prints it: Unix seconds (UTC) in SQLite and in memory, RFC 3339
// on the wire. Durations in config and queries are written with a unit ("40d", "12h", "90s").

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "core/result.hpp"

namespace reverify {

using UnixSeconds = std::int64_t;

// The daemon reads time only through this, so tests drive it without sleeping.
using ClockFn = std::function<UnixSeconds()>;
UnixSeconds system_now();

std::string rfc3339(UnixSeconds t);  // "2026-11-02T03:00:00Z"
// Accepts "YYYY-MM-DDTHH:MM:SS[.fff](Z|+HH:MM|-HH:MM)".
Result<UnixSeconds> parse_rfc3339(std::string_view text);

// "45 s", "12 min", "3 h", "40 d": the rounded-down largest unit, for people (pages, `reverify
// status`); a negative duration reads as its size.
std::string duration_text(std::int64_t seconds);

// The units parse_duration_s takes, as every help text and error names them.
inline constexpr const char* kDurationUnits = "s, m, h, d, w or mo";

// "40d", "2w", "12h", "30m", "90s", "3mo" (a month is 30 days). Rejects a bare number (no unit),
// negatives and overflow; the error names the accepted forms.
Result<std::int64_t> parse_duration_s(std::string_view text);

}  // namespace reverify
