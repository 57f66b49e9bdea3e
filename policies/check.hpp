#pragma once
// The outcome of one check in a verification, and the verdict that combines them.
// Pure data: produced by policies/, stored by the daemon as JSON, rendered by pages and the CLI.

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/verdict_class.hpp"

namespace reverify {

enum class CheckKind { input, primary, segment, distribution, steps, weights };
enum class CheckOutcome { passed, failed, uncalibrated };

struct CheckResult {
  std::string name;  // "primary:accuracy", "segment:digit=8:accuracy", "distribution:ks", ...
  CheckKind kind = CheckKind::primary;
  CheckOutcome outcome = CheckOutcome::uncalibrated;
  std::optional<double> observed;   // the rebuild's value (or statistic)
  std::optional<double> reference;  // mean of seed runs / the released value
  std::optional<double> tolerance;  // band half-width (or upper bound for distribution stats)
  std::optional<double> margin;     // tolerance - |observed - reference|; negative = outside
  std::string explanation;          // one human sentence
  nlohmann::json evidence = nlohmann::json::object();  // n seed runs, power, recorded value, ...
};

struct Verdict {
  VerdictClass cls = VerdictClass::uncalibrated;
  std::vector<CheckResult> checks;
  std::string
      explanation;  // short: which check, by how much, against what band, from how many seed runs
};

const char* to_string(CheckKind kind);
const char* to_string(CheckOutcome outcome);
nlohmann::json to_json(const CheckResult& check);
nlohmann::json to_json(const Verdict& verdict);
// Inverse of to_json, for verdicts read back from the store.
std::optional<Verdict> verdict_from_json(const nlohmann::json& j);

}  // namespace reverify
