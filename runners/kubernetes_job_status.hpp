#pragma once
// Pure reading of what the API server returns (no I/O): the watch stream's events, a Job's
// terminal conditions, and which of a Job's pods holds the result.

#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace reverify {

// Splits a watch response body (one JSON object per line, arriving in arbitrary chunks) into
// events. A line that is not JSON becomes an ERROR event with a Status explaining it.
class WatchStreamParser {
 public:
  using EventFn = std::function<bool(const nlohmann::json& event)>;  // false = stop
  // Returns false once the callback asked to stop.
  bool feed(std::string_view chunk, const EventFn& on_event);

 private:
  std::string pending_;
};

enum class JobPhase { running, succeeded, failed };

struct JobState {
  JobPhase phase = JobPhase::running;
  std::string reason;   // Failed condition's reason: DeadlineExceeded, BackoffLimitExceeded, ...
  std::string message;  // its message
  bool deadline_exceeded() const {
    return phase == JobPhase::failed && reason == "DeadlineExceeded";
  }
};

// From status.conditions: Complete=True -> succeeded, Failed=True -> failed (reason, message);
// anything else (including FailureTarget / SuccessCriteriaMet before the pods are gone) -> running.
JobState classify_job(const nlohmann::json& job);

// The pod whose outcome is the Job's: the newest pod that was not disrupted (preempted, evicted),
// else the newest pod. nullopt when the list is empty.
std::optional<nlohmann::json> final_pod(const nlohmann::json& pod_list);

struct ContainerEnd {
  int exit_code = -1;
  std::string reason;  // "Completed", "Error", "OOMKilled", ...
  // The container's own run time, startedAt to finishedAt: whole seconds, the API's resolution
  // (absent when either is missing or unreadable).
  std::optional<double> run_seconds;
};
// The terminated state of the named container, if it has ended.
std::optional<ContainerEnd> container_end(const nlohmann::json& pod, std::string_view container);

// A waiting reason that will not heal by itself (ImagePullBackOff: a pull already failed and
// kubelet backs off; InvalidImageName; CreateContainerConfigError; ErrImageNeverPull), with its
// message: the job cannot run on this cluster (error:provision). An unschedulable pod is NOT
// one: a cluster autoscaler may be adding the GPU node; activeDeadlineSeconds bounds the wait.
std::optional<std::string> provision_failure(const nlohmann::json& pod, std::string_view container);

// "message" of a Status object in an error response body, or the body itself (shortened).
std::string status_message(std::string_view body);

}  // namespace reverify
