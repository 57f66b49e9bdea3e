#pragma once
// Internal to settings/: duplicate keys in a YAML document. yaml-cpp 0.7 keeps both entries of a
// mapping that names a key twice and answers lookups with the first, so `state_dir: a` followed
// by `state_dir: b` silently meant `a`; a config that says two things is an error instead.

#include <yaml-cpp/yaml.h>

#include <string>
#include <vector>

namespace reverify {

// One error per repeated key of every mapping in the document: "<path>: duplicate key (line N,
// first at line M): a key may appear once per mapping". Visits at most kMaxYamlNodes nodes (an
// alias is visited again wherever it is used), then reports that the document is too large.
inline constexpr std::size_t kMaxYamlNodes = 1'000'000;
std::vector<std::string> duplicate_key_errors(const YAML::Node& root);

}  // namespace reverify
