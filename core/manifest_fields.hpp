#pragma once
// Building blocks of manifest validation (internal to core/manifest_parse*.cpp): typed reads of
// JSON values that record "<path>: must be <expectation>, got <what was found>" instead of
// throwing, so one pass collects every problem in a document.

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/manifest.hpp"
#include "core/manifest_parse.hpp"
#include "core/manifest_path.hpp"

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

// Only the characters 0-9 (true for "").
bool all_digits(std::string_view text);

// Expectations phrased once each, for "must be <expectation>".
inline constexpr std::string_view kSha256 = "64 lowercase hex characters (sha256)";
inline constexpr std::string_view kCommit = "40 lowercase hex characters (git commit)";
inline constexpr std::string_view kName = "a name matching [A-Za-z0-9][A-Za-z0-9._-]{0,127}";
inline constexpr std::string_view kImage = "referenced by digest (name@sha256:<64 hex>)";
inline constexpr std::string_view kLevel = "one of rerunnable, equivalent, bitwise";
inline constexpr std::string_view kSnapshotKind = "one of files, iceberg, delta, hudi, lakefs, dvc";
inline constexpr std::string_view kTimestamp = "an RFC 3339 timestamp (2026-11-02T03:00:00Z)";

// Readers of one key of an object, for the section readers of manifest_parse*.cpp.
template <class T>
void assign(std::optional<T>& target, std::optional<T> value) {
  if (value)
    target = std::move(value);
}

// Runs `read` on the object at `key` when present; the object's unknown keys are warned about.
template <class Read>
auto read_section(ObjectReader& parent, std::string_view key, Read read)
    -> std::optional<decltype(read(std::declval<ObjectReader&>()))> {
  const json* value = parent.optional(key);
  if (!value || !is_object(parent.findings(), *value, parent.path(key)))
    return std::nullopt;
  ObjectReader reader(parent.findings(), *value, parent.path(key));
  auto result = read(reader);
  reader.warn_unknown_keys();
  return result;
}

std::optional<std::string> optional_string(ObjectReader& r, std::string_view key);
std::optional<std::string> required_string(ObjectReader& r, std::string_view key);
std::optional<std::string> optional_sha256(ObjectReader& r, std::string_view key);
std::optional<bool> optional_bool(ObjectReader& r, std::string_view key);
std::optional<std::int64_t> optional_integer(ObjectReader& r, std::string_view key,
                                             std::int64_t minimum, std::string_view expected);
std::optional<FileRef> read_file_ref(ObjectReader& parent, std::string_view key);

template <class Predicate>
std::optional<std::string> string_matching(ObjectReader& r, const json* v, std::string_view key,
                                           std::string_view expected, Predicate ok) {
  if (!v)
    return std::nullopt;
  if (!v->is_string() || !ok(v->get_ref<const std::string&>())) {
    r.findings().mismatch(r.path(key), expected, *v);
    return std::nullopt;
  }
  return v->get<std::string>();
}

// Reads an object whose values all have the same shape, e.g. seeds or env.
template <class T, class ReadValue>
std::map<std::string, T> read_map(Findings& f, const json& object, const std::string& path,
                                  ReadValue read_value) {
  std::map<std::string, T> out;
  if (!is_object(f, object, path))
    return out;
  for (const auto& [key, value] : object.items()) {
    const std::string at = json_path_key(path, key);
    if (key.empty()) {
      f.error(at, "must be a non-empty key");
      continue;
    }
    if (auto v = read_value(value, at))
      out.emplace(key, std::move(*v));
  }
  return out;
}

template <class T, class ReadValue>
std::map<std::string, T> optional_map(ObjectReader& r, std::string_view key, ReadValue read_value) {
  const json* v = r.optional(key);
  return v ? read_map<T>(r.findings(), *v, r.path(key), read_value) : std::map<std::string, T>{};
}

// Reads one segment's metrics ({"accuracy": 0.95, ...}: metric -> number), for optional_map.
inline auto metric_values(Findings& f) {
  return [&f](const json& v, const std::string& at) {
    return std::optional(read_map<double>(
        f, v, at, [&f](const json& n, const std::string& p) { return read_number(f, n, p); }));
  };
}

// The section readers defined in files of their own (manifest_parse_scoring.cpp,
// manifest_parse_tolerance.cpp), called by manifest_parse.cpp.
ScoringSpec read_scoring(ObjectReader& r, bool eval_set_recorded);
ToleranceSpec read_tolerance(ObjectReader& r);

}  // namespace reverify::manifest_fields
