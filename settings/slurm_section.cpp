#include "settings/slurm_section.hpp"

#include <algorithm>
#include <cctype>

namespace reverify {
namespace {

// A word Slurm takes as one option value: no whitespace, no comma, not empty ("" in the config
// is Slurm's own default).
bool is_slurm_word(const std::string& text) {
  return !text.empty() && std::none_of(text.begin(), text.end(), [](char c) {
    return std::isspace(static_cast<unsigned char>(c)) || c == ',';
  });
}

// --mem's form: a whole number with an optional unit K, M, G or T.
bool is_memory_size(const std::string& text) {
  if (text.empty())
    return false;
  const std::size_t digits = text.find_first_not_of("0123456789");
  if (digits == 0)
    return false;
  return digits == std::string::npos ||
         (digits == text.size() - 1 && std::string("KMGT").find(text.back()) != std::string::npos);
}

void read_word(Section& s, const std::string& key, std::string& out) {
  s.read(key, out);
  if (!out.empty() && !is_slurm_word(out))
    s.fail(s.child_path(key), "expected one word without spaces or commas, got \"" + out + "\"");
}

// partition, account, qos, cpus, memory, time_limit: runner.slurm's and each models.<name>'s.
void read_placement(Section& s, SlurmPlacement& placement) {
  read_word(s, "partition", placement.partition);
  read_word(s, "account", placement.account);
  read_word(s, "qos", placement.qos);
  s.read_optional("cpus", placement.cpus);
  if (placement.cpus)
    s.at_least<std::int64_t>("cpus", *placement.cpus, 1);
  s.read("memory", placement.memory);
  if (!placement.memory.empty() && !is_memory_size(placement.memory)) {
    s.fail(s.child_path("memory"),
           "expected a size for sbatch --mem (a whole number, then K, M, G or T: \"16G\"), got \"" +
               placement.memory + "\"");
  }
  if (const auto node = s.get("time_limit"); node && !node.IsNull()) {
    std::chrono::seconds limit{0};
    s.read_positive_duration("time_limit", limit);
    if (limit.count() > 0)
      placement.time_limit = limit;
  }
}

void read_gpu_models(Section& s, SlurmConfig& slurm) {
  auto node = s.get("gpu_models");
  if (!node || node.IsNull())
    return;
  if (!node.IsMap()) {
    return s.fail(s.child_path("gpu_models"),
                  "must map a recorded accelerator model to {gres_type: <type>} or {feature: "
                  "<feature>}");
  }
  for (const auto& item : node) {
    const auto model = item.first.as<std::string>();
    Section m(item.second, s.child_path("gpu_models") + ".\"" + model + "\"", s.errors());
    SlurmGpuModel gpu;
    read_word(m, "gres_type", gpu.gres_type);
    read_word(m, "feature", gpu.feature);
    m.reject_unknown();
    if (gpu.gres_type.empty() == gpu.feature.empty())
      m.fail(m.path(), "needs exactly one of gres_type and feature");
    slurm.gpu_models[model] = gpu;
  }
}

std::filesystem::path read_path(Section& s, const std::string& key,
                                const std::filesystem::path& current) {
  std::string text;
  s.read(key, text);
  return text.empty() ? current : std::filesystem::path(text);
}

}  // namespace

void read_slurm(Section s, const std::filesystem::path& state_dir, SlurmConfig& slurm) {
  slurm.shared_root = state_dir / "slurm";
  slurm.slurm_conf = read_path(s, "slurm_conf", slurm.slurm_conf);
  slurm.bin_dir = read_path(s, "bin_dir", slurm.bin_dir);
  const auto shared = read_path(s, "shared_root", {});
  if (!shared.empty())
    slurm.shared_root = shared.is_absolute() ? shared : state_dir / shared;
  slurm.node_root = read_path(s, "node_root", slurm.node_root);
  if (!slurm.node_root.empty() && !slurm.node_root.is_absolute())
    s.fail(s.child_path("node_root"), "must be an absolute path on the nodes");
  s.read("path_env", slurm.path_env);
  read_placement(s, slurm.placement);
  read_gpu_models(s, slurm);
  if (auto models = s.get("models"); models && models.IsMap()) {
    for (const auto& item : models) {
      const auto name = item.first.as<std::string>();
      Section m(item.second, s.child_path("models") + "." + name, s.errors());
      read_placement(m, slurm.models[name]);
      m.reject_unknown();
    }
  } else if (models && !models.IsNull()) {
    s.fail(s.child_path("models"), "must map a model name to its partition, account, qos, ...");
  }
  auto containers = s.section("containers");
  containers.read_enum("runtime", slurm.containers.runtime);
  containers.read("command", slurm.containers.command);
  containers.read("args", slurm.containers.args);
  containers.read("pull_args", slurm.containers.pull_args);
  containers.reject_unknown();
  s.read("job_name_prefix", slurm.job_name_prefix);
  s.read_positive_duration("max_pending", slurm.max_pending);
  s.read_positive_duration("cancel_wait", slurm.cancel_wait);
  std::chrono::seconds seconds{0};
  s.read_positive_duration("poll_interval", seconds);
  if (seconds.count() > 0)
    slurm.poll_interval = seconds;
  seconds = std::chrono::seconds(0);
  s.read_positive_duration("reconnect_grace", seconds);
  if (seconds.count() > 0)
    slurm.reconnect_grace = seconds;
  s.read("log_cap_bytes", slurm.log_cap_bytes);
  s.reject_unknown();
}

}  // namespace reverify
