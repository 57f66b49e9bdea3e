// Reading Slurm's output (runners/slurm_records.hpp): scontrol's one-line records as Slurm 22.05
// prints them, job states and exit codes, run times, a node's GPUs and what one node of a
// partition can offer.
#include <doctest/doctest.h>

#include "runners/slurm_records.hpp"

using namespace reverify;

namespace {

// Abridged from `scontrol show job -o` on the test cluster.
constexpr const char* kFinishedJob =
    "JobId=12 JobName=reverify-verification-7 UserId=root(0) GroupId=root(0) MCS_label=N/A "
    "Priority=4294901749 Nice=0 Account=(null) QOS=(null) JobState=TIMEOUT Reason=TimeLimit "
    "Dependency=(null) Requeue=0 Restarts=0 BatchFlag=1 Reboot=0 ExitCode=0:15 RunTime=00:01:12 "
    "TimeLimit=00:01:00 TimeMin=N/A SubmitTime=2026-12-05T06:46:20 "
    "StartTime=2026-12-05T06:46:21 EndTime=2026-12-05T06:47:33 Deadline=N/A Partition=debug "
    "AllocNode:Sid=localhost:7971 NodeList=localhost BatchHost=localhost NumNodes=1 "
    "TRES=cpu=1,mem=100M,node=1,billing=1 Socks/Node=* Features=(null) "
    "Command=/shared/reverify/verification-7/job.sh "
    "Comment=reverify.rebuild-id=verification-7  StdOut=/shared/job.log "
    "TresPerNode=gres:gpu:vgpu:2";

constexpr const char* kNodes =
    "NodeName=a1 Arch=x86_64 CoresPerSocket=1  CPUAlloc=0 AvailableFeatures=a100,nvlink "
    "ActiveFeatures=a100,nvlink Gres=gpu:a100:4(S:0-1) OS=Linux 6.1.0 #1 SMP PREEMPT_DYNAMIC "
    "RealMemory=2048 State=IDLE Partitions=gpu,all\n"
    "NodeName=a2 AvailableFeatures=(null) Gres=gpu:a100:2,gpu:v100:2,mps:100 State=DRAIN "
    "Partitions=gpu\n"
    "NodeName=c1 AvailableFeatures=(null) Gres=(null) State=IDLE Partitions=cpu,all\n"
    "NodeName=u1 AvailableFeatures=l4 Gres=gpu:8 State=DOWN+NOT_RESPONDING Partitions=inference\n";

}  // namespace

TEST_CASE("scontrol's one-line records keep values with spaces and '=' whole") {
  const auto record = parse_scontrol_lines(kNodes).front();
  CHECK(record.at("NodeName") == "a1");
  CHECK(record.at("OS") == "Linux 6.1.0 #1 SMP PREEMPT_DYNAMIC");
  CHECK(record.at("Gres") == "gpu:a100:4(S:0-1)");
  const auto job = parse_scontrol_line(kFinishedJob);
  CHECK(job.at("Comment") == "reverify.rebuild-id=verification-7");
  CHECK(job.at("TRES") == "cpu=1,mem=100M,node=1,billing=1");
  CHECK(job.at("AllocNode:Sid") == "localhost:7971");
  CHECK(parse_scontrol_lines(kNodes).size() == 4);
  CHECK(parse_scontrol_lines("\n\n").empty());
}

TEST_CASE("a job's record: state, reason, exit code, Slurm's own run time") {
  auto job = read_slurm_job(parse_scontrol_line(kFinishedJob));
  REQUIRE(job.ok());
  CHECK(job->id == "12");
  CHECK(job->name == "reverify-verification-7");
  CHECK(job->state == SlurmJobState::timeout);
  CHECK_FALSE(job->active());
  CHECK(job->reason == "TimeLimit");
  CHECK(job->partition == "debug");
  CHECK(job->nodes == "localhost");
  CHECK(job->exit_status == 0);
  CHECK(job->exit_signal == 15);
  CHECK(job->run_seconds == 72);
  CHECK(job->start_end_seconds == 72);

  auto pending = read_slurm_job(parse_scontrol_line(
      "JobId=13 JobName=x JobState=PENDING Reason=Resources ExitCode=0:0 RunTime=00:00:00 "
      "StartTime=Unknown EndTime=Unknown Partition=gpu NodeList=(null) Comment=(null)"));
  REQUIRE(pending.ok());
  CHECK(pending->active());
  CHECK(pending->reason == "Resources");
  CHECK(pending->nodes.empty());
  CHECK(pending->comment.empty());
  CHECK_FALSE(pending->start_end_seconds.has_value());

  for (const char* state : {"RUNNING", "COMPLETING", "SUSPENDED", "CONFIGURING", "REQUEUED"}) {
    CAPTURE(state);
    auto active = read_slurm_job(parse_scontrol_line("JobId=1 JobState=" + std::string(state)));
    REQUIRE(active.ok());
    CHECK(active->active());
  }
  for (const char* state : {"COMPLETED", "FAILED", "CANCELLED", "NODE_FAIL", "PREEMPTED",
                            "OUT_OF_MEMORY", "BOOT_FAIL", "DEADLINE"}) {
    CAPTURE(state);
    auto ended = read_slurm_job(parse_scontrol_line("JobId=1 JobState=" + std::string(state)));
    REQUIRE(ended.ok());
    CHECK_FALSE(ended->active());
  }
  auto cancelled_by = read_slurm_job(parse_scontrol_line("JobId=1 JobState=CANCELLED by 0"));
  REQUIRE(cancelled_by.ok());
  CHECK(cancelled_by->state == SlurmJobState::cancelled);
}

