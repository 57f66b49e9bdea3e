// A subsample rebuild's input:subsample-draw check: the rule's keys, the release's draw.
#include <doctest/doctest.h>

#include <algorithm>

#include "core/subsample_rule.hpp"
#include "policies/subsample_draw.hpp"

using namespace reverify;

namespace {

struct Draw {
  SubsampleDrawn drawn;
  std::string file;
};

// A draw of the first n keys "r<i>" that the rule keeps at fraction 0.5, salt "s" (or leaves out).
Draw draw_of(int n, bool members = true) {
  const auto f = *parse_subsample_fraction("0.5");
  std::vector<std::string> keys;
  for (int i = 0; static_cast<int>(keys.size()) < n; ++i) {
    const std::string key = "r" + std::to_string(i);
    if (in_subsample("s", key, f) == members)
      keys.push_back(key);
  }
  std::sort(keys.begin(), keys.end());
  Draw d;
  for (const auto& k : keys)
    d.file += k + "\n";
  d.drawn.records = n;
  d.drawn.keys = n;
  d.drawn.keys_sha256 = subsample_keys_digest(keys)->sha256;
  return d;
}

SubsampleReference reference_with(const std::optional<SubsampleDrawn>& drawn) {
  SubsampleReference r;
  r.fraction = 0.5;
  r.salt = "s";
  r.drawn = drawn;
  return r;
}

}  // namespace

TEST_CASE("the release's draw again, by the rule: passed") {
  const Draw d = draw_of(20);
  const auto check = subsample_draw_check(reference_with(d.drawn), d.drawn, d.file);
  CHECK(check.outcome == CheckOutcome::passed);
  CHECK(check.kind == CheckKind::input);
  CHECK(check.name == "input:subsample-draw");
  CHECK(check.decides());
}

TEST_CASE("another draw, a draw outside the rule, or none where the release has one: failed") {
  const Draw release = draw_of(20);
  const Draw fewer = draw_of(19);
  auto other = subsample_draw_check(reference_with(release.drawn), fewer.drawn, fewer.file);
  CHECK(other.outcome == CheckOutcome::failed);
  CHECK(other.explanation.find("another set of records") != std::string::npos);

  Draw shuffled = draw_of(20, false);
  auto outside = subsample_draw_check(reference_with(release.drawn), shuffled.drawn, shuffled.file);
  CHECK(outside.outcome == CheckOutcome::failed);
  CHECK(outside.explanation.find("20 of the 20 keys the rebuild trained on are not in the "
                                 "subsample by the rule") != std::string::npos);

  auto none = subsample_draw_check(reference_with(release.drawn), std::nullopt, std::nullopt);
  CHECK(none.outcome == CheckOutcome::failed);
  CHECK(none.explanation.find("reports no drawn records") != std::string::npos);

  auto verdict = verdict_for_subsample_draw(other);
  CHECK(verdict.cls == VerdictClass::failed_input_drift);
  CHECK(verdict.explanation.find("no metric was judged") != std::string::npos);
  CHECK(verdict.checks.size() == 1);
}

TEST_CASE("a release from before the draw was reported: not judged, or informational") {
  const Draw d = draw_of(5);
  CHECK(subsample_draw_check(reference_with(std::nullopt), std::nullopt, std::nullopt).outcome ==
        CheckOutcome::not_judged);
  const auto reported = subsample_draw_check(reference_with(std::nullopt), d.drawn, d.file);
  CHECK(reported.outcome == CheckOutcome::passed);
  CHECK(reported.informational);
}
