#include "runners/kubernetes_runner.hpp"

#include <algorithm>
#include <chrono>
#include <thread>

#include "runners/job_contract.hpp"
#include "runners/job_outputs.hpp"
#include "runners/kubernetes_job_spec.hpp"
#include "runners/log_tail.hpp"

namespace reverify {
namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

constexpr std::chrono::milliseconds kRetryDelay{1000};

std::string meta(const json& object, const char* key) {
  if (!object.is_object() || !object.contains("metadata"))
    return "";
  const json& m = object["metadata"];
  return m.is_object() && m.contains(key) && m[key].is_string() ? m[key].get<std::string>() : "";
}

std::string annotation(const json& object, const char* key) {
  if (!object.is_object() || !object.contains("metadata"))
    return "";
  const json& annotations = object["metadata"].value("annotations", json::object());
  return annotations.is_object() ? annotations.value(key, "") : "";
}

std::string selector_query(const std::string& selector) {
  return "?labelSelector=" + url_encode(selector);
}

// What one watch request ended with.
enum class RoundEnd { more, expired, deleted };

class JobWatch {
 public:
  JobWatch(const KubernetesApi& api, const KubernetesConfig& config, const JobHandle& job)
      : api_(api),
        config_(config),
        name_(job.ref),
        selector_(selector_query(rebuild_id_selector(job.rebuild_id))) {}

  const JobState& state() const { return state_; }

  // One list (when no resourceVersion is known) or one watch request.
  Result<RoundEnd> round() { return resource_version_.empty() ? relist() : watch(); }

 private:
  Result<RoundEnd> relist() {
    auto list = api_.get_json(api_.jobs_path() + selector_, ErrorCode::network);
    if (!list)
      return list.error();
    for (const auto& item : list->value("items", json::array())) {
      if (meta(item, "name") != name_)
        continue;
      resource_version_ = meta(*list, "resourceVersion");
      state_ = classify_job(item);
      return RoundEnd::more;
    }
    return RoundEnd::deleted;
  }

  Result<RoundEnd> watch() {
    const std::string path =
        api_.jobs_path() + selector_ +
        "&watch=1&allowWatchBookmarks=true&resourceVersion=" + url_encode(resource_version_) +
        "&timeoutSeconds=" + std::to_string(config_.watch_timeout_s);
    RoundEnd end = RoundEnd::more;
    std::optional<Error> stream_error;
    WatchStreamParser parser;
    auto on_event = [&](const json& event) {
      const std::string type = event.value("type", "");
      const json object = event.value("object", json::object());
      if (type == "ERROR") {
        if (object.value("code", 0) == 410) {
          end = RoundEnd::expired;  // resourceVersion too old: list again
        } else {
          stream_error = make_error(ErrorCode::network,
                                    "watch of Job " + name_ + ": " + object.value("message", ""));
        }
        return false;
      }
      if (auto rv = meta(object, "resourceVersion"); !rv.empty())
        resource_version_ = rv;
      if (type == "BOOKMARK" || meta(object, "name") != name_)
        return true;
      if (type == "DELETED") {
        end = RoundEnd::deleted;
        return false;
      }
      state_ = classify_job(object);
      return state_.phase == JobPhase::running;
    };
    auto response = api_.call(
        "GET", path, std::nullopt,
        [&](std::string_view chunk) { return parser.feed(chunk, on_event); },
        (config_.watch_timeout_s + 30) * 1000);
    if (!response)
      return response.error();
    parser.feed("\n", on_event);  // an error body without a final newline
    if (response->status == 410)
      end = RoundEnd::expired;
    if (end == RoundEnd::expired)
      resource_version_.clear();  // the next round lists again
    if (end != RoundEnd::more)
      return end;
    if (stream_error)
      return *stream_error;
    if (response->status != 200) {
      return make_error(ErrorCode::network,
                        "watch of Job " + name_ + ": HTTP " + std::to_string(response->status));
    }
    return end;
  }

  const KubernetesApi& api_;
  const KubernetesConfig& config_;
  std::string name_;
  std::string selector_;
  std::string resource_version_;
  JobState state_;
};

std::string job_failure_note(const JobState& state) {
  return "[reverify: Job failed: " + state.reason +
         (state.message.empty() ? "" : ": " + state.message) + "]\n";
}

}  // namespace

KubernetesRunner::KubernetesRunner(KubernetesConfig config, KubernetesEndpoint endpoint,
                                   JobIsolation isolation)
    : config_(std::move(config)), api_(std::move(endpoint)), isolation_(std::move(isolation)) {
  config_.namespace_name = api_.namespace_name();
}

std::filesystem::path KubernetesRunner::rebuild_dir(const std::string& rebuild_id) const {
  return config_.outputs.volume.daemon_path / rebuild_sub_path(config_, rebuild_id);
}

