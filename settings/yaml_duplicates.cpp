#include "settings/yaml_duplicates.hpp"

#include <map>
#include <utility>

namespace reverify {

std::vector<std::string> duplicate_key_errors(const YAML::Node& root) {
  std::vector<std::string> errors;
  // Depth-first with an explicit stack: a deep document cannot exhaust the C++ stack.
  std::vector<std::pair<YAML::Node, std::string>> pending{{root, ""}};
  std::size_t visited = 0;
  while (!pending.empty()) {
    auto [node, path] = std::move(pending.back());
    pending.pop_back();
    if (++visited > kMaxYamlNodes) {
      errors.push_back("the document has more than " + std::to_string(kMaxYamlNodes) +
                       " nodes (counting every use of an alias)");
      break;
    }
    std::vector<std::pair<YAML::Node, std::string>> children;
    if (node.IsSequence()) {
      for (std::size_t i = 0; i < node.size(); ++i)
        children.emplace_back(node[i], path + "[" + std::to_string(i) + "]");
    } else if (node.IsMap()) {
      std::map<std::string, int> first_line;  // key -> line it first appears on (1-based)
      for (const auto& item : node) {
        if (!item.first.IsScalar())
          continue;  // complex keys are refused by the readers as unknown keys
        const std::string& key = item.first.Scalar();
        const std::string at = path.empty() ? key : path + "." + key;
        const int line = item.first.Mark().line + 1;
        if (auto [it, inserted] = first_line.emplace(key, line); !inserted) {
          errors.push_back(at + ": duplicate key (line " + std::to_string(line) +
                           ", first at line " + std::to_string(it->second) +
                           "): a key may appear once per mapping");
          continue;
        }
        children.emplace_back(item.second, at);
      }
    }
    // Reversed onto the stack, so the document is visited (and reported) in its own order.
    pending.insert(pending.end(), std::make_move_iterator(children.rbegin()),
                   std::make_move_iterator(children.rend()));
  }
  return errors;
}

}  // namespace reverify
