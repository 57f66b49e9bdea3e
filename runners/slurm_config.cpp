#include "runners/slurm_config.hpp"

namespace reverify {

SlurmPlacement SlurmConfig::placement_for(const std::string& model) const {
  SlurmPlacement placement = this->placement;
  const auto it = models.find(model);
  if (it == models.end())
    return placement;
  const SlurmPlacement& over = it->second;
  const auto take = [](std::string& into, const std::string& value) {
    if (!value.empty())
      into = value;
  };
  take(placement.partition, over.partition);
  take(placement.account, over.account);
  take(placement.qos, over.qos);
  take(placement.memory, over.memory);
  if (over.cpus)
    placement.cpus = over.cpus;
  if (over.time_limit)
    placement.time_limit = over.time_limit;
  return placement;
}

std::filesystem::path SlurmConfig::node_path(const std::filesystem::path& daemon_path) const {
  if (node_root.empty() || node_root == shared_root)
    return daemon_path;
  const auto relative = daemon_path.lexically_relative(shared_root);
  if (relative.empty() || *relative.begin() == "..")
    return daemon_path;
  return relative == "." ? node_root : node_root / relative;
}

}  // namespace reverify
