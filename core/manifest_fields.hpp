#pragma once
// Building blocks of manifest validation (internal to core/manifest_parse.cpp): typed reads of
// JSON values that record "<path>: must be <expectation>, got <what was found>" instead of
// throwing, so one pass collects every problem in a document.

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/manifest_parse.hpp"

namespace reverify::manifest_fields {

using nlohmann::json;

// Collects the errors and warnings of one validation pass.
class Findings {
 public:
  void error(std::string path, std::string message);
  // "<path>: must be <expected>, got <description of value>"
  void mismatch(const std::string& path, std::string_view expected, const json& value);
  void warn(std::string message) { warnings_.push_back(std::move(message)); }

  std::vector<ValidationError>& errors() { return errors_; }
  std::vector<std::string>& warnings() { return warnings_; }

 private:
  std::vector<ValidationError> errors_;
  std::vector<std::string> warnings_;
};

// "\"python:3.11-slim\"", "number 42", "boolean true", "null", "an array", "an object".
std::string describe(const json& value);

// Reads the members of one JSON object, remembering which keys the schema knows, so that the
// remaining ones can be reported as unknown.
class ObjectReader {
 public:
  ObjectReader(Findings& findings, const json& object, std::string path);

  // The value of `key`, or nullptr when it is absent or null (null means "not recorded").
  const json* optional(std::string_view key);
  // Like optional(), and reports "required field is missing (must be <expected>)" when absent.
  const json* required(std::string_view key, std::string_view expected);
  std::string path(std::string_view key) const;
  const std::string& path() const { return path_; }
  const json& object() const { return object_; }
  Findings& findings() { return findings_; }
  // The keys that no optional()/required() call asked for, sorted.
  std::vector<std::string> unknown_keys() const;
  // Warns "<path>: unknown field, ignored" for each of unknown_keys().
  void warn_unknown_keys();

 private:
  Findings& findings_;
  const json& object_;
  std::string path_;
  std::set<std::string, std::less<>> known_;
};

// Typed reads: nullopt (and a recorded error) when the value does not match.
bool is_object(Findings& f, const json& value, const std::string& path);
std::optional<std::string> read_string(Findings& f, const json& value, const std::string& path,
                                       std::string_view expected = "a non-empty string");
std::optional<std::string> read_hex(Findings& f, const json& value, const std::string& path,
                                    std::size_t digits, std::string_view expected);
std::optional<bool> read_bool(Findings& f, const json& value, const std::string& path);
// Integers must be JSON integers (no fraction or exponent) within [minimum, 2^63-1].
std::optional<std::int64_t> read_integer(Findings& f, const json& value, const std::string& path,
                                         std::int64_t minimum, std::string_view expected);
std::optional<double> read_number(Findings& f, const json& value, const std::string& path,
                                  std::string_view expected = "a number");
std::optional<std::vector<double>> read_numbers(Findings& f, const json& value,
                                                const std::string& path);

bool is_lower_hex(std::string_view text, std::size_t digits);

}  // namespace reverify::manifest_fields
