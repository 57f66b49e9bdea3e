// A registry source that moved as a whole (policies/source_condition.hpp): only missing inputs,
// on every version of the source at once, make the platform condition (a source of one version:
// only when its inputs now resolve elsewhere); any content change, or one version that still finds
// its inputs, pages the owner as before.

#include <doctest/doctest.h>

#include "policies/source_condition.hpp"

using namespace reverify;

namespace {

SourceCondition decide(InputDrift drift, std::vector<InputsFound> others) {
  return decide_source_condition({drift, std::move(others)}).condition;
}

constexpr InputsFound kMissing = InputsFound::some_missing;
constexpr InputsFound kPresent = InputsFound::all_present;
constexpr InputsFound kUnchecked = InputsFound::not_checked;

}  // namespace

TEST_CASE("every version of the source misses inputs at once: the registry moved") {
  const auto decision = decide_source_condition({{2, 0}, {kMissing, kMissing}});
  CHECK(decision.condition == SourceCondition::inputs_moved);
  CHECK(decision.reason.find("3 versions") != std::string::npos);
  CHECK(decide({1, 0}, {kMissing}) == SourceCondition::inputs_moved);
}

TEST_CASE("a content change is never excused, even when the whole source misses inputs too") {
  CHECK(decide({1, 1}, {kMissing, kMissing}) == SourceCondition::none);
  CHECK(decide({0, 1}, {kMissing, kMissing}) == SourceCondition::none);
  // A real fleet-wide drift: every version's inputs are there, with other hashes.
  CHECK(decide({0, 2}, {kPresent, kPresent}) == SourceCondition::none);
  CHECK(decide_source_condition({{0, 1}, {kMissing}}).reason.find("never excused") !=
        std::string::npos);
}

TEST_CASE("one version that still finds its inputs, or records none, keeps it the owner's") {
  CHECK(decide({1, 0}, {kMissing, kPresent}) == SourceCondition::none);
  CHECK(decide({1, 0}, {kMissing, kUnchecked}) == SourceCondition::none);
  CHECK(decide({1, 0}, {kPresent}) == SourceCondition::none);
}

TEST_CASE("a source of one version: only when its inputs now resolve elsewhere (it moved)") {
  CHECK(decide({1, 0}, {}) == SourceCondition::none);  // gone from where they were: the owner's
  CHECK(decide_source_condition({{1, 0}, {}, true}).condition == SourceCondition::inputs_moved);
  CHECK(decide_source_condition({{1, 1}, {}, true}).condition == SourceCondition::none);
  CHECK(decide_source_condition({{2, 0}, {kPresent}, true}).condition == SourceCondition::none);
}

TEST_CASE("a verdict with nothing missing is not the condition") {
  CHECK(decide({0, 0}, {kMissing, kMissing}) == SourceCondition::none);
  CHECK(decide_source_condition({{0, 0}, {}, true}).condition == SourceCondition::none);
}

TEST_CASE("the condition's names") {
  CHECK(std::string(to_string(SourceCondition::inputs_moved)) == "inputs-moved");
  CHECK(enum_from_string<SourceCondition>("inputs-moved") == SourceCondition::inputs_moved);
}
