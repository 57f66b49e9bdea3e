#pragma once
// A check as the tests of the verdict's readers (API pages, store, signed summaries) build one:
// its name, kind and outcome, the value observed, the reference and the band it is judged by.

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

}  // namespace reverify::test
