#include "policies/manifest_diff.hpp"

#include <algorithm>

#include "core/manifest_json.hpp"
#include "core/manifest_path.hpp"

namespace reverify {
namespace {
using nlohmann::json;

struct SectionSpec {
  const char* name;
  bool input;
  std::vector<const char*> keys;  // top-level keys of the manifest JSON in this section
};

const std::vector<SectionSpec>& section_specs() {
  static const std::vector<SectionSpec> specs = {
      {"data", true, {"data"}},
      {"code", true, {"code"}},
      {"config", true, {"config"}},
      {"environment", true, {"environment"}},
      {"seeds", true, {"seeds"}},
      {"evaluation", false, {"evaluation"}},
      {"weights", false, {"weights"}},
      {"run", false, {"run"}},
      {"tolerance", false, {"tolerance"}},
      {"identity", false, {"schema", "model", "version", "owner", "level"}},
  };
  return specs;
}

std::optional<json> member(const json& object, const std::string& key) {
  auto it = object.find(key);
  if (it == object.end())
    return std::nullopt;
  return *it;
}

void diff_values(const std::string& path, const std::optional<json>& a,
                 const std::optional<json>& b, std::vector<FieldChange>& out) {
  if (a && b && *a == *b)
    return;
  if (a && b && a->is_object() && b->is_object()) {
    std::vector<std::string> keys;
    for (const auto& [key, value] : a->items())
      keys.push_back(key);
    for (const auto& [key, value] : b->items()) {
      if (!a->contains(key))
        keys.push_back(key);
    }
    std::sort(keys.begin(), keys.end());
    for (const auto& key : keys)
      diff_values(json_path_key(path, key), member(*a, key), member(*b, key), out);
    return;
  }
  if (a && b && a->is_array() && b->is_array()) {
    for (std::size_t i = 0; i < std::max(a->size(), b->size()); ++i) {
      auto at = [i](const json& array) {
        return i < array.size() ? std::optional<json>(array[i]) : std::nullopt;
      };
      diff_values(json_path_index(path, i), at(*a), at(*b), out);
    }
    return;
  }
  if (!a && !b)
    return;
  out.push_back({path, a, b});
}
}  // namespace

std::vector<std::string> ManifestDiff::moved_inputs() const {
  std::vector<std::string> names;
  for (const auto& section : sections) {
    if (section.input)
      names.push_back(section.section);
  }
  return names;
}

ManifestDiff diff_manifests(const Manifest& a, const Manifest& b) {
  const json ja = to_json(a), jb = to_json(b);
  ManifestDiff diff;
  auto add_section = [&diff](SectionDiff section) {
    if (!section.changes.empty())
      diff.sections.push_back(std::move(section));
  };
  for (const auto& spec : section_specs()) {
    SectionDiff section{spec.name, spec.input, {}};
    for (const char* key : spec.keys) {
      diff_values(key, member(ja, key), member(jb, key), section.changes);
    }
    add_section(std::move(section));
  }
  SectionDiff extra{"extra", false, {}};
  json extra_a = json::object(), extra_b = json::object();
  for (const auto& [key, value] : a.extra)
    extra_a[key] = value;
  for (const auto& [key, value] : b.extra)
    extra_b[key] = value;
  diff_values("", extra_a, extra_b, extra.changes);
  add_section(std::move(extra));
  return diff;
}

json to_json(const ManifestDiff& diff) {
  json sections = json::array();
  for (const auto& section : diff.sections) {
    json changes = json::array();
    for (const auto& change : section.changes) {
      json c = {{"path", change.path}};
      if (change.old_value)
        c["old"] = *change.old_value;
      if (change.new_value)
        c["new"] = *change.new_value;
      changes.push_back(std::move(c));
    }
    sections.push_back(
        {{"section", section.section}, {"input", section.input}, {"changes", std::move(changes)}});
  }
  return {{"same", diff.empty()}, {"inputs_moved", diff.moved_inputs()}, {"sections", sections}};
}

}  // namespace reverify
