#include "policies/manifest_diff.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <string_view>

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
      {"subsample", false, {"subsample"}},
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

// Where a file is found, not what it holds: `key` is "uri" and the hash beside it is the same
// on both sides.
bool location_only(const json& a, const json& b, const std::string& key) {
  if (key != "uri")
    return false;
  for (const char* hash : {"sha256", "tensor_sha256"}) {
    if (a.contains(hash) && b.contains(hash) && a[hash].is_string() && a[hash] == b[hash])
      return true;
  }
  return false;
}

struct Differ {
  SectionDiff& section;

  // `in_list`: inside an array already recorded in section.lists (only the outermost is).
  void values(const std::string& path, const std::optional<json>& a, const std::optional<json>& b,
              bool in_list = false, bool relocated = false) {
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
      for (const auto& key : keys) {
        values(json_path_key(path, key), member(*a, key), member(*b, key), in_list,
               location_only(*a, *b, key));
      }
      return;
    }
    if (a && b && a->is_array() && b->is_array()) {
      const std::size_t n = std::max(a->size(), b->size());
      auto at = [](const json& array, std::size_t i) {
        return i < array.size() ? std::optional<json>(array[i]) : std::nullopt;
      };
      if (!in_list) {
        ListChange list{path, a->size(), b->size(), 0};
        for (std::size_t i = 0; i < n; ++i)
          list.changed += at(*a, i) != at(*b, i);
        section.lists.push_back(std::move(list));
      }
      for (std::size_t i = 0; i < n; ++i)
        values(json_path_index(path, i), at(*a, i), at(*b, i), true);
      return;
    }
    if (!a && !b)
      return;
    section.changes.push_back({path, a, b, relocated});
  }
};

// ---- Summary ----

constexpr std::size_t kSummaryValueChars = 24;

std::string short_value(const std::optional<json>& value) {
  if (!value)
    return "(absent)";
  // A long string keeps its quotes (a hash cut to its first characters still tells two apart).
  if (value->is_string() && value->get_ref<const std::string&>().size() > kSummaryValueChars)
    return "\"" + value->get_ref<const std::string&>().substr(0, kSummaryValueChars - 5) + "...\"";
  std::string text = value->dump(-1, ' ', false, json::error_handler_t::replace);
  return text.size() > kSummaryValueChars ? text.substr(0, kSummaryValueChars - 3) + "..." : text;
}

// The section that holds an evaluation, weights and tolerance of its own: its groups are one
// level deeper ("subsample.evaluation.segments", "subsample.tolerance.segment_seed_runs").
constexpr std::string_view kNestedSection = "subsample.";

// The path of the first two components of `path` ("evaluation.segments" of
// "evaluation.segments[\"digit=8\"].accuracy"; three under kNestedSection), or "" when it has
// no component below them.
std::string group_of(const std::string& path) {
  const bool nested = path.compare(0, kNestedSection.size(), kNestedSection) == 0;
  std::size_t boundaries = 0;
  bool quoted = false;
  for (std::size_t i = nested ? kNestedSection.size() : 0; i < path.size(); ++i) {
    const char c = path[i];
    if (quoted) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        quoted = false;
      continue;
    }
    if (c == '"') {
      quoted = true;
    } else if ((c == '.' || c == '[') && i > 0 && ++boundaries == 2) {
      return path.substr(0, i);
    }
  }
  return "";
}

// The array of `lists` that `path` is an element of (at any depth), if any.
const ListChange* list_of(const std::vector<ListChange>& lists, const std::string& path) {
  for (const auto& list : lists) {
    if (path.size() > list.path.size() && path.compare(0, list.path.size(), list.path) == 0 &&
        path[list.path.size()] == '[')
      return &list;
  }
  return nullptr;
}

std::string list_text(const ListChange& list) {
  // Seed-run lists hold one element per run: say so, it is what an owner counts.
  const char* what = list.path.find("seed_runs") != std::string::npos ? "runs" : "values";
  return std::to_string(list.old_size) + " -> " + std::to_string(list.new_size) + " " + what +
         ", " + std::to_string(list.changed) + " changed";
}

