#include "policies/cron.hpp"

#include <array>
#include <cctype>
#include <charconv>
#include <map>
#include <sstream>
#include <vector>

namespace reverify {
namespace {

using namespace std::chrono;

struct FieldSpec {
  const char* name;
  int min;
  int max;
  std::vector<std::string> names;  // names[i] means min + i
};

const std::array<FieldSpec, 5> kFields{{
    {"minute", 0, 59, {}},
    {"hour", 0, 23, {}},
    {"day-of-month", 1, 31, {}},
    {"month",
     1,
     12,
     {"JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"}},
    {"day-of-week", 0, 7, {"SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"}},
}};

constexpr int kSearchDays = 366 * 28;  // the weekday x leap-year cycle

Error field_error(const FieldSpec& f, std::string_view text, const std::string& what) {
  return make_error(ErrorCode::invalid_argument, "cron " + std::string(f.name) + " field \"" +
                                                     std::string(text) + "\": " + what +
                                                     " (allowed " + std::to_string(f.min) + "-" +
                                                     std::to_string(f.max) + ")");
}

std::optional<int> parse_value(const FieldSpec& f, std::string_view text) {
  std::string upper(text);
  for (auto& ch : upper)
    ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  for (std::size_t i = 0; i < f.names.size(); ++i)
    if (upper == f.names[i])
      return f.min + static_cast<int>(i);
  int value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty())
    return std::nullopt;
  return value;
}

// Sets the bits of one field; values are offsets from 0 (day-of-week 7 folds onto 0).
Result<std::vector<int>> parse_field(const FieldSpec& f, std::string_view text) {
  std::vector<int> values;
  std::size_t begin = 0;
  while (begin <= text.size()) {
    const std::size_t comma = std::min(text.find(',', begin), text.size());
    const std::string_view item = text.substr(begin, comma - begin);
    begin = comma + 1;
    if (item.empty())
      return field_error(f, text, "empty list item");
    std::string_view range = item;
    int step = 1;
    if (auto slash = item.find('/'); slash != std::string_view::npos) {
      range = item.substr(0, slash);
      const auto s = parse_value(FieldSpec{f.name, 1, f.max, {}}, item.substr(slash + 1));
      if (!s || *s < 1)
        return field_error(f, text, "step must be a positive number");
      step = *s;
    }
    int lo = f.min, hi = f.max;
    if (range != "*") {
      const auto dash = range.find('-');
      const auto a = parse_value(f, range.substr(0, dash));
      const auto b = dash == std::string_view::npos ? a : parse_value(f, range.substr(dash + 1));
      if (!a || !b)
        return field_error(f, text, "expected a number, a name, a range a-b or *");
      lo = *a;
      hi =
          (dash == std::string_view::npos && item.find('/') != std::string_view::npos) ? f.max : *b;
      if (lo < f.min || hi > f.max)
        return field_error(f, text, "value out of range");
      if (lo > hi)
        return field_error(f, text, "range start is after its end");
    }
    for (int v = lo; v <= hi; v += step)
      values.push_back(v);
  }
  return values;
}

const std::map<std::string, std::string, std::less<>>& aliases() {
  static const std::map<std::string, std::string, std::less<>> table{
      {"@yearly", "0 0 1 1 *"}, {"@annually", "0 0 1 1 *"}, {"@monthly", "0 0 1 * *"},
      {"@weekly", "0 0 * * 0"}, {"@daily", "0 0 * * *"},    {"@midnight", "0 0 * * *"},
      {"@hourly", "0 * * * *"}};
  return table;
}

// When day-of-month and day-of-week must both match (one of them starts with "*"), the days an
// expression names exist only if one of its months has one of its days of the month: every date
// falls on each weekday in some year. An error saying why it never fires, or nullopt.
std::optional<Error> never_fires(std::string_view expression, const std::bitset<32>& days,
                                 const std::bitset<13>& months) {
  constexpr unsigned kLongest[13] = {0, 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  std::string named_months, named_days;
  for (unsigned m = 1; m <= 12; ++m) {
    if (!months.test(m))
      continue;
    for (unsigned d = 1; d <= kLongest[m]; ++d) {
      if (days.test(d))
        return std::nullopt;
    }
    named_months += (named_months.empty() ? "" : ",") + std::to_string(m);
  }
  for (unsigned d = 1; d <= 31; ++d) {
    if (days.test(d))
      named_days += (named_days.empty() ? "" : ",") + std::to_string(d);
  }
  return make_error(ErrorCode::invalid_argument,
                    "cron expression \"" + std::string(expression) +
                        "\" never fires: no month it names (month " + named_months +
                        ") has a day-of-month it names (" + named_days + ")");
}

}  // namespace

Result<CronSchedule> CronSchedule::parse(std::string_view expression) {
  std::string expanded(expression);
  if (auto it = aliases().find(expression); it != aliases().end())
    expanded = it->second;
  std::istringstream in(expanded);
  std::vector<std::string> fields;
  for (std::string f; in >> f;)
    fields.push_back(f);
  if (fields.size() != 5) {
    return make_error(
        ErrorCode::invalid_argument,
        "cron expression \"" + std::string(expression) +
            "\": expected 5 fields (minute hour day-of-month month day-of-week), got " +
            std::to_string(fields.size()));
  }
  CronSchedule s;
  s.expression_ = std::string(expression);
  for (std::size_t i = 0; i < 5; ++i) {
    auto values = parse_field(kFields[i], fields[i]);
    if (!values.ok())
      return values.error();
    for (int v : *values) {
      switch (i) {
        case 0:
          s.minutes_.set(v);
          break;
        case 1:
          s.hours_.set(v);
          break;
        case 2:
          s.days_of_month_.set(v);
          break;
        case 3:
          s.months_.set(v);
          break;
        default:
          s.days_of_week_.set(v % 7);
          break;
      }
    }
  }
  s.dom_star_ = fields[2].front() == '*';
  s.dow_star_ = fields[4].front() == '*';
  if (s.dom_star_ || s.dow_star_) {
    if (auto never = never_fires(expression, s.days_of_month_, s.months_))
      return *never;
  }
  return s;
}

bool CronSchedule::day_matches(sys_days day) const {
  const year_month_day ymd(day);
  if (!months_.test(static_cast<unsigned>(ymd.month())))
    return false;
  const bool dom = days_of_month_.test(static_cast<unsigned>(ymd.day()));
  const bool dow = days_of_week_.test(weekday(day).c_encoding());
  return (dom_star_ || dow_star_) ? (dom && dow) : (dom || dow);
}

bool CronSchedule::matches(sys_seconds t) const {
  const auto day = floor<days>(t);
  const hh_mm_ss time(floor<minutes>(t) - day);
  return day_matches(day) && hours_.test(time.hours().count()) &&
         minutes_.test(time.minutes().count());
}

std::optional<sys_seconds> CronSchedule::next_after(sys_seconds t) const {
  const auto start = floor<minutes>(t) + minutes(1);
  auto day = floor<days>(start);
  int from = static_cast<int>((start - day).count());  // minute of the day
  for (int i = 0; i < kSearchDays; ++i, ++day, from = 0) {
    if (!day_matches(day))
      continue;
    for (int m = from; m < 24 * 60; ++m)
      if (hours_.test(m / 60) && minutes_.test(m % 60))
        return sys_seconds(day) + minutes(m);
  }
  return std::nullopt;
}

std::optional<sys_seconds> CronSchedule::latest_at_or_before(sys_seconds t) const {
  const auto start = floor<minutes>(t);
  auto day = floor<days>(start);
  int from = static_cast<int>((start - day).count());
  for (int i = 0; i < kSearchDays; ++i, --day, from = 24 * 60 - 1) {
    if (!day_matches(day))
      continue;
    for (int m = from; m >= 0; --m)
      if (hours_.test(m / 60) && minutes_.test(m % 60))
        return sys_seconds(day) + minutes(m);
  }
  return std::nullopt;
}

}  // namespace reverify
