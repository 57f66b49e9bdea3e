// reverify diff A B [--json]: which inputs (data, code, config, environment, seeds), and which of
// evaluation, weights, run, tolerance, identity, differ between two manifests, field by field.
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

void print_diff(std::ostream& out, const ManifestDiff& diff) {
  if (diff.empty()) {
    out << "same: no field differs\n";
    return;
  }
  const auto moved = diff.moved_inputs();
  out << "inputs moved: ";
  if (moved.empty())
    out << "none";
  for (std::size_t i = 0; i < moved.size(); ++i)
    out << (i ? ", " : "") << moved[i];
  out << "\n";
  for (const auto& section : diff.sections) {
    out << "\n[" << section.section << "]\n";
    for (const auto& change : section.changes) {
      out << "  " << change.path << ": " << show(change.old_value) << " -> "
          << show(change.new_value) << "\n";
    }
  }
}

struct DiffArguments {
  std::string a, b;
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
  } else {
    print_diff(std::cout, diff);
  }
  return diff.empty() ? 0 : 1;
}

Action define_diff(CLI::App& app) {
  auto o = std::make_shared<DiffArguments>();
  app.add_option("A", o->a, "the first manifest: a file, or an http(s):// URL")->required();
  app.add_option("B", o->b, "the second manifest")->required();
  add_json_flag(app, o->json);
  return [o] { return run_diff(*o); };
}

const Registrar kDiff{{"diff",
                       "show which inputs and results differ between two manifests, field by field",
                       define_diff}};

}  // namespace
}  // namespace reverify::cli
