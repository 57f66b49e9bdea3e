// reverify diff A B [--full] [--json]: which inputs (data, code, config, environment, seeds), and
// which of evaluation, weights, run, tolerance, subsample, identity, differ between two
// manifests. By default a summary that fits on one screen (policies/manifest_diff.hpp,
// `summarize`); --full lists every field and array element; --json is the full diff.
// Exit: 0 same, 1 different, 2 unreadable or invalid input.

#include <iostream>

#include "cli/command.hpp"
#include "cli/manifest_input.hpp"
#include "policies/manifest_diff.hpp"

namespace reverify::cli {
namespace {

// Long values (a whole config subtree present on one side only) are cut in the human form;
// --json carries them whole.
std::string show(const std::optional<nlohmann::json>& value) {
  if (!value)
    return "(absent)";
  std::string text = value->dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return text.size() > 120 ? text.substr(0, 117) + "..." : text;
}

void print_names(std::ostream& out, const char* label, const std::vector<std::string>& names) {
  out << label;
  if (names.empty())
    out << "none";
  for (std::size_t i = 0; i < names.size(); ++i)
    out << (i ? ", " : "") << names[i];
  out << "\n";
}

void print_full(std::ostream& out, const ManifestDiff& diff) {
  print_names(out, "inputs moved: ", diff.moved_inputs());
  for (const auto& section : diff.sections) {
    out << "\n[" << section.section << "]\n";
    for (const auto& change : section.changes) {
      out << "  " << change.path << ": " << show(change.old_value) << " -> "
          << show(change.new_value) << (change.location_only ? "  (same content)" : "") << "\n";
    }
  }
}

void print_summary(std::ostream& out, const ManifestDiff& diff) {
  const DiffSummary summary = summarize(diff);
  print_names(out, "inputs moved: ", summary.inputs_moved);
  if (!summary.also_differ.empty())
    print_names(out, "also differ: ", summary.also_differ);
  for (const auto& section : summary.sections) {
    out << "[" << section.section << "]\n";
    for (const auto& line : section.lines)
      out << "  " << line.path << ": " << line.text << "\n";
  }
  if (!summary.relocated.empty()) {
    print_names(out, "same content at another location (not a move): ", summary.relocated);
  }
  out << "(--full lists every field and element)\n";
}

struct DiffArguments {
  std::string a, b;
  bool full = false;
  bool json = false;
};

int run_diff(const DiffArguments& options) {
  const bool as_json = options.json;
  const ManifestInput a = read_manifest_input(options.a);
  const ManifestInput b = read_manifest_input(options.b);
  print_problems(std::cerr, "diff", a);
  print_problems(std::cerr, "diff", b);
  if (!a.manifest || !b.manifest) {
    if (as_json) {
      nlohmann::json invalid = nlohmann::json::array();
      for (const auto* input : {&a, &b}) {
        if (!input->manifest)
          invalid.push_back(problems_json(*input));
      }
      std::cout << nlohmann::json{{"invalid", invalid}}.dump(2) << "\n";
    }
    return 2;
  }
  const ManifestDiff diff = diff_manifests(*a.manifest, *b.manifest);
  if (as_json) {
    nlohmann::json out = to_json(diff);
    out["a"] = a.location;
    out["b"] = b.location;
    std::cout << out.dump(2) << "\n";
  } else if (diff.empty()) {
    std::cout << "same: no field differs\n";
  } else if (options.full) {
    print_full(std::cout, diff);
  } else {
    print_summary(std::cout, diff);
  }
  return diff.empty() ? 0 : 1;
}

Action define_diff(CLI::App& app) {
  auto o = std::make_shared<DiffArguments>();
  app.add_option("A", o->a, "the first manifest: a file, or an http(s):// URL")->required();
  app.add_option("B", o->b, "the second manifest")->required();
  app.add_flag("--full", o->full,
               "every field and array element that differs, instead of the one-screen summary");
  add_json_flag(app, o->json);
  return [o] { return run_diff(*o); };
}

const Registrar kDiff{
    {"diff", "show which inputs and results differ between two manifests: a summary, or --full",
     define_diff}};

}  // namespace
}  // namespace reverify::cli
