#pragma once
// The `docker` runner: the Docker Engine API over its unix socket (core/http_client.hpp, never
// the docker CLI). The image is pulled by digest and must carry exactly that digest; the
// container gets the contract's environment, read-only data/eval binds, a writable out folder,
// no capabilities, no new privileges, GPUs through DeviceRequests, and nothing else of the host:
// no other bind (never the engine's socket, the verifier's config, secrets or store: a data or
// eval path that would show one of those is refused, error:provision), NetworkMode none unless
// the job's model declares network (then runner.docker.network_mode). It
// cannot take the host down: a read-only root file system (tmpfs folders, /tmp by default, for
// scratch), PidsLimit, a nofile ulimit, Memory with no swap on top when set, and the host OOM
// killer's first pick (OomScoreAdj 1000). It is labelled reverify.rebuild-id (and with its
// scratch folder and deadline) so that a restarted daemon reattaches, and it is removed on every
// path by cleanup().
//
// Host scratch folder: in/ (config.json, seeds.json; mounted read-only at /reverify/in) and out/
// (mounted read-write at /reverify/out). Data and eval sets are mounted at /reverify/data and
// /reverify/eval.

#include "runners/runner.hpp"
#include "runners/runner_config.hpp"

namespace reverify {

class DockerRunner final : public Runner {
 public:
  explicit DockerRunner(DockerRunnerConfig config, JobIsolation isolation = {});

  RunnerKind kind() const override { return RunnerKind::docker; }
  // Negotiates the API version, pulls environment.image by digest (error:provision when the
  // image is not referenced by digest, the registry is down or lacks the digest, or the engine
  // has no GPU runtime for accelerator.count > 0).
  Status prepare(const RebuildSpec& spec) override;
  // Creates and starts the container from the image prepare() pulled (an image missing from the
  // engine is error:provision, "No such image"; nothing is pulled here).
  Result<JobHandle> start(const RebuildSpec& spec) override;
  // Streams the demultiplexed logs until the container stops or its deadline passes (then it is
  // stopped: SIGTERM, SIGKILL after kill_grace). An engine that stops answering for longer than
  // reconnect_grace, or loses the container, is error:runner-lost. Meanwhile it samples the
  // container's pids (a job at its PidsLimit hit it) and the host space the job needs; the
  // exit says which bound the job hit, or how the platform failed under it.
  Result<JobExit> wait(const JobHandle& job, const LogSink& logs) override;
  Result<JobOutputs> collect(const JobHandle& job, const std::filesystem::path& dest) override;
  // Removes the container (forced) and the scratch folder.
  void cleanup(const JobHandle& job) override;
  void cancel(const JobHandle& job) override;
  Result<std::optional<JobHandle>> find_running(const std::string& rebuild_id) override;

 private:
  DockerRunnerConfig config_;
  JobIsolation isolation_;
};

}  // namespace reverify
