#pragma once
// Internal to settings/: runner.slurm of reverify.yaml read into the typed SlurmConfig
// (runners/slurm_config.hpp describes every key), through the same Section reader as the rest of
// the file. shared_root defaults to <state_dir>/slurm; a relative one resolves against state_dir.

#include <filesystem>

#include "runners/slurm_config.hpp"
#include "settings/yaml_section.hpp"

namespace reverify {

void read_slurm(Section section, const std::filesystem::path& state_dir, SlurmConfig& slurm);

}  // namespace reverify
