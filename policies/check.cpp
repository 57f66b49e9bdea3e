#include "policies/check.hpp"

namespace reverify {

const char* to_string(CheckKind kind) {
  switch (kind) {
    case CheckKind::input: return "input";
    case CheckKind::primary: return "primary";
    case CheckKind::segment: return "segment";
    case CheckKind::distribution: return "distribution";
    case CheckKind::steps: return "steps";
    case CheckKind::weights: return "weights";
  }
  return "unknown";
}

const char* to_string(CheckOutcome outcome) {
  switch (outcome) {
    case CheckOutcome::passed: return "passed";
    case CheckOutcome::failed: return "failed";
    case CheckOutcome::uncalibrated: return "uncalibrated";
  }
  return "unknown";
}

}  // namespace reverify
