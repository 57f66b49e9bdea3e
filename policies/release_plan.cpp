#include "policies/release_plan.hpp"

#include <algorithm>
#include <map>
#include <tuple>

#include "core/unix_time.hpp"
#include "policies/number_text.hpp"

namespace reverify {
namespace {

using namespace std::chrono;

struct DayBudget {
  std::size_t verifications = 0;
  double gpu_hours = 0;
};

std::string time_text(sys_seconds t) {
  return rfc3339(t.time_since_epoch().count());
}

// "5 of 5 verifications" or "18 of 20 GPU-hours": what was already taken on the first day tried.
std::string spent_text(const DayBudget& used, double cost, const AtReleaseConfig& config) {
  if (used.verifications >= config.per_day)
    return std::to_string(used.verifications) + " of " + std::to_string(config.per_day) +
           " at-release verifications a day";
  return number_text(used.gpu_hours) + " of " + number_text(*config.gpu_budget_hours) +
         " at-release GPU-hours a day spent, it needs " + number_text(cost);
}

}  // namespace

std::vector<ReleaseDecision> plan_releases(std::vector<Release> releases,
                                           const std::vector<ReleaseSpent>& spent,
                                           sys_seconds cycle_end, const AtReleaseConfig& config) {
  std::map<sys_days, DayBudget> used;
  for (const auto& s : spent) {
    auto& day = used[floor<days>(s.starts_at)];
    ++day.verifications;
    day.gpu_hours += s.gpu_hours;
  }
  std::stable_sort(releases.begin(), releases.end(), [](const Release& a, const Release& b) {
    return std::tie(a.first_seen, a.model, a.version) < std::tie(b.first_seen, b.model, b.version);
  });
  const auto fits = [&](const DayBudget& day, double cost) {
    return day.verifications < config.per_day &&
           (!config.gpu_budget_hours || day.gpu_hours + cost <= *config.gpu_budget_hours + 1e-9);
  };
  std::vector<ReleaseDecision> decisions;
  for (const auto& r : releases) {
    ReleaseDecision d{r.model,      r.version,    r.mode, r.gpu_hours,
                      r.first_seen, std::nullopt, "",     std::nullopt};
    const sys_seconds earliest = r.first_seen + seconds(config.delay_s);
    const std::string seen = "first seen " + time_text(r.first_seen) + ", at release (" +
                             to_string(r.mode) + ", " + number_text(r.gpu_hours) + " GPU-hours)";
    std::optional<std::string> first_day_full;
    for (sys_days day = floor<days>(earliest); sys_seconds(day) < cycle_end; day += days(1)) {
      auto& budget = used[day];
      if (!fits(budget, r.gpu_hours)) {
        if (!first_day_full)
          first_day_full = spent_text(budget, r.gpu_hours, config);
        continue;
      }
      const sys_seconds start = std::max(earliest, sys_seconds(day));
      if (start >= cycle_end)
        break;
      ++budget.verifications;
      budget.gpu_hours += r.gpu_hours;
      d.starts_at = start;
      break;
    }
    if (d.starts_at) {
      d.reason =
          seen + "; starts " + time_text(*d.starts_at) +
          (first_day_full
               ? " (the at-release budget of the days before was spent: " + *first_day_full + ")"
               : std::string());
    } else if (config.gpu_budget_hours && r.gpu_hours > *config.gpu_budget_hours + 1e-9) {
      d.reason = seen + "; needs more than the at-release budget of " +
                 number_text(*config.gpu_budget_hours) +
                 " GPU-hours a day: waits for the cycle starting " + time_text(cycle_end) +
                 ", whose rotation picks it first";
    } else {
      d.reason = seen + "; no day of this cycle has at-release budget left" +
                 (first_day_full ? " (" + *first_day_full + ")" : std::string()) +
                 ": waits for the cycle starting " + time_text(cycle_end) +
                 ", whose rotation picks it first";
    }
    decisions.push_back(std::move(d));
  }
  return decisions;
}

}  // namespace reverify
