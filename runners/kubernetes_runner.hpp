#pragma once
// The kubernetes runner (docs/design.md, "Runners"): one batch/v1 Job per rebuild, created through
// the API server's REST API, watched to completion (resourceVersion, re-list on 410 Gone), its
// pod's log read, deleted with propagationPolicy Background. Outputs on a PVC the daemon also
// mounts (kubernetes_config.hpp). JobHandle::ref is the Job's name.
//
// Isolation: the pod mounts no host path, no service account token, and the daemon's secrets
// live outside the cluster; a deny-all NetworkPolicy cuts it off the network unless its model
// declares network (kubernetes.network_policy; enforced by the cluster's network plugin).
//
// Outcomes: Complete -> exit 0; Failed/DeadlineExceeded -> timed_out; Failed otherwise -> the
// container's exit code; a pod that cannot start (ImagePullBackOff, InvalidImageName, ...) ->
// error:provision and the Job is deleted; the Job deleted behind our back, or the API server
// unreachable for longer than reconnect_grace -> error:runner-lost. Preempted or evicted pods
// (condition DisruptionTarget) are ignored by the Job's podFailurePolicy; the Job makes a new pod
// and wait() reports the replacement's outcome and log.

#include <memory>

#include "core/result.hpp"
#include "runners/kubernetes_api.hpp"
#include "runners/kubernetes_config.hpp"
#include "runners/kubernetes_job_status.hpp"
#include "runners/runner.hpp"
#include "runners/runner_config.hpp"

namespace reverify {

class KubernetesRunner final : public Runner {
 public:
  // REQUIRES: endpoint = resolve_endpoint(config) (use make_kubernetes_runner).
  KubernetesRunner(KubernetesConfig config, KubernetesEndpoint endpoint, JobIsolation isolation);

  RunnerKind kind() const override { return RunnerKind::kubernetes; }
  bool job_code_trusted() const override { return !config_.network_policy; }
  Status prepare(const RebuildSpec& spec) override;
  // Creates the job's deny-all NetworkPolicy first (unless its model declares network, or
  // kubernetes.network_policy is false), then the Job. A data or eval path that would show the
  // job one of the verifier's own files is error:provision.
  Result<JobHandle> start(const RebuildSpec& spec) override;
  // Logs reach `logs` once the job has ended (the pod's log, last log_tail_lines lines).
  Result<JobExit> wait(const JobHandle& job, const LogSink& logs) override;
  Result<JobOutputs> collect(const JobHandle& job, const std::filesystem::path& dest) override;
  void cleanup(const JobHandle& job) override;
  void cancel(const JobHandle& job) override;
  Result<std::optional<JobHandle>> find_running(const std::string& rebuild_id) override;

 private:
  // Until the Job is Complete or Failed; runner_lost / provision errors as described above.
  Result<JobState> watch_to_end(const JobHandle& job) const;
  Result<nlohmann::json> list_pods(const std::string& job_name) const;
  Status delete_job(const std::string& name) const;
  Status create_network_policy(const RebuildSpec& spec) const;
  void delete_network_policy(const std::string& name) const;
  std::filesystem::path rebuild_dir(const std::string& rebuild_id) const;  // daemon side

  KubernetesConfig config_;  // namespace_name resolved
  KubernetesApi api_;
  JobIsolation isolation_;
};

// Resolves the endpoint (in-cluster files) and builds the runner; errors name the config field.
// kubernetes.network_policy false without runner.trust_job_code is an error: the pods would be on
// the cluster network, able to reach the daemon.
Result<std::unique_ptr<Runner>> make_kubernetes_runner(const KubernetesConfig& config,
                                                       const JobIsolation& isolation = {});

}  // namespace reverify
