#pragma once
// Slurm's text output read into values (no I/O): `scontrol show job|node|partition -o` lines, a
// job's state, a node's GPUs, and how many GPUs of a kind one node of a partition can offer.
// Written against Slurm 22.05's output, which older and newer releases keep for these fields.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/enum_names.hpp"
#include "core/result.hpp"

namespace reverify {

// One `scontrol show ... -o` line: Key=Value words separated by spaces. A word without '=' (or
// one whose key is not a plain name) continues the previous value, so "OS=Linux 6.1 #1 SMP" keeps
// its spaces.
using SlurmRecord = std::map<std::string, std::string, std::less<>>;
SlurmRecord parse_scontrol_line(std::string_view line);
// One record per non-empty line.
std::vector<SlurmRecord> parse_scontrol_lines(std::string_view text);

// Slurm's job states (JobState=, squeue %T), in the words Slurm uses.
enum class SlurmJobState {
  pending,
  configuring,
  running,
  suspended,
  completing,
  completed,
  failed,
  cancelled,
  timeout,
  node_fail,
  preempted,
  out_of_memory,
  boot_fail,
  deadline,
  requeued,
  requeue_hold,
  requeue_fed,
  resizing,
  revoked,
  signaling,
  special_exit,
  stage_out,
  stopped,
};
template <>
struct EnumNames<SlurmJobState> {
  static constexpr EnumName<SlurmJobState> table[] = {
      {SlurmJobState::pending, "PENDING"},
      {SlurmJobState::configuring, "CONFIGURING"},
      {SlurmJobState::running, "RUNNING"},
      {SlurmJobState::suspended, "SUSPENDED"},
      {SlurmJobState::completing, "COMPLETING"},
      {SlurmJobState::completed, "COMPLETED"},
      {SlurmJobState::failed, "FAILED"},
      {SlurmJobState::cancelled, "CANCELLED"},
      {SlurmJobState::timeout, "TIMEOUT"},
      {SlurmJobState::node_fail, "NODE_FAIL"},
      {SlurmJobState::preempted, "PREEMPTED"},
      {SlurmJobState::out_of_memory, "OUT_OF_MEMORY"},
      {SlurmJobState::boot_fail, "BOOT_FAIL"},
      {SlurmJobState::deadline, "DEADLINE"},
      {SlurmJobState::requeued, "REQUEUED"},
      {SlurmJobState::requeue_hold, "REQUEUE_HOLD"},
      {SlurmJobState::requeue_fed, "REQUEUE_FED"},
      {SlurmJobState::resizing, "RESIZING"},
      {SlurmJobState::revoked, "REVOKED"},
      {SlurmJobState::signaling, "SIGNALING"},
      {SlurmJobState::special_exit, "SPECIAL_EXIT"},
      {SlurmJobState::stage_out, "STAGE_OUT"},
      {SlurmJobState::stopped, "STOPPED"},
  };
};

// What `scontrol show job -o <id>` says of a job.
struct SlurmJob {
  std::string id;
  std::string name;
  std::string comment;
  SlurmJobState state = SlurmJobState::pending;
  std::string reason;     // Reason=: why it is pending, or why it ended ("None" = none)
  std::string partition;  // Partition=
  std::string nodes;      // NodeList= ("" until it has nodes)
  int exit_status = 0;    // ExitCode=<status>:<signal>
  int exit_signal = 0;
  int restarts = 0;                         // Restarts=: requeued this many times
  std::optional<std::int64_t> run_seconds;  // RunTime=, Slurm's own count (suspensions left out)
  std::optional<std::int64_t> start_end_seconds;  // EndTime - StartTime, once both are known

  // Not ended yet: pending, configuring, running, suspended, completing and the like.
  bool active() const;
};

// Error (code io) naming the field when JobId or JobState is missing or unknown.
Result<SlurmJob> read_slurm_job(const SlurmRecord& record);

// "D-HH:MM:SS", "HH:MM:SS", "MM:SS" (RunTime=, TimeLimit=) in seconds; nullopt for anything else
// ("UNLIMITED", "INVALID").
std::optional<std::int64_t> parse_slurm_duration(std::string_view text);

// GPUs per GRES type in a node's Gres= ("gpu:a100:4(S:0-1),gpu:2,mps:100" -> {"a100": 4, "": 2});
// only the gpu GRES counts; "(null)" and "" are none.
std::map<std::string, std::int64_t> node_gpus(std::string_view gres);

// How a rebuild's GPUs are asked for (slurm_config.hpp's SlurmGpuModel, with the count).
struct SlurmGpuRequest {
  std::int64_t count = 0;
  std::string gres_type;  // "" = any type
  std::string feature;    // "" = any node
};

// The most GPUs matching `request` (its GRES type, or any type on a node with its feature) that
// one node in `partition` has (`nodes`: the records of `scontrol show node -o`; a node belongs to
// the partitions its Partitions= lists). Nodes count whatever their state: a drained node is a
// reason to wait, not a partition that cannot run the job.
std::int64_t most_gpus_on_one_node(const std::vector<SlurmRecord>& nodes,
                                   std::string_view partition, const SlurmGpuRequest& request);

// The partition `scontrol show partition -o` marks Default=YES; "" when none is.
std::string default_partition(const std::vector<SlurmRecord>& partitions);

}  // namespace reverify
