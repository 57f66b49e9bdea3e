// rfc3339 prints what "%04d-%02u-%02uT%02ld:%02ld:%02ldZ" prints for every time, and
// parse_rfc3339 reads it back.

#include <doctest/doctest.h>

#include <chrono>
#include <cstdio>

#include "core/unix_time.hpp"

using namespace reverify;

namespace {

// The format as snprintf prints it: the reference the hand-written digits are checked against.
std::string printed(UnixSeconds t) {
  using namespace std::chrono;
  const sys_seconds tp{seconds{t}};
  const auto day = floor<days>(tp);
  const year_month_day ymd{day};
  const hh_mm_ss hms{tp - day};
  char buf[64];
  std::snprintf(buf, sizeof buf, "%04d-%02u-%02uT%02ld:%02ld:%02ldZ", int(ymd.year()),
                unsigned(ymd.month()), unsigned(ymd.day()), long(hms.hours().count()),
                long(hms.minutes().count()), long(hms.seconds().count()));
  return buf;
}

}  // namespace

TEST_CASE("rfc3339: every field's digits, the years 0 to 9999 and beyond them") {
  CHECK(rfc3339(0) == "1970-01-01T00:00:00Z");
  CHECK(rfc3339(1793588400) == "2026-11-02T03:00:00Z");
  CHECK(rfc3339(253402300799) == "9999-12-31T23:59:59Z");
  CHECK(rfc3339(-62167219200) == "0000-01-01T00:00:00Z");
  CHECK(rfc3339(253402300800) == "10000-01-01T00:00:00Z");
  CHECK(rfc3339(-62167219201) == "-001-12-31T23:59:59Z");
  // A step that is prime to every field's period visits every digit of each.
  for (UnixSeconds t = -62167219200 - 86400LL * 800; t < 253402300800 + 86400LL * 800;
       t += 7919LL * 3607) {
    CAPTURE(t);
    REQUIRE(rfc3339(t) == printed(t));
    if (t >= -62167219200 && t < 253402300800) {
      REQUIRE(parse_rfc3339(rfc3339(t)).ok());
      REQUIRE(*parse_rfc3339(rfc3339(t)) == t);
    }
  }
}
