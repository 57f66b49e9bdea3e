#include "core/unix_time.hpp"

#include <charconv>
#include <chrono>
#include <cstdio>
#include <limits>

namespace reverify {

UnixSeconds system_now() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string rfc3339(UnixSeconds t) {
  using namespace std::chrono;
  sys_seconds tp{seconds{t}};
  auto day = floor<days>(tp);
  year_month_day ymd{day};
  hh_mm_ss hms{tp - day};
  const int year = int(ymd.year());
  if (year < 0 || year > 9999) {
    char buf[64];  // room for any year the format could print
    std::snprintf(buf, sizeof buf, "%04d-%02u-%02uT%02ld:%02ld:%02ldZ", year, unsigned(ymd.month()),
                  unsigned(ymd.day()), long(hms.hours().count()), long(hms.minutes().count()),
                  long(hms.seconds().count()));
    return buf;
  }
  // The digits written by hand: snprintf's format parsing was an eighth of the gate's time in
  // user space (every answer prints one or two times; docs/benchmarks.md "Where the time goes").
  std::string out = "0000-00-00T00:00:00Z";
  const auto put = [&out](std::size_t at, long value, int width) {
    for (int i = width - 1; i >= 0; --i, value /= 10)
      out[at + std::size_t(i)] = char('0' + value % 10);
  };
  put(0, year, 4);
  put(5, long(unsigned(ymd.month())), 2);
  put(8, long(unsigned(ymd.day())), 2);
  put(11, long(hms.hours().count()), 2);
  put(14, long(hms.minutes().count()), 2);
  put(17, long(hms.seconds().count()), 2);
  return out;
}

namespace {
bool read_int(std::string_view text, std::size_t pos, std::size_t len, int& out) {
  if (pos + len > text.size())
    return false;
  for (std::size_t i = pos; i < pos + len; ++i) {
    if (text[i] < '0' || text[i] > '9')
      return false;
  }
  std::from_chars(text.data() + pos, text.data() + pos + len, out);
  return true;
}
}  // namespace

Result<UnixSeconds> parse_rfc3339(std::string_view text) {
  auto bad = [&] {
    return make_error(
        ErrorCode::parse,
        "expected an RFC 3339 time like 2026-11-02T03:00:00Z, got \"" + std::string(text) + "\"");
  };
  int y = 0, mo = 0, d = 0, h = 0, mi = 0, s = 0;
  if (text.size() < 20 || !read_int(text, 0, 4, y) || text[4] != '-' || !read_int(text, 5, 2, mo) ||
      text[7] != '-' || !read_int(text, 8, 2, d) || (text[10] != 'T' && text[10] != 't') ||
      !read_int(text, 11, 2, h) || text[13] != ':' || !read_int(text, 14, 2, mi) ||
      text[16] != ':' || !read_int(text, 17, 2, s)) {
    return bad();
  }
  std::size_t pos = 19;
  if (text[pos] == '.') {
    ++pos;
    while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9')
      ++pos;
  }
  long offset = 0;
  if (pos < text.size() && (text[pos] == 'Z' || text[pos] == 'z') && pos + 1 == text.size()) {
    offset = 0;
  } else if (pos + 6 == text.size() && (text[pos] == '+' || text[pos] == '-')) {
    int oh = 0, om = 0;
    if (!read_int(text, pos + 1, 2, oh) || text[pos + 3] != ':' ||
        !read_int(text, pos + 4, 2, om)) {
      return bad();
    }
    offset = (text[pos] == '+' ? 1 : -1) * (oh * 3600L + om * 60L);
  } else {
    return bad();
  }
  using namespace std::chrono;
  year_month_day ymd{year{y}, month{unsigned(mo)}, day{unsigned(d)}};
  if (!ymd.ok() || h > 23 || mi > 59 || s > 60)
    return bad();
  return sys_days{ymd}.time_since_epoch().count() * 86400L + h * 3600L + mi * 60L + s - offset;
}

Result<std::int64_t> parse_duration_s(std::string_view text) {
  auto bad = [&](const std::string& why) {
    return make_error(ErrorCode::invalid_argument,
                      why + " (expected a duration like 40d, 12h, 30m, 90s, 3mo), got \"" +
                          std::string(text) + "\"");
  };
  if (text.empty())
    return bad("empty duration");
  const char last = text.back();
  // A bare number is refused: "40" meant as days would silently be 40 seconds.
  if (last >= '0' && last <= '9')
    return bad(std::string("a duration needs its unit (") + kDurationUnits + ")");
  std::int64_t unit = 1;
  std::size_t unit_chars = 1;
  if (text.size() >= 2 && text.substr(text.size() - 2) == "mo") {
    unit = 30 * 86400;  // a month of 30 days: a cadence's period, not a calendar month
    unit_chars = 2;
  } else
    switch (last) {
      case 's':
        unit = 1;
        break;
      case 'm':
        unit = 60;
        break;
      case 'h':
        unit = 3600;
        break;
      case 'd':
        unit = 86400;
        break;
      case 'w':
        unit = 7 * 86400;
        break;
      default:
        return bad("unknown unit");
    }
  const std::string_view digits = text.substr(0, text.size() - unit_chars);
  std::int64_t n = 0;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), n);
  if (digits.empty() || ec != std::errc() || end != digits.data() + digits.size() || n < 0) {
    return bad("not a non-negative whole number");
  }
  if (n > std::numeric_limits<std::int64_t>::max() / unit)
    return bad("too large");
  return n * unit;
}

std::string duration_text(std::int64_t seconds) {
  if (seconds < 0)
    seconds = -seconds;
  if (seconds < 120)
    return std::to_string(seconds) + " s";
  if (seconds < 7200)
    return std::to_string(seconds / 60) + " min";
  if (seconds < 2 * 86400)
    return std::to_string(seconds / 3600) + " h";
  return std::to_string(seconds / 86400) + " d";
}

}  // namespace reverify
