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

}  // namespace reverify
