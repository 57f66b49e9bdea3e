#include "settings/yaml_section.hpp"

#include "core/secret_file.hpp"
#include "core/unix_time.hpp"

namespace reverify {

Section::Section(const YAML::Node& node, std::string path, std::vector<std::string>& errors)
    : node_(node), path_(std::move(path)), errors_(errors) {
  if (node_ && !node_.IsNull() && !node_.IsMap())
    fail(path_, "must be a mapping");
}

YAML::Node Section::get(const std::string& key) {
  seen_.insert(key);
  if (!node_ || !node_.IsMap())
    return YAML::Node();
  return node_[key];
}

bool Section::has(const std::string& key) const {
  if (!node_ || !node_.IsMap())
    return false;
  const auto value = node_[key];
  return value && !value.IsNull();
}

void Section::read_duration(const std::string& key, std::int64_t& seconds) {
  std::string text;
  read(key, text);
  if (text.empty())
    return;
  auto parsed = parse_duration_s(text);
  if (!parsed.ok())
    return fail(child_path(key), parsed.error().message);
  seconds = *parsed;
}

void Section::read_positive_duration(const std::string& key, std::chrono::seconds& out) {
  std::int64_t seconds = -1;
  read_duration(key, seconds);
  if (seconds == 0) {
    fail(child_path(key), "must be longer than 0s, got \"" + node_[key].Scalar() + "\"");
  } else if (seconds > 0) {
    out = std::chrono::seconds(seconds);
  }
}

void Section::read_http_url(const std::string& key, std::string& url) {
  std::string text;
  read(key, text);
  if (text.empty())
    return;
  if (text.rfind("http://", 0) != 0 && text.rfind("https://", 0) != 0) {
    return fail(child_path(key), "expected an http:// or https:// URL, got \"" + text + "\"");
  }
  url = text;
}

void Section::read_secret_file(const std::string& key, const std::filesystem::path& base,
                               SecretForm form, std::string& secret) {
  const std::string inline_key = key.substr(0, key.size() - std::string("_file").size());
  if (has(inline_key)) {
    fail_key(inline_key, "secrets are not accepted inline; put it in a file and set " + key +
                             " (the file should be readable only by reverifyd)");
  }
  std::string file;
  read(key, file);
  if (file.empty())
    return;
  auto read = reverify::read_secret_file(base / file, child_path(key), form);
  if (!read.ok())
    return errors_.push_back(read.error().message);
  secret = std::move(*read);
}

void Section::reject_unknown() {
  if (!node_ || !node_.IsMap())
    return;
  std::string known;
  for (const auto& key : seen_)
    known += (known.empty() ? "" : ", ") + key;
  for (const auto& item : node_) {
    auto key = item.first.as<std::string>();
    if (!seen_.count(key) && !reported_.count(key))
      fail(child_path(key), "unknown key (expected one of: " + known + ")");
  }
}

}  // namespace reverify
