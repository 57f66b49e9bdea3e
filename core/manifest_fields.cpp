#include "core/manifest_fields.hpp"

#include <cmath>
#include <limits>

#include "core/manifest_path.hpp"

namespace reverify::manifest_fields {

void Findings::error(std::string path, std::string message) {
  errors_.push_back(ValidationError{std::move(path), std::move(message)});
}

void Findings::mismatch(const std::string& path, std::string_view expected, const json& value) {
  error(path, "must be " + std::string(expected) + ", got " + describe(value));
}

std::string describe(const json& value) {
  switch (value.type()) {
    case json::value_t::string: {
      const auto& text = value.get_ref<const std::string&>();
      // Long strings are cut so that one bad field cannot flood the report.
      const bool cut = text.size() > 80;
      const json shown = cut ? json(text.substr(0, 80)) : value;
      return shown.dump(-1, ' ', false, json::error_handler_t::replace) + (cut ? "..." : "");
    }
    case json::value_t::number_integer:
    case json::value_t::number_unsigned:
    case json::value_t::number_float:
      return "number " + value.dump();
    case json::value_t::boolean:
      return "boolean " + value.dump();
    case json::value_t::null:
      return "null";
    case json::value_t::array:
      return "an array";
    case json::value_t::object:
      return "an object";
    default:
      return "an unsupported value";
  }
}

ObjectReader::ObjectReader(Findings& findings, const json& object, std::string path)
    : findings_(findings), object_(object), path_(std::move(path)) {}

const json* ObjectReader::optional(std::string_view key) {
  known_.emplace(key);
  auto it = object_.find(key);
  if (it == object_.end() || it->is_null())
    return nullptr;
  return &*it;
}

const json* ObjectReader::required(std::string_view key, std::string_view expected) {
  known_.emplace(key);
  auto it = object_.find(key);
  if (it == object_.end()) {
    findings_.error(path(key), "required field is missing (must be " + std::string(expected) + ")");
    return nullptr;
  }
  if (it->is_null()) {
    findings_.mismatch(path(key), expected, *it);
    return nullptr;
  }
  return &*it;
}

std::string ObjectReader::path(std::string_view key) const {
  return json_path_key(path_, key);
}

std::vector<std::string> ObjectReader::unknown_keys() const {
  std::vector<std::string> keys;
  for (const auto& [key, value] : object_.items()) {
    if (!known_.contains(key))
      keys.push_back(key);
  }
  return keys;
}

void ObjectReader::warn_unknown_keys() {
  for (const auto& key : unknown_keys())
    findings_.warn(path(key) + ": unknown field, ignored");
}

bool is_object(Findings& f, const json& value, const std::string& path) {
  if (value.is_object())
    return true;
  f.mismatch(path, "an object", value);
  return false;
}

std::optional<std::string> read_string(Findings& f, const json& value, const std::string& path,
                                       std::string_view expected) {
  if (!value.is_string() || value.get_ref<const std::string&>().empty()) {
    f.mismatch(path, expected, value);
    return std::nullopt;
  }
  return value.get<std::string>();
}

bool is_lower_hex(std::string_view text, std::size_t digits) {
  if (text.size() != digits)
    return false;
  for (char c : text) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')))
      return false;
  }
  return true;
}

std::optional<std::string> read_hex(Findings& f, const json& value, const std::string& path,
                                    std::size_t digits, std::string_view expected) {
  if (!value.is_string() || !is_lower_hex(value.get_ref<const std::string&>(), digits)) {
    f.mismatch(path, expected, value);
    return std::nullopt;
  }
  return value.get<std::string>();
}

std::optional<bool> read_bool(Findings& f, const json& value, const std::string& path) {
  if (!value.is_boolean()) {
    f.mismatch(path, "true or false", value);
    return std::nullopt;
  }
  return value.get<bool>();
}

std::optional<std::int64_t> read_integer(Findings& f, const json& value, const std::string& path,
                                         std::int64_t minimum, std::string_view expected) {
  // number_unsigned values that fit int64 are fine; larger ones are out of range.
  const bool fits = value.is_number_integer() &&
                    (!value.is_number_unsigned() ||
                     value.get<std::uint64_t>() <=
                         static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()));
  if (!fits || value.get<std::int64_t>() < minimum) {
    f.mismatch(path, expected, value);
    return std::nullopt;
  }
  return value.get<std::int64_t>();
}

std::optional<double> read_number(Findings& f, const json& value, const std::string& path,
                                  std::string_view expected) {
  if (!value.is_number() || !std::isfinite(value.get<double>())) {
    f.mismatch(path, expected, value);
    return std::nullopt;
  }
  return value.get<double>();
}

std::optional<std::vector<double>> read_numbers(Findings& f, const json& value,
                                                const std::string& path) {
  if (!value.is_array()) {
    f.mismatch(path, "an array of numbers", value);
    return std::nullopt;
  }
  std::vector<double> numbers;
  numbers.reserve(value.size());
  bool ok = true;
  for (std::size_t i = 0; i < value.size(); ++i) {
    // The element's path is only spelled out for an error: long arrays stay cheap.
    const bool fine = value[i].is_number() && std::isfinite(value[i].get<double>());
    auto number = fine ? std::optional(value[i].get<double>())
                       : read_number(f, value[i], json_path_index(path, i));
    ok = ok && number.has_value();
    if (number)
      numbers.push_back(*number);
  }
  if (!ok)
    return std::nullopt;
  return numbers;
}

std::optional<std::string> optional_string(ObjectReader& r, std::string_view key) {
  const json* v = r.optional(key);
  return v ? read_string(r.findings(), *v, r.path(key)) : std::nullopt;
}

std::optional<std::string> required_string(ObjectReader& r, std::string_view key) {
  const json* v = r.required(key, "a non-empty string");
  return v ? read_string(r.findings(), *v, r.path(key)) : std::nullopt;
}

std::optional<std::string> optional_sha256(ObjectReader& r, std::string_view key) {
  const json* v = r.optional(key);
  return v ? read_hex(r.findings(), *v, r.path(key), 64, kSha256) : std::nullopt;
}

std::optional<bool> optional_bool(ObjectReader& r, std::string_view key) {
  const json* v = r.optional(key);
  return v ? read_bool(r.findings(), *v, r.path(key)) : std::nullopt;
}

std::optional<std::int64_t> optional_integer(ObjectReader& r, std::string_view key,
                                             std::int64_t minimum, std::string_view expected) {
  const json* v = r.optional(key);
  return v ? read_integer(r.findings(), *v, r.path(key), minimum, expected) : std::nullopt;
}

std::optional<FileRef> read_file_ref(ObjectReader& parent, std::string_view key) {
  return read_section(parent, key, [](ObjectReader& r) {
    return FileRef{required_string(r, "uri").value_or(""), optional_sha256(r, "sha256")};
  });
}

bool all_digits(std::string_view text) {
  for (char c : text) {
    if (c < '0' || c > '9')
      return false;
  }
  return true;
}

}  // namespace reverify::manifest_fields
