// The smallest daemon config the loader accepts (a state_dir and one source), which the config
// tests extend key by key.
#pragma once

#include <string>

namespace reverify::test {

inline const std::string kMinimalConfig =
    "state_dir: /var/lib/reverify\nsources: [{name: reg, kind: directory, root: registry}]\n";

}  // namespace reverify::test
