#pragma once
// A check as the tests of the verdict's readers (API pages, store, signed summaries) build one:
// its name, kind and outcome, the value observed, the reference and the band it is judged by;
// and a verdict's check found by name, as the verdict engine's tests look one up.

#include <optional>
#include <string>
#include <utility>

#include "policies/verdict_model.hpp"

namespace reverify::test {

inline CheckResult banded_check(std::string name, CheckKind kind, CheckOutcome outcome,
                                double observed, std::optional<double> reference, CheckBand band) {
  CheckResult check;
  check.name = std::move(name);
  check.kind = kind;
  check.outcome = outcome;
  check.observed = observed;
  check.reference = reference;
  check.band = band;
  return check;
}

// The verdict's check of that name; nullptr when it has none.
inline const CheckResult* find_check(const Verdict& verdict, const std::string& name) {
  for (const auto& check : verdict.checks)
    if (check.name == name)
      return &check;
  return nullptr;
}

}  // namespace reverify::test
