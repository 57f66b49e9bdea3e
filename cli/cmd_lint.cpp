// reverify lint MANIFEST [--json] [--min-score N]: readiness findings and score (policies/lint).
// Exit: 0, or 1 when the score is below --min-score; 2 for an unreadable or invalid manifest.

#include <charconv>
#include <iomanip>
#include <iostream>

#include "cli/command.hpp"
#include "cli/manifest_input.hpp"
#include "policies/lint.hpp"

namespace reverify::cli {
namespace {

std::optional<int> parse_score(const std::string& text) {
  int value = -1;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value < 0 || value > 100) {
    return std::nullopt;
  }
  return value;
}

void print_table(std::ostream& out, const Manifest& manifest, const std::string& location,
                 const LintReport& report) {
  out << manifest.id() << "  (" << location << ")\n";
  if (report.findings.empty())
    out << "no findings\n";
  for (const auto& f : report.findings) {
    out << std::left << std::setw(8) << to_string(f.severity) << " " << std::setw(16) << f.rule
        << " " << std::right << std::setw(4) << (f.weight ? "-" + std::to_string(f.weight) : "0")
        << "  " << f.path << ": " << f.message << "\n"
        << std::string(32, ' ') << "fix: " << f.fix << "\n";
  }
  out << "readiness score: " << report.score << "/100\n";
}

int run_lint(Args& args) {
  if (args.positionals().size() != 1)
    return usage_error("lint", "expected one MANIFEST");
  std::optional<int> min_score;
  if (auto text = args.option("min-score")) {
    min_score = parse_score(*text);
    if (!min_score) {
      return usage_error("lint",
                         "--min-score must be an integer from 0 to 100, got \"" + *text + "\"");
    }
  }
  const bool as_json = args.flag("json");
  const ManifestInput input = read_manifest_input(args.positionals()[0]);
  print_problems(std::cerr, "lint", input);
  if (!input.manifest) {
    if (as_json)
      std::cout << problems_json(input).dump(2) << "\n";
    return 2;
  }
  const LintReport report = lint_manifest(*input.manifest);
  const bool below = min_score && report.score < *min_score;
  if (as_json) {
    nlohmann::json out = to_json(report);
    out["manifest"] = input.manifest->id();
    out["location"] = input.location;
    out["warnings"] = input.warnings;
    if (min_score)
      out["min_score"] = *min_score;
    out["passed"] = !below;
    std::cout << out.dump(2) << "\n";
  } else {
    print_table(std::cout, *input.manifest, input.location, report);
    if (below)
      std::cout << "below the minimum score of " << *min_score << "\n";
  }
  return below ? 1 : 0;
}

const Registrar kLint{{"lint",
                       "MANIFEST [--json] [--min-score N]",
                       "score a manifest's reproducibility readiness (weighted, 0-100)",
                       {"min-score"},
                       {"json"},
                       run_lint}};

}  // namespace
}  // namespace reverify::cli