Status KubernetesRunner::prepare(const RebuildSpec& spec) {
  auto job = build_kubernetes_job(spec, config_);
  if (!job)
    return job.error();
  std::error_code ec;
  if (!std::filesystem::is_directory(config_.outputs.volume.daemon_path, ec)) {
    return make_error(
        ErrorCode::provision,
        "kubernetes.outputs.daemon_path: " + config_.outputs.volume.daemon_path.string() +
            " is not a folder (the outputs claim must be mounted there)");
  }
  // Reachable, authenticated and allowed to list Jobs in the namespace.
  auto probe = api_.get_json(api_.jobs_path() + "?limit=1", ErrorCode::provision);
  if (!probe)
    return make_error(ErrorCode::provision, "kubernetes API server: " + probe.error().message);
  return {};
}

Status KubernetesRunner::create_network_policy(const RebuildSpec& spec) const {
  const json policy = build_network_policy(spec, config_);
  auto response =
      api_.call("POST", api_.network_policies_path() + "?fieldValidation=Strict", policy);
  if (!response)
    return make_error(ErrorCode::provision, "kubernetes API server: " + response.error().message);
  // 409: ours, left by an earlier try of this rebuild (same name, same selector).
  if (response->status / 100 == 2 || response->status == 409)
    return {};
  return api_error(ErrorCode::provision,
                   "create NetworkPolicy " + policy["metadata"]["name"].get<std::string>() +
                       " (the job's pod must not reach the network: kubernetes.network_policy)",
                   *response);
}

void KubernetesRunner::delete_network_policy(const std::string& name) const {
  // Best effort: a policy left behind selects no pod once the Job is gone.
  (void)api_.call("DELETE", api_.network_policies_path() + "/" + url_encode(name));
}

Result<JobHandle> KubernetesRunner::start(const RebuildSpec& spec) {
  auto job = build_kubernetes_job(spec, config_);
  if (!job)
    return job.error();
  if (auto own = check_inputs_not_verifier_own(spec, isolation_.verifier_paths); !own)
    return own.error();
  if (!spec.network && config_.network_policy) {
    if (auto policy = create_network_policy(spec); !policy)
      return policy.error();
  }
  const std::string name = (*job)["metadata"]["name"];
  // A fresh, empty out folder that any uid in the pod may write (the job's uid is the image's).
  const auto dir = rebuild_dir(spec.rebuild_id);
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  std::filesystem::create_directories(dir / "out", ec);
  if (!ec)
    std::filesystem::permissions(dir / "out", std::filesystem::perms::all, ec);
  if (ec)
    return make_error(ErrorCode::provision,
                      (dir / "out").string() + ": cannot create: " + ec.message());

  auto response = api_.call("POST", api_.jobs_path() + "?fieldValidation=Strict", *job);
  Error failure{ErrorCode::provision, ""};
  if (!response) {
    failure.message = "kubernetes API server: " + response.error().message;
  } else if (response->status == 201 || response->status == 200) {
    return JobHandle{spec.rebuild_id, kind(), name, spec.work_dir};
  } else if (response->status == 409) {
    failure = api_error(ErrorCode::conflict,
                        "create Job " + name + " (already exists: reattach instead)", *response);
  } else {
    failure = api_error(ErrorCode::provision, "create Job " + name, *response);
  }
  if (failure.code != ErrorCode::conflict)
    delete_network_policy(name);
  std::filesystem::remove_all(dir, ec);
  return failure;
}

Result<JobState> KubernetesRunner::watch_to_end(const JobHandle& job) const {
  JobWatch watch(api_, config_, job);
  bool failing = false;
  Clock::time_point failing_since;
  for (;;) {
    auto round = watch.round();
    if (!round) {
      const auto now = Clock::now();
      if (!failing)
        failing_since = now;
      failing = true;
      if (now - failing_since >= config_.reconnect_grace) {
        return make_error(ErrorCode::runner_lost,
                          "lost the kubernetes API server while waiting for Job " + job.ref + ": " +
                              round.error().message);
      }
      std::this_thread::sleep_for(std::min<Clock::duration>(kRetryDelay, config_.reconnect_grace));
      continue;
    }
    failing = false;
    if (*round == RoundEnd::deleted) {
      return make_error(ErrorCode::runner_lost, "Job " + job.ref + " in namespace " +
                                                    config_.namespace_name +
                                                    " was deleted while reverify waited for it");
    }
    if (watch.state().phase != JobPhase::running)
      return watch.state();
    if (*round == RoundEnd::expired)
      continue;
    // Between watch rounds: a pod that can never start would otherwise wait for the deadline.
    auto pods = list_pods(job.ref);
    if (!pods)
      continue;  // transient; the next round retries
    if (auto pod = final_pod(*pods)) {
      if (auto failure = provision_failure(*pod, kKubernetesContainerName)) {
        (void)delete_job(job.ref);
        return make_error(ErrorCode::provision, "Job " + job.ref + ": pod " + meta(*pod, "name") +
                                                    " cannot start: " + *failure);
      }
    }
  }
}

Result<nlohmann::json> KubernetesRunner::list_pods(const std::string& job_name) const {
  return api_.get_json(api_.pods_path() + selector_query("job-name=" + job_name),
                       ErrorCode::network);
}

