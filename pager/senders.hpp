#pragma once
// Builds the Notifier of each configured sender, reading its secrets from their files. Errors
// name the YAML key, e.g. `pager.senders.pd.routing_key_file: cannot read "/etc/x": No such file`.

#include <map>
#include <memory>
#include <string>

#include "core/result.hpp"
#include "pager/notifier.hpp"
#include "pager/pager_config.hpp"

namespace reverify {

Result<std::shared_ptr<Notifier>> make_notifier(const SenderConfig& config);
Result<std::map<std::string, std::shared_ptr<Notifier>>> make_notifiers(const PagerConfig& config);

}  // namespace reverify
