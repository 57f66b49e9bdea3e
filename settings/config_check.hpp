#pragma once
// What `reverifyd --check-config` adds to the loader's own errors: whether the machine around a
// config can run it. Each problem names its config key. Errors make --check-config exit 2;
// reverifyd itself logs every problem as a warning, at start and on every reload it applies, and
// keeps going (a registry mount or a permission can be fixed while it runs, and a gate that is
// down is worse than a warning).
//   errors:   a directory source whose root is not a folder; a secret file (API and registry
//             tokens, pager keys and URLs, the Kubernetes token) that other users can read; a
//             pager sender or the runner that cannot be built (an unreadable key, a bad endpoint);
//             a process runner that cannot sandbox jobs here while job code is not trusted, or
//             whose sandbox paths would show a job one of the verifier's own files;
//   warnings: a code mirror folder or the Docker socket that does not exist yet; job code
//             trusted (runner.trust_job_code: true) under the process runner.
// (No sources at all is the loader's error for reverifyd: read_daemon_config_file.)
// Sections with loader errors are not built again (one problem is reported once).

#include <string>
#include <vector>

#include "settings/config.hpp"

namespace reverify {

enum class ProblemSeverity { error, warning };

struct ConfigProblem {
  ProblemSeverity severity;
  std::string message;  // "<yaml path>: <what is wrong>, <what to do>"
};

// `loader_errors` are the reading's errors: a section named there is not checked again.
std::vector<ConfigProblem> check_deployment(const Config& config,
                                            const std::vector<std::string>& loader_errors = {});

}  // namespace reverify
