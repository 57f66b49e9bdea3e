#pragma once
// Internal to settings/: the one YAML reader of reverify.yaml. A Section reads typed values out of
// one YAML mapping and names the YAML path of every problem ("schedule.per_cycle: must be >= 1,
// got 0"). Problems are collected, never thrown, so one load (and --check-config) lists every
// error of the file at once. Unknown keys are errors: a typo in a schedule, a token or a pager
// key must not silently fall back to a default.

#include <yaml-cpp/yaml.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "core/enum_names.hpp"
#include "core/secret_file.hpp"

namespace reverify {

class Section {
 public:
  // A missing or null node is an empty section; anything but a mapping is an error at `path`.
  Section(const YAML::Node& node, std::string path, std::vector<std::string>& errors);

  std::string child_path(const std::string& key) const {
    return path_.empty() ? key : path_ + "." + key;
  }
  const std::string& path() const { return path_; }

  // The value at `key` (undefined when absent); the key counts as known.
  YAML::Node get(const std::string& key);
  // Whether `key` is present with a non-null value; does not make the key known.
  bool has(const std::string& key) const;
  Section section(const std::string& key) { return Section(get(key), child_path(key), errors_); }

  void fail(const std::string& path, const std::string& message) {
    errors_.push_back(path + ": " + message);
  }
  // An error about `key` itself (an inline secret): reported once, not again as unknown.
  void fail_key(const std::string& key, const std::string& message) {
    reported_.insert(key);
    fail(child_path(key), message);
  }

  template <class T>
  void read(const std::string& key, T& out) {
    auto value = get(key);
    if (!value || value.IsNull())
      return;
    try {
      out = value.as<T>();
    } catch (const YAML::Exception&) {
      fail(child_path(key),
           std::string("expected ") + type_name<T>() + ", got \"" + scalar_text(value) + "\"");
    }
  }

  template <class T>
  void read_optional(const std::string& key, std::optional<T>& out) {
    auto value = get(key);
    if (!value || value.IsNull())
      return;
    T v{};
    read(key, v);
    out = v;
  }

  // One of an enum's names (core/enum_names.hpp); any other word is an error listing them.
  template <NamedEnum E>
  void read_enum(const std::string& key, E& out) {
    std::string text;
    read(key, text);
    if (text.empty())
      return;
    if (auto value = enum_from_string<E>(text)) {
      out = *value;
    } else {
      fail(child_path(key), "expected one of " + enum_names<E>() + ", got \"" + text + "\"");
    }
  }

  // A duration with a unit ("10m"); a bare integer means seconds.
  void read_duration(const std::string& key, std::int64_t& seconds);
  // The same, and it must be longer than 0s.
  void read_positive_duration(const std::string& key, std::chrono::seconds& out);
  // An http:// or https:// URL.
  void read_http_url(const std::string& key, std::string& url);

  // A secret read from the file a `*_file` key names, checked for its form (secret_file.hpp);
  // the inline key is refused.
  void read_secret_file(const std::string& key, const std::filesystem::path& base, SecretForm form,
                        std::string& secret);

  template <class T>
  void at_least(const std::string& key, T value, T minimum) {
    if (value < minimum) {
      std::ostringstream out;
      out << "must be >= " << minimum << ", got " << value;
      fail(child_path(key), out.str());
    }
  }

  // Call after every key was read: reports keys this version does not know, with the ones it does.
  void reject_unknown();

  const YAML::Node& node() const { return node_; }
  std::vector<std::string>& errors() { return errors_; }

 private:
  template <class T>
  static const char* type_name() {
    if constexpr (std::is_same_v<T, bool>)
      return "true or false";
    if constexpr (std::is_integral_v<T>)
      return "an integer";
    if constexpr (std::is_floating_point_v<T>)
      return "a number";
    return "a string";
  }
  static std::string scalar_text(const YAML::Node& node) {
    return node.IsScalar() ? node.Scalar() : std::string("<not a scalar>");
  }

  YAML::Node node_;
  std::string path_;
  std::vector<std::string>& errors_;
  std::set<std::string> seen_;      // keys this section knows (read or looked up)
  std::set<std::string> reported_;  // keys already reported by an error of their own
};

}  // namespace reverify
