#pragma once
// Reading a manifest named on the command line, for the commands that take one (lint, diff):
// load + validate, and report an invalid one the same way everywhere: every validation error
// with its JSON path and expectation (exit status 2 is the caller's).

#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/manifest_parse.hpp"

namespace reverify::cli {

struct ManifestInput {
  std::string location;                 // as given, or absolute for local files
  std::optional<Manifest> manifest;     // set iff valid
  std::string read_error;               // the file or URL could not be read
  std::vector<ValidationError> errors;  // validation errors
  std::vector<std::string> warnings;
};

ManifestInput read_manifest_input(const std::string& path_or_uri);

// Human form, to stderr: "reverify <command>: <location>: invalid manifest (N errors)" then one
// indented "<path>: <message>" line per error. Warnings: "reverify <command>: warning: ...".
void print_problems(std::ostream& err, const std::string& command, const ManifestInput& input);

// {"location", "valid": false, "read_error"?, "errors": [{"path", "message"}]}
nlohmann::json problems_json(const ManifestInput& input);

}  // namespace reverify::cli
