#pragma once
// Configuration of the kubernetes runner (docs/design.md, "Runners"): where the API server is, how
// to authenticate, and how the job reaches its inputs and outputs.
//
// Storage model (chosen because the daemon must read the outputs and verify the inputs itself):
// the dataset, the eval set and the out folder live on PersistentVolumeClaims that are ALSO
// mounted on the daemon's machine. A `KubernetesVolume` says "claim C is mounted at daemon_path
// here"; the runner turns a daemon-side path under daemon_path into a subPath mount of C in the
// pod. Inputs are mounted read-only; the out folder is `<outputs.daemon_path>/<outputs.sub_dir>/
// <rebuild id>/out`, created by the runner before the Job and read back by collect().

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/result.hpp"

namespace reverify {

// The in-cluster service account files (Kubernetes' documented mount point).
inline constexpr const char* kServiceAccountDir = "/var/run/secrets/kubernetes.io/serviceaccount";

// A PersistentVolumeClaim that the daemon also has mounted at daemon_path.
struct KubernetesVolume {
  std::string claim_name;             // PVC in the runner's namespace
  std::filesystem::path daemon_path;  // where the daemon sees the claim's root

  bool operator==(const KubernetesVolume&) const = default;
};

struct KubernetesOutputs {
  KubernetesVolume volume;  // must be writable by the job (ReadWriteMany when the daemon shares it)
  std::string sub_dir = "reverify";  // folder inside the claim holding one folder per rebuild

  bool operator==(const KubernetesOutputs&) const = default;
};

struct KubernetesResources {
  std::optional<std::string> cpu;     // quantity, requests = limits, e.g. "8"
  std::optional<std::string> memory;  // quantity, requests = limits, e.g. "64Gi"

  bool operator==(const KubernetesResources&) const = default;
};

struct KubernetesConfig {
  // API server base URL, e.g. "https://10.0.0.1:6443". Empty + in_cluster: from
  // KUBERNETES_SERVICE_HOST / KUBERNETES_SERVICE_PORT.
  std::string api_server;
  std::string namespace_name = "default";  // "namespace" in YAML; in_cluster: the SA's namespace
  std::filesystem::path token_file;        // bearer token, re-read on every request (rotation)
  std::filesystem::path ca_file;  // TLS trust anchor of the API server; empty = system store
  bool in_cluster = false;        // token, ca.crt and namespace from service_account_dir
  std::filesystem::path service_account_dir = kServiceAccountDir;

  std::string service_account;  // the Job's pod service account; empty = namespace default
  // A deny-all NetworkPolicy on the pod of each job whose model does not declare network
  // (created before the Job, deleted with it): the pod then reaches nothing, the daemon's API
  // included, where the cluster's network plugin enforces NetworkPolicies. false needs
  // runner.trust_job_code: true (the pod is on the cluster network).
  bool network_policy = true;
  std::string image_pull_secret;  // empty = none
  std::map<std::string, std::string> node_selector;
  nlohmann::json tolerations = nlohmann::json::array();  // core/v1 Toleration objects, as given
  KubernetesResources resources;
  std::optional<std::int64_t> run_as_user;  // pod securityContext.runAsUser
  bool run_as_non_root = false;             // pod securityContext.runAsNonRoot
  std::optional<std::int64_t> fs_group;     // pod securityContext.fsGroup (write access to PVCs)

  std::vector<KubernetesVolume> input_volumes;  // claims holding datasets and eval sets
  KubernetesOutputs outputs;

  std::int64_t ttl_seconds_after_finished = 86400;  // safety net; cleanup() deletes the Job itself
  std::int64_t termination_grace_period_s = 30;     // SIGTERM -> SIGKILL on cancel/preemption
  std::int64_t watch_timeout_s = 300;               // server-side timeout of one watch request
  std::int64_t log_tail_lines = 5000;               // pod log lines fetched into JobExit::log_tail
  std::size_t log_cap_bytes = 1024 * 1024;          // and at most this many bytes of them
  // How long wait() keeps retrying an API server that stopped answering before error:runner-lost.
  std::chrono::milliseconds reconnect_grace{60000};

  bool operator==(const KubernetesConfig&) const = default;
};

// What every API request needs, resolved once from a KubernetesConfig (in-cluster files read).
struct KubernetesEndpoint {
  std::string api_server;  // no trailing '/'
  std::string namespace_name;
  std::filesystem::path token_file;  // empty = no Authorization header
  std::filesystem::path ca_file;
};

// Checks the config (field named in the error) and applies the in-cluster defaults; reads the
// in-cluster namespace file. error:invalid_argument or io.
Result<KubernetesEndpoint> resolve_endpoint(const KubernetesConfig& config);

}  // namespace reverify
