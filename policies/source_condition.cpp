#include "policies/source_condition.hpp"

#include <algorithm>

namespace reverify {

SourceConditionDecision decide_source_condition(const SourceConditionFacts& facts) {
  const auto none = [](std::string reason) {
    return SourceConditionDecision{SourceCondition::none, std::move(reason)};
  };
  if (facts.drift.changed > 0)
    return none("an input's content changed: a content change is never excused");
  if (facts.drift.missing == 0)
    return none("no input is missing");
  const std::size_t versions = facts.others.size() + 1;
  if (versions == 1 && !facts.relocated) {
    return none(
        "the source lists no other version and its inputs are missing at the place its "
        "last verdict found them: its owner's");
  }
  const auto found = std::count_if(facts.others.begin(), facts.others.end(),
                                   [](InputsFound f) { return f != InputsFound::some_missing; });
  if (found > 0) {
    return none(std::to_string(found) + " other version(s) of the source " +
                "still find their inputs (or record none): not the whole source");
  }
  return {SourceCondition::inputs_moved,
          (versions == 1 ? std::string("the source's one version")
                         : "every one of the source's " + std::to_string(versions) + " versions") +
              " misses inputs where its manifest resolves them" +
              (facts.relocated ? " (other paths than its last verdict found them at)" : "") +
              ", and no input that is there changed: the registry moved or a mount is missing"};
}

}  // namespace reverify
