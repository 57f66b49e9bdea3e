#pragma once
// Internal to settings/: the `pager:` section of reverify.yaml read into the typed PagerConfig
// (pager/pager_config.hpp describes every key), through the same Section reader as the rest of
// the file, so its errors are reported in the same pass as every other. Relative `*_file` and
// `path` keys resolve against `base` (the config file's folder). A missing section is an empty
// config (no senders, no routes).

#include <filesystem>

#include "pager/pager_config.hpp"
#include "settings/yaml_section.hpp"

namespace reverify {

void read_pager(Section section, const std::filesystem::path& base, PagerConfig& pager);

}  // namespace reverify
