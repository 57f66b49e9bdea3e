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

TEST_CASE("an expression that names only days that never exist is refused, naming its fields") {
  for (const char* never : {"0 0 31 2 *", "0 0 30 2 *", "0 0 30,31 2 *", "0 0 31 4,6,9,11 *",
                            "0 0 31 2 */2", "*/5 * 30-31 feb *"}) {
    CAPTURE(never);
    auto s = CronSchedule::parse(never);
    REQUIRE_FALSE(s.ok());
    CHECK(s.error().code == ErrorCode::invalid_argument);
    CHECK(s.error().message.find("never fires") != std::string::npos);
    CHECK(s.error().message.find("day-of-month") != std::string::npos);
  }
  CHECK(CronSchedule::parse("0 0 31 2 *").error().message ==
        "cron expression \"0 0 31 2 *\" never fires: no month it names (month 2) has a "
        "day-of-month it names (31)");
  // Each of these fires, and soon after 2026 (a check that it does, within 28 years).
  for (const char* fires : {"0 0 29 2 *", "0 0 31 2,3 *", "0 0 31 2 mon", "0 0 30 * *",
                            "0 0 31 * *", "0 0 * 2 *", "0 0 1 2 */3", "@yearly"}) {
    CAPTURE(fires);
    CHECK(cron(fires).next_after(at(2026, 1, 1)).has_value());
  }
}

TEST_CASE("every month and day of the month from 28 on: refused exactly when no such date exists") {
  constexpr unsigned kLongest[13] = {0, 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  for (unsigned month = 1; month <= 12; ++month) {
    for (unsigned day_of_month = 28; day_of_month <= 31; ++day_of_month) {
      const std::string text =
          "0 0 " + std::to_string(day_of_month) + " " + std::to_string(month) + " *";
      CAPTURE(text);
      const auto parsed = CronSchedule::parse(text);
      CHECK(parsed.ok() == (day_of_month <= kLongest[month]));
      if (parsed.ok())  // and the date it names comes within 28 years (29 February: in 2028)
        CHECK(parsed->next_after(at(2026, 1, 1)).has_value());
    }
  }
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
