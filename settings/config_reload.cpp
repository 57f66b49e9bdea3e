#include <algorithm>

#include "settings/config.hpp"

namespace reverify {

std::vector<std::string> restart_only_changes(const Config& running, const Config& next) {
  std::vector<std::string> changed;
  if (running.state_dir != next.state_dir)
    changed.push_back("state_dir");
  if (running.work_root() != next.work_root())
    changed.push_back("work_dir");
  if (running.api.address != next.api.address)
    changed.push_back("api.address");
  if (running.api.port != next.api.port)
    changed.push_back("api.port");
  if (!(running.runner == next.runner))
    changed.push_back("runner");
  return changed;
}

std::vector<std::string> changed_settings(const Config& running, const Config& next) {
  std::vector<std::string> changed;
  auto before = running.written.begin();
  auto after = next.written.begin();
  // Both maps are in path order: one merge walk finds what was set, changed or removed.
  while (before != running.written.end() || after != next.written.end()) {
    if (after == next.written.end() ||
        (before != running.written.end() && before->first < after->first)) {
      changed.push_back(before++->first);
    } else if (before == running.written.end() || after->first < before->first) {
      changed.push_back(after++->first);
    } else {
      if (before->second != after->second)
        changed.push_back(before->first);
      ++before;
      ++after;
    }
  }
  if (running.api.token != next.api.token &&
      std::find(changed.begin(), changed.end(), "api.token_file") == changed.end())
    changed.push_back("api.token_file (its token)");
  return changed;
}

}  // namespace reverify
