#include <doctest/doctest.h>

#include "policies/cron.hpp"

using namespace reverify;
using namespace std::chrono;

namespace {

sys_seconds at(int y, unsigned mo, unsigned d, int h = 0, int mi = 0) {
  return sys_days(year(y) / month(mo) / day(d)) + hours(h) + minutes(mi);
}

CronSchedule cron(const char* text) {
  auto s = CronSchedule::parse(text);
  REQUIRE_MESSAGE(s.ok(), text);
  return *s;
}

}  // namespace

TEST_CASE("fields: numbers, ranges, lists, steps and names") {
  const auto s = cron("*/15 9-17/4 * JAN,mar-may mon-fri");
  CHECK(s.matches(at(2026, 3, 2, 9, 0)));    // Monday
  CHECK(s.matches(at(2026, 3, 2, 13, 45)));  // 9, 13, 17
  CHECK_FALSE(s.matches(at(2026, 3, 2, 10, 0)));
  CHECK_FALSE(s.matches(at(2026, 3, 2, 9, 10)));
  CHECK_FALSE(s.matches(at(2026, 3, 1, 9, 0)));  // Sunday
  CHECK_FALSE(s.matches(at(2026, 2, 2, 9, 0)));  // February
  CHECK(s.matches(at(2026, 1, 5, 17, 30)));
}

TEST_CASE("a/n runs from a to the field's maximum; 7 is Sunday") {
  const auto s = cron("5/20 0 * * 7");
  CHECK(s.matches(at(2026, 11, 29, 0, 5)));  // a Sunday
  CHECK(s.matches(at(2026, 11, 29, 0, 45)));
  CHECK_FALSE(s.matches(at(2026, 11, 29, 0, 0)));
  CHECK_FALSE(s.matches(at(2026, 11, 30, 0, 5)));
}

TEST_CASE("day-of-month and day-of-week: OR when both restricted, AND when one is *") {
  const auto either = cron("0 0 13 * fri");  // the 13th, or any Friday
  CHECK(either.matches(at(2026, 11, 13)));   // Friday the 13th
  CHECK(either.matches(at(2026, 11, 6)));    // a Friday
  CHECK(either.matches(at(2026, 10, 13)));   // a Tuesday the 13th
  CHECK_FALSE(either.matches(at(2026, 11, 7)));
  const auto fridays = cron("0 0 * * fri");
  CHECK_FALSE(fridays.matches(at(2026, 10, 13)));
  // Vixie cron: a field starting with "*" counts as unrestricted, so */2 ANDs with the weekday.
  const auto stepped = cron("0 0 */2 * mon");
  CHECK(stepped.matches(at(2026, 11, 9)));         // Monday the 9th (odd day: 1, 3, ...)
  CHECK_FALSE(stepped.matches(at(2026, 11, 16)));  // Monday the 16th
  CHECK_FALSE(stepped.matches(at(2026, 11, 11)));  // Wednesday the 11th
}

TEST_CASE("next and previous fire times across month, year and leap-year boundaries") {
  const auto monthly = cron("@monthly");
  CHECK(*monthly.next_after(at(2026, 12, 15)) == at(2027, 1, 1));
  CHECK(*monthly.next_after(at(2027, 1, 1)) == at(2027, 2, 1));  // strictly after
  CHECK(*monthly.latest_at_or_before(at(2027, 1, 1)) == at(2027, 1, 1));
  CHECK(*monthly.latest_at_or_before(at(2027, 1, 1) - seconds(1)) == at(2026, 12, 1));
  const auto leap = cron("30 12 29 2 *");
  CHECK(*leap.next_after(at(2025, 3, 1)) == at(2028, 2, 29, 12, 30));
  CHECK(*leap.latest_at_or_before(at(2027, 6, 1)) == at(2024, 2, 29, 12, 30));
  // 2100 is not a leap year: the next 29 February after 2096 is in 2104.
  CHECK(*leap.next_after(at(2096, 3, 1)) == at(2104, 2, 29, 12, 30));
  const auto new_year = cron("59 23 31 12 *");
  CHECK(*new_year.next_after(at(2026, 12, 31, 23, 59)) == at(2027, 12, 31, 23, 59));
  CHECK(*new_year.latest_at_or_before(at(2027, 1, 1)) == at(2026, 12, 31, 23, 59));
}

TEST_CASE("a day that never exists never fires") {
  const auto never = cron("0 0 31 2 *");
  CHECK_FALSE(never.next_after(at(2026, 1, 1)).has_value());
  CHECK_FALSE(never.latest_at_or_before(at(2026, 1, 1)).has_value());
  const auto april = cron("0 0 31 4,6 *");
  CHECK_FALSE(april.next_after(at(2026, 1, 1)).has_value());
}

TEST_CASE("invalid expressions name the field") {
  for (const char* bad :
       {"* * * *", "60 * * * *", "* 24 * * *", "* * 0 * *", "* * * 13 *", "* * * * 8",
        "5-1 * * * *", "*/0 * * * *", "a * * * *", "1,,2 * * * *", "* * * FOO *", "@often"}) {
    auto s = CronSchedule::parse(bad);
    CAPTURE(bad);
    REQUIRE_FALSE(s.ok());
    CHECK(s.error().code == ErrorCode::invalid_argument);
    CHECK(s.error().message.find("cron") != std::string::npos);
  }
  CHECK(CronSchedule::parse("61 * * * *").error().message.find("minute") != std::string::npos);
  CHECK(CronSchedule::parse("* * * * 9").error().message.find("day-of-week") != std::string::npos);
}
