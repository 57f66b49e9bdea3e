// reverify lint MANIFEST [--json] [--min-score N]: readiness findings and score (policies/lint).
// Exit: 0, or 1 when the score is below --min-score; 2 for an unreadable or invalid manifest.

#include <iomanip>
#include <iostream>

#include "cli/command.hpp"
#include "cli/manifest_input.hpp"
#include "policies/lint.hpp"

namespace reverify::cli {
namespace {

struct LintArguments {
  std::string manifest;
  std::optional<int> min_score;
  bool json = false;
};

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

int run_lint(const LintArguments& options) {
  const std::optional<int>& min_score = options.min_score;
  const bool as_json = options.json;
  const ManifestInput input = read_manifest_input(options.manifest);
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

Action define_lint(CLI::App& app) {
  auto o = std::make_shared<LintArguments>();
  app.add_option("MANIFEST", o->manifest, "the manifest: a file, or an http(s):// URL")->required();
  app.add_option("--min-score", o->min_score,
                 "exit 1 when the readiness score (0-100) is below N; without it lint exits 0 on "
                 "any valid manifest")
      ->type_name("N")
      ->check(integer_in(0, 100));
  add_json_flag(app, o->json);
  return [o] { return run_lint(*o); };
}

const Registrar kLint{
    {"lint", "score a manifest's reproducibility readiness (weighted, 0-100)", define_lint}};

}  // namespace
}  // namespace reverify::cli