TEST_CASE("a record without a job id or with a state reverify does not know is an error") {
  CHECK(read_slurm_job(parse_scontrol_line("JobState=RUNNING")).error().message.find("JobId") !=
        std::string::npos);
  const auto unknown = read_slurm_job(parse_scontrol_line("JobId=4 JobState=DREAMING"));
  REQUIRE_FALSE(unknown.ok());
  CHECK(unknown.error().message.find("\"DREAMING\"") != std::string::npos);
}

TEST_CASE("Slurm's durations") {
  CHECK(parse_slurm_duration("00:01:12") == 72);
  CHECK(parse_slurm_duration("2-03:00:01") == 2 * 86400 + 3 * 3600 + 1);
  CHECK(parse_slurm_duration("05:30") == 330);
  CHECK_FALSE(parse_slurm_duration("UNLIMITED").has_value());
  CHECK_FALSE(parse_slurm_duration("").has_value());
  CHECK_FALSE(parse_slurm_duration("1:2:3:4").has_value());
  CHECK_FALSE(parse_slurm_duration("-1:00").has_value());
}

TEST_CASE("a node's GPUs by GRES type; other GRES and socket bindings are not GPUs") {
  CHECK(node_gpus("gpu:a100:4(S:0-1)") == std::map<std::string, std::int64_t>{{"a100", 4}});
  CHECK(node_gpus("gpu:a100:2,gpu:v100:2,mps:100") ==
        std::map<std::string, std::int64_t>{{"a100", 2}, {"v100", 2}});
  CHECK(node_gpus("gpu:8") == std::map<std::string, std::int64_t>{{"", 8}});
  CHECK(node_gpus("gpu:tesla:2(S:0,1),gpu:tesla:1") ==
        std::map<std::string, std::int64_t>{{"tesla", 3}});
  CHECK(node_gpus("(null)").empty());
  CHECK(node_gpus("").empty());
}

TEST_CASE("the most GPUs of a kind one node of a partition offers") {
  const auto nodes = parse_scontrol_lines(kNodes);
  CHECK(most_gpus_on_one_node(nodes, "gpu", {4, "a100", ""}) == 4);
  CHECK(most_gpus_on_one_node(nodes, "gpu", {1, "v100", ""}) == 2);  // a drained node counts
  CHECK(most_gpus_on_one_node(nodes, "gpu", {1, "h100", ""}) == 0);
  CHECK(most_gpus_on_one_node(nodes, "gpu", {1, "", ""}) == 4);  // any type, summed per node
  CHECK(most_gpus_on_one_node(nodes, "gpu", {1, "", "nvlink"}) == 4);
  CHECK(most_gpus_on_one_node(nodes, "gpu", {1, "", "l4"}) == 0);
  CHECK(most_gpus_on_one_node(nodes, "all", {1, "", ""}) == 4);
  CHECK(most_gpus_on_one_node(nodes, "cpu", {1, "", ""}) == 0);
  CHECK(most_gpus_on_one_node(nodes, "inference", {8, "", "l4"}) == 8);
  CHECK(most_gpus_on_one_node(nodes, "gp", {1, "", ""}) == 0);  // a whole name, not a prefix
}

TEST_CASE("the default partition") {
  CHECK(default_partition(parse_scontrol_lines("PartitionName=a Default=NO\n"
                                               "PartitionName=b Default=YES\n")) == "b");
  CHECK(default_partition(parse_scontrol_lines("PartitionName=a Default=NO\n")).empty());
}
