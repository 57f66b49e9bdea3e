#pragma once
// 5-field cron expressions (minute hour day-of-month month day-of-week), evaluated in UTC.
// Supported: "*", numbers, ranges "a-b", lists "a,b", steps "*/n" and "a-b/n" and "a/n" (a to the
// field's maximum), month names JAN-DEC, weekday names SUN-SAT, day-of-week 7 = Sunday, and the
// aliases @yearly @annually @monthly @weekly @daily @midnight @hourly.
// Day-of-month vs day-of-week follows Vixie cron: when both fields are restricted (neither starts
// with "*"), a day matches if EITHER matches; otherwise both must match.
// An expression that can never fire (only days that do not exist: "0 0 31 2 *", "0 0 30 2 *",
// "0 0 31 4,6 *") is refused by parse, naming the fields: a cycle that never starts would
// verify nothing, silently. 29 February fires (in leap years).

#include <bitset>
#include <chrono>
#include <optional>
#include <string>
#include <string_view>

#include "core/result.hpp"

namespace reverify {

class CronSchedule {
 public:
  // Error (invalid_argument) names the field and what was expected.
  static Result<CronSchedule> parse(std::string_view expression);

  bool matches(std::chrono::sys_seconds t) const;  // t's minute matches (seconds ignored)
  // The first fire time strictly after t / at or before t. Absent only if none within 28 years
  // (29 February around a century that is not a leap year, such as 2100).
  std::optional<std::chrono::sys_seconds> next_after(std::chrono::sys_seconds t) const;
  std::optional<std::chrono::sys_seconds> latest_at_or_before(std::chrono::sys_seconds t) const;

  const std::string& expression() const { return expression_; }

 private:
  bool day_matches(std::chrono::sys_days day) const;

  std::string expression_;
  std::bitset<60> minutes_;
  std::bitset<24> hours_;
  std::bitset<32> days_of_month_;  // 1..31
  std::bitset<13> months_;         // 1..12
  std::bitset<7> days_of_week_;    // 0 = Sunday
  bool dom_star_ = false;
  bool dow_star_ = false;
};

}  // namespace reverify
