#include "cli/manifest_input.hpp"

#include <ostream>

namespace reverify::cli {

ManifestInput read_manifest_input(const std::string& path_or_uri) {
  ManifestInput input;
  input.location = path_or_uri;
  auto loaded = load_manifest(path_or_uri);
  if (!loaded) {
    input.read_error = loaded.error().message;
    return input;
  }
  input.location = loaded->location;
  input.manifest = std::move(loaded->parse.manifest);
  input.errors = std::move(loaded->parse.errors);
  input.warnings = std::move(loaded->parse.warnings);
  return input;
}

void print_problems(std::ostream& err, const std::string& command, const ManifestInput& input) {
  const std::string prefix = "reverify " + command + ": ";
  for (const auto& warning : input.warnings) {
    err << prefix << "warning: " << input.location << ": " << warning << "\n";
  }
  if (!input.read_error.empty()) {
    err << prefix << "cannot read manifest: " << input.read_error << "\n";
    return;
  }
  if (input.errors.empty())
    return;
  err << prefix << input.location << ": invalid manifest (" << input.errors.size()
      << (input.errors.size() == 1 ? " error" : " errors") << ")\n";
  for (const auto& error : input.errors)
    err << "  " << error.to_string() << "\n";
}

nlohmann::json problems_json(const ManifestInput& input) {
  nlohmann::json errors = nlohmann::json::array();
  for (const auto& error : input.errors) {
    errors.push_back({{"path", error.path}, {"message", error.message}});
  }
  nlohmann::json out = {{"location", input.location}, {"valid", false}, {"errors", errors}};
  if (!input.read_error.empty())
    out["read_error"] = input.read_error;
  return out;
}

}  // namespace reverify::cli