Result<JobExit> KubernetesRunner::wait(const JobHandle& job, const LogSink& logs) {
  auto state = watch_to_end(job);
  if (!state)
    return state.error();

  JobExit exit;
  exit.timed_out = state->deadline_exceeded();
  LogTail tail(config_.log_cap_bytes);
  auto pods = list_pods(job.ref);
  std::optional<json> pod = pods ? final_pod(*pods) : std::nullopt;
  std::optional<ContainerEnd> end =
      pod ? container_end(*pod, kKubernetesContainerName) : std::nullopt;
  if (pod) {
    const std::string path = api_.pods_path() + "/" + url_encode(meta(*pod, "name")) +
                             "/log?container=" + kKubernetesContainerName +
                             "&tailLines=" + std::to_string(config_.log_tail_lines);
    auto log = api_.call("GET", path);
    if (log && log->status == 200) {
      const auto lines = std::count(log->body.begin(), log->body.end(), '\n');
      if (lines >= config_.log_tail_lines) {
        tail.append("[TRUNCATED: the pod log may be longer; these are its last " +
                    std::to_string(config_.log_tail_lines) + " lines]\n");
      }
      tail.append(log->body);
      if (logs)
        logs(log->body);
    } else {
      tail.append("[reverify: the pod log is unavailable: " +
                  (log ? "HTTP " + std::to_string(log->status) + ": " + status_message(log->body)
                       : log.error().message) +
                  "]\n");
    }
  }
  if (end)
    exit.job_seconds = end->run_seconds;
  if (state->phase == JobPhase::succeeded) {
    exit.exit_code = end ? end->exit_code : 0;
  } else {
    // A failed Job never reads as success, whatever its last container said.
    exit.exit_code = end && end->exit_code != 0 ? end->exit_code : -1;
    if (end && !end->reason.empty() && end->reason != "Error") {
      tail.append("[reverify: container terminated: " + end->reason + "]\n");
    }
    tail.append(job_failure_note(*state));
  }
  exit.log_tail = tail.text();
  return exit;
}

Result<JobOutputs> KubernetesRunner::collect(const JobHandle& job,
                                             const std::filesystem::path& dest) {
  const auto out = rebuild_dir(job.rebuild_id) / "out";
  std::error_code ec;
  if (!std::filesystem::is_directory(out, ec)) {
    return make_error(ErrorCode::job,
                      out.string() + ": the job's out folder does not exist on the outputs claim");
  }
  return collect_outputs(out, dest);
}

Status KubernetesRunner::delete_job(const std::string& name) const {
  const json options = {
      {"apiVersion", "v1"}, {"kind", "DeleteOptions"}, {"propagationPolicy", "Background"}};
  auto response = api_.call("DELETE", api_.jobs_path() + "/" + url_encode(name), options);
  if (!response)
    return make_error(ErrorCode::network, response.error().message);
  if (response->status / 100 == 2 || response->status == 404)
    return {};
  return api_error(ErrorCode::network, "delete Job " + name, *response);
}

void KubernetesRunner::cleanup(const JobHandle& job) {
  // Best effort by contract (void): ttlSecondsAfterFinished removes a Job we could not delete.
  (void)delete_job(job.ref);
  delete_network_policy(job.ref);
  std::error_code ec;
  std::filesystem::remove_all(rebuild_dir(job.rebuild_id), ec);
}

void KubernetesRunner::cancel(const JobHandle& job) {
  // Deleting the Job deletes its pods: SIGTERM, then SIGKILL after terminationGracePeriodSeconds.
  (void)delete_job(job.ref);
}

Result<std::optional<JobHandle>> KubernetesRunner::find_running(const std::string& rebuild_id) {
  auto list = api_.get_json(api_.jobs_path() + selector_query(rebuild_id_selector(rebuild_id)),
                            ErrorCode::provision);
  if (!list)
    return list.error();
  for (const auto& item : list->value("items", json::array())) {
    // The label may be a derived value: the annotation holds the full id.
    if (annotation(item, kRebuildIdAnnotation) != rebuild_id ||
        !meta(item, "deletionTimestamp").empty())
      continue;
    return std::optional<JobHandle>(
        JobHandle{rebuild_id, kind(), meta(item, "name"), annotation(item, kWorkDirAnnotation)});
  }
  return std::optional<JobHandle>();
}

Result<std::unique_ptr<Runner>> make_kubernetes_runner(const KubernetesConfig& config,
                                                       const JobIsolation& isolation) {
  if (!config.network_policy && !isolation.trust_job_code) {
    return make_error(ErrorCode::invalid_argument,
                      "runner.kubernetes.network_policy: false leaves each job's pod on the "
                      "cluster network, where it can reach the daemon's API and any live input; "
                      "set it to true (a deny-all NetworkPolicy per job) or set "
                      "runner.trust_job_code: true to run jobs so (docs/security.md)");
  }
  auto endpoint = resolve_endpoint(config);
  if (!endpoint)
    return endpoint.error();
  return std::unique_ptr<Runner>(
      std::make_unique<KubernetesRunner>(config, std::move(*endpoint), isolation));
}

}  // namespace reverify
