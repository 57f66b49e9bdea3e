#pragma once
// A registry source that moved as a whole is a platform condition, not one owner page per model
// (docs/operating.md, "When a registry moves"). Pure: what a failed preflight found and how the
// source's other versions' inputs stand now come in; the condition and its reason go out.
//
// Manifests name their inputs by URIs relative to the manifest, so a registry folder moved (or a
// mount that is missing) leaves every version's inputs absent from where its manifest resolves
// them, all at once. That is told from a real fleet-wide drift (a shared dataset rewritten: every
// version's inputs still there, with other hashes) by what preflight saw, and it fails closed:
//   - an input whose content changed (present, another hash; any remote input's drift) is never
//     excused, whatever the rest of the source looks like: the owner is paged as before;
//   - only missing inputs qualify, and only when EVERY other listed, valid version of the same
//     source misses inputs too (a presence probe, no hashing);
//   - a source of one version qualifies only when its missing inputs now resolve to other paths
//     than those its last conclusive verdict found them at (its manifest's location changed: the
//     registry moved). At the same place, one version whose data is gone is its owner's.
// Inputs that moved WITH the registry (beside the manifests, same content) need no rule: preflight
// finds them, hashes them, and they pass.

#include <cstddef>
#include <string>
#include <vector>

#include "core/enum_names.hpp"

namespace reverify {

enum class SourceCondition { none, inputs_moved };
template <>
struct EnumNames<SourceCondition> {
  static constexpr EnumName<SourceCondition> table[] = {
      {SourceCondition::none, "none"},
      {SourceCondition::inputs_moved, "inputs-moved"},
  };
};

// How a version's recorded local inputs stand at their resolved locations now.
enum class InputsFound {
  all_present,   // every local input it records is there
  some_missing,  // at least one is not where its manifest resolves it
  not_checked,   // it records no local input (none, or remote only), or its manifest is unreadable
};

// What a failed preflight found: inputs absent from their resolved location, and inputs whose
// content differs (present with another hash, or a remote input's drift).
struct InputDrift {
  std::size_t missing = 0;
  std::size_t changed = 0;
};

struct SourceConditionFacts {
  InputDrift drift;                 // of the verification that asks
  std::vector<InputsFound> others;  // every other listed, valid version of its source
  // Its missing inputs resolve to other paths than where its last conclusive verdict found them.
  bool relocated = false;
};

struct SourceConditionDecision {
  SourceCondition condition = SourceCondition::none;
  std::string reason;  // why, in words (also when none: for the log)
};

SourceConditionDecision decide_source_condition(const SourceConditionFacts& facts);

}  // namespace reverify