// Lines of one group beyond kSummaryGroupLines become one line naming the first few.
std::vector<SummaryLine> collapse_groups(const std::vector<SummaryLine>& lines) {
  std::map<std::string, std::size_t> per_group;
  for (const auto& line : lines) {
    if (auto group = group_of(line.path); !group.empty())
      ++per_group[group];
  }
  std::vector<SummaryLine> out;
  std::map<std::string, std::vector<std::string>> members;
  for (const auto& line : lines) {
    const std::string group = group_of(line.path);
    if (group.empty() || per_group[group] <= kSummaryGroupLines) {
      out.push_back(line);
      continue;
    }
    auto& names = members[group];
    if (names.empty())
      out.push_back({group, ""});  // filled in below, at the group's first position
    std::string name = line.path.substr(group.size());
    if (!name.empty() && name[0] == '.')
      name.erase(0, 1);
    names.push_back(std::move(name));
  }
  for (auto& line : out) {
    auto it = members.find(line.path);
    if (it == members.end() || !line.text.empty())
      continue;
    const auto& names = it->second;
    line.text = std::to_string(names.size()) + " fields changed: ";
    for (std::size_t i = 0; i < std::min(names.size(), kSummaryGroupLines); ++i)
      line.text += (i ? ", " : "") + names[i];
    if (names.size() > kSummaryGroupLines)
      line.text += ", ...";
  }
  return out;
}
}  // namespace

bool SectionDiff::moved() const {
  return std::any_of(changes.begin(), changes.end(),
                     [](const FieldChange& c) { return !c.location_only; });
}

std::vector<std::string> ManifestDiff::moved_inputs() const {
  std::vector<std::string> names;
  for (const auto& section : sections) {
    if (section.input && section.moved())
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
    SectionDiff section{spec.name, spec.input, {}, {}};
    for (const char* key : spec.keys)
      Differ{section}.values(key, member(ja, key), member(jb, key));
    add_section(std::move(section));
  }
  SectionDiff extra{"extra", false, {}, {}};
  json extra_a = json::object(), extra_b = json::object();
  for (const auto& [key, value] : a.extra)
    extra_a[key] = value;
  for (const auto& [key, value] : b.extra)
    extra_b[key] = value;
  Differ{extra}.values("", extra_a, extra_b);
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
      if (change.location_only)
        c["location_only"] = true;
      changes.push_back(std::move(c));
    }
    json lists = json::array();
    for (const auto& list : section.lists) {
      lists.push_back({{"path", list.path},
                       {"old_size", list.old_size},
                       {"new_size", list.new_size},
                       {"changed", list.changed}});
    }
    sections.push_back({{"section", section.section},
                        {"input", section.input},
                        {"moved", section.moved()},
                        {"changes", std::move(changes)},
                        {"lists", std::move(lists)}});
  }
  return {{"same", diff.empty()}, {"inputs_moved", diff.moved_inputs()}, {"sections", sections}};
}

DiffSummary summarize(const ManifestDiff& diff) {
  DiffSummary summary;
  summary.inputs_moved = diff.moved_inputs();
  for (const auto& section : diff.sections) {
    SectionSummary out{section.section, section.input, section.moved(), {}};
    if (out.moved && !section.input)
      summary.also_differ.push_back(section.section);
    std::vector<SummaryLine> lines;
    std::set<const ListChange*> listed;
    for (const auto& change : section.changes) {
      if (change.location_only) {
        summary.relocated.push_back(change.path);
      } else if (const ListChange* list = list_of(section.lists, change.path)) {
        if (listed.insert(list).second)
          lines.push_back({list->path, list_text(*list)});
      } else {
        lines.push_back(
            {change.path, short_value(change.old_value) + " -> " + short_value(change.new_value)});
      }
    }
    out.lines = collapse_groups(lines);
    if (!out.lines.empty())
      summary.sections.push_back(std::move(out));
  }
  return summary;
}

}  // namespace reverify
