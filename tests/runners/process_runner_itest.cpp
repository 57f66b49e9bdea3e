// The process runner against real git repositories and real processes (fixtures/trainer.py): the
// runner contract (runner_contract.hpp), then what only this runner does (checkout, cleared
// environment, process-group kills, log caps, code.diff, PATH lookup).
#include <signal.h>

#include <regex>
#include <set>
#include <thread>

#include "core/hashing.hpp"
#include "runner_test_support.hpp"
#include "runners/process_runner.hpp"
#include "runners/process_spawn.hpp"
#include "tests/support/marked_processes.hpp"
#include "tests/support/tmpfs_mount.hpp"

using namespace reverify;
using namespace reverify::test;

namespace {

void git(const std::filesystem::path& repo, const std::string& args) {
  const std::string command = "git -C '" + repo.string() + "' -c user.name=t -c user.email=t@t " +
                              args + " >/dev/null 2>&1";
  REQUIRE_MESSAGE(std::system(command.c_str()) == 0, command);
}

std::string head_commit(const std::filesystem::path& repo) {
  const auto file = repo / ".git" / "rv-head";
  REQUIRE(std::system(("git -C '" + repo.string() + "' rev-parse HEAD > '" + file.string() + "'")
                          .c_str()) == 0);
  auto text = read_file(file);
  std::filesystem::remove(file);
  return text.substr(0, 40);
}

// A git repository holding the test trainer, a scratch root, and a spec that runs it.
struct ProcessRunnerFixture {
  TempDir tmp;
  std::filesystem::path repo = tmp.path / "repo";
  ProcessRunnerConfig config;
  RebuildSpec spec;

  explicit ProcessRunnerFixture(const std::string& behaviour) {
    std::filesystem::create_directories(repo);
    git(repo, "init -q");
    std::filesystem::copy_file(source_dir() / "tests/runners/fixtures/trainer.py",
                               repo / "trainer.py");
    git(repo, "add trainer.py");
    git(repo, "commit -q -m trainer");
    config.scratch_root = tmp.path / "scratch";
    config.kill_grace = std::chrono::milliseconds(1000);
    config.poll_interval = std::chrono::milliseconds(20);
    spec.rebuild_id = "rb-" + behaviour;
    spec.manifest = trainer_manifest(behaviour);
    spec.manifest.code.repo = repo.string();
    spec.manifest.code.commit = head_commit(repo);
    spec.manifest_location = (tmp.path / "registry" / "manifest.json").string();
    spec.timeout = std::chrono::seconds(60);
  }
};

// Jobs in a git checkout, scratch under the fixture's temp folder, the work folder where the
// pipeline puts it (<work root>/<rebuild id>/job, linked from the scratch root).
class ProcessHarness final : public TrainerHarness {
 public:
  std::unique_ptr<Runner> make_runner() override {
    return std::make_unique<ProcessRunner>(fixture_.config);
  }
  RebuildSpec spec(JobScript script) override {
    RebuildSpec spec = acting_out(fixture_.spec, script, "rb-");
    spec.work_dir = fixture_.tmp.path / "work" / spec.rebuild_id / "job";
    return spec;
  }
  std::filesystem::path collect_dir() override { return fixture_.tmp.path / "collected"; }
  void expect_no_traces(const JobHandle& job) override {
    CHECK_FALSE(std::filesystem::is_symlink(fixture_.config.scratch_root / job.rebuild_id));
  }

 private:
  ProcessRunnerFixture fixture_{"ok"};
};

// Every job process of `f` carries this entry in its environment (and so do its descendants,
// whatever session, process group or PID namespace they are in: a pid the job writes down is its
// sandbox's own, meaningless here).
std::string marker_of(ProcessRunnerFixture& f) {
  const std::string entry = "RUNNER_TEST_MARKER=" + f.tmp.path.string();
  f.spec.manifest.environment->env["RUNNER_TEST_MARKER"] = f.tmp.path.string();
  return entry;
}

}  // namespace

TEST_CASE("the runner contract, on the process runner") {
  ProcessHarness harness;
  check_runner_contract(harness);
}

TEST_CASE("the job sees only the contract's variables, the manifest's env and PATH") {
  ProcessRunnerFixture f("ok");
  f.spec.mode = RebuildMode::steps;
  f.spec.max_steps = 5;
  ProcessRunner runner(f.config);
  JobHandle job;
  auto outcome = start_and_wait(runner, f.spec, job);
  REQUIRE(outcome.exit.ok());
  CHECK(outcome.exit->log_tail.find("trainer-first-instruction") != std::string::npos);
  auto outputs = runner.collect(job, f.tmp.path / "collected");
  REQUIRE_MESSAGE(outputs.ok(), (outputs.ok() ? "" : outputs.error().to_string()));
  CHECK(outputs->steps_values.size() == 5);
  REQUIRE(outputs->predictions);
  CHECK(std::filesystem::file_size(*outputs->predictions) > 0);

  const auto env = nlohmann::json::parse(read_file(f.tmp.path / "collected" / "env.json"));
  std::set<std::string> names;
  for (const auto& [name, value] : env.items())
    names.insert(name);
  const std::set<std::string> expected = {"PATH",
                                          "PYTHONHASHSEED",
                                          "TRAINER_BEHAVIOUR",
                                          "REVERIFY_MODE",
                                          "REVERIFY_MAX_STEPS",
                                          "REVERIFY_CONFIG",
                                          "REVERIFY_SEEDS",
                                          "REVERIFY_OUT",
                                          "SOURCE_DATE_EPOCH",
                                          "LC_CTYPE",  // python3 adds LC_CTYPE itself
                                          "PWD"};      // bubblewrap says where it put the job
  for (const auto& name : names)
    CHECK_MESSAGE(expected.count(name) == 1, "unexpected variable " << name);
  CHECK(env["PATH"] == "/usr/bin:/bin");
  CHECK(env["REVERIFY_MAX_STEPS"] == "5");
  CHECK(nlohmann::json::parse(read_file(env["REVERIFY_SEEDS"].get<std::string>())) ==
        nlohmann::json{{"numpy", 42}});
  runner.cleanup(job);
}

TEST_CASE("a timeout kills the whole process group, with SIGKILL when SIGTERM is ignored") {
  for (const std::string behaviour : {"sleep", "sleep_ignore_term"}) {
    CAPTURE(behaviour);
    ProcessRunnerFixture f(behaviour);
    const std::string marker = marker_of(f);
    f.spec.timeout = std::chrono::seconds(4);
    ProcessRunner runner(f.config);
    JobHandle job;
    auto outcome = start_and_wait(runner, f.spec, job);
    REQUIRE(outcome.exit.ok());
    CHECK(outcome.exit->timed_out);
    CHECK(outcome.exit->exit_code == (behaviour == "sleep" ? 128 + SIGTERM : 128 + SIGKILL));
    const auto status = job_exit_status(*outcome.exit);
    CHECK(status.error().code == ErrorCode::job);
    CHECK(status.error().message.find("timeout") != std::string::npos);
    REQUIRE_FALSE(read_file(job.work_dir / "out" / "child.pid").empty());
    CHECK(none_left_with_environment(marker));  // the grandchild went with the group
    runner.cleanup(job);
  }
}

TEST_CASE("a long log keeps its tail behind a TRUNCATED marker") {
  ProcessRunnerFixture f("chatty");
  f.spec.manifest.environment->env["TRAINER_LOG_LINES"] = "5000";
  f.config.log_cap_bytes = 4096;
  ProcessRunner runner(f.config);
  JobHandle job;
  auto outcome = start_and_wait(runner, f.spec, job);
  REQUIRE(outcome.exit.ok());
  const std::string& tail = outcome.exit->log_tail;
  CHECK(tail.find("TRUNCATED") != std::string::npos);
  CHECK(tail.size() < 4096 + 200);
  CHECK(tail.find("log line 004999") != std::string::npos);
  CHECK(tail.find("log line 000001") == std::string::npos);
  CHECK(outcome.streamed.find("log line 000001") !=
        std::string::npos);  // the stream saw everything
  runner.cleanup(job);
}

TEST_CASE("a job that floods its output cannot grow job.log past its cap") {
  ProcessRunnerFixture f("flood");
  f.spec.manifest.environment->env["TRAINER_FLOOD_BYTES"] = std::to_string(6 * 1024 * 1024);
  f.config.job_log_cap_bytes = 256 * 1024;
  f.config.log_cap_bytes = 4096;
  ProcessRunner runner(f.config);
  JobHandle job;
  auto outcome = start_and_wait(runner, f.spec, job);
  REQUIRE(outcome.exit.ok());
  CHECK(outcome.exit->exit_code == 0);
  const auto log_file = job.work_dir / "job.log";
  CHECK(std::filesystem::file_size(log_file) <= 256 * 1024);
  const std::string log = read_file(log_file);
  CHECK(log.find("trainer-first-instruction") == 0);               // the head
  CHECK(log.find("job.log TRUNCATED here") != std::string::npos);  // the cut, marked
  CHECK(log.find("trainer: done") != std::string::npos);           // the latest output
  CHECK(outcome.exit->log_tail.find("trainer: done") != std::string::npos);
  CHECK(outcome.streamed.find("trainer: flood starts") != std::string::npos);
  runner.cleanup(job);
}

TEST_CASE("a descendant holding the job's stdout open does not hold the job's exit") {
  ProcessRunnerFixture f("orphan_writer");
  ProcessRunner runner(f.config);
  JobHandle job;
  const auto started = std::chrono::steady_clock::now();
  auto outcome = start_and_wait(runner, f.spec, job);
  REQUIRE(outcome.exit.ok());
  CHECK(outcome.exit->exit_code == 0);
  CHECK_FALSE(outcome.exit->timed_out);
  const auto waited = std::chrono::steady_clock::now() - started;
  CHECK(waited < std::chrono::seconds(30));
  // The supervisor measured the job itself (fork to exit): no longer than the whole wait.
  REQUIRE(outcome.exit->job_seconds.has_value());
  CHECK(*outcome.exit->job_seconds >= 0);
  CHECK(*outcome.exit->job_seconds <= std::chrono::duration<double>(waited).count());
  CHECK(outcome.exit->log_tail.find("trainer: done") != std::string::npos);
  runner.cleanup(job);
}

TEST_CASE("a commit missing from the repository is a clear input-drift error") {
  ProcessRunnerFixture f("ok");
  f.spec.manifest.code.commit = std::string(40, 'a');
  ProcessRunner runner(f.config);
  const auto status = runner.prepare(f.spec);
  REQUIRE_FALSE(status.ok());
  CHECK(status.error().code == ErrorCode::input_drift);
  CHECK(status.error().message.find("code.commit: " + std::string(40, 'a') + " is not in") !=
        std::string::npos);
}

TEST_CASE("a dirty manifest applies code.diff only when its sha256 matches") {
  ProcessRunnerFixture f("ok");
  // The uncommitted change: the trainer reports a different primary metric value.
  const auto trainer = read_file(f.repo / "trainer.py");
  std::ofstream(f.repo / "trainer.py")
      << std::regex_replace(trainer, std::regex("0\\.9609"), "0.5");
  REQUIRE(std::system(("git -C '" + f.repo.string() + "' diff HEAD > '" +
                       (f.tmp.path / "registry.diff").string() + "'")
                          .c_str()) == 0);
  git(f.repo, "checkout -- trainer.py");
  std::filesystem::create_directories(f.tmp.path / "registry");
  std::filesystem::rename(f.tmp.path / "registry.diff", f.tmp.path / "registry" / "code.diff");
  const std::string diff = read_file(f.tmp.path / "registry" / "code.diff");
  f.spec.manifest.code.dirty = true;
  ProcessRunner runner(f.config);

  SUBCASE("no diff hash recorded") {
    const auto status = runner.prepare(f.spec);
    REQUIRE_FALSE(status.ok());
    CHECK(status.error().code == ErrorCode::manifest_invalid);
    CHECK(status.error().message.find("code.diff_sha256") != std::string::npos);
  }
  SUBCASE("a diff that does not match its hash") {
    f.spec.manifest.code.diff_sha256 = std::string(64, 'b');
    const auto status = runner.prepare(f.spec);
    REQUIRE_FALSE(status.ok());
    CHECK(status.error().code == ErrorCode::input_drift);
    CHECK(status.error().message.find("has sha256 " + sha256_hex(diff)) != std::string::npos);
  }
  SUBCASE("the recorded diff is applied") {
    f.spec.manifest.code.diff_sha256 = sha256_hex(diff);
    JobHandle job;
    auto outcome = start_and_wait(runner, f.spec, job);
    REQUIRE(outcome.exit.ok());
    auto outputs = runner.collect(job, f.tmp.path / "collected");
    REQUIRE(outputs.ok());
    CHECK(outputs->primary_value == doctest::Approx(0.5));
    runner.cleanup(job);
  }
}

TEST_CASE("missing or invalid result.json is error:job") {
  for (const std::string behaviour : {"no_result", "bad_result", "escape_result"}) {
    CAPTURE(behaviour);
    ProcessRunnerFixture f(behaviour);
    ProcessRunner runner(f.config);
    JobHandle job;
    auto outcome = start_and_wait(runner, f.spec, job);
    REQUIRE(outcome.exit.ok());
    CHECK(outcome.exit->exit_code == 0);
    auto outputs = runner.collect(job, f.tmp.path / "collected");
    REQUIRE_FALSE(outputs.ok());
    CHECK(outputs.error().code == ErrorCode::job);
    CHECK(outputs.error().message.find("result.json") != std::string::npos);
    runner.cleanup(job);
  }
}

TEST_CASE("an entrypoint that is not on the configured PATH is error:provision") {
  ProcessRunnerFixture f("ok");
  f.spec.manifest.run.entrypoint = {"no-such-trainer", "x"};
  ProcessRunner runner(f.config);
  const auto status = runner.prepare(f.spec);
  REQUIRE_FALSE(status.ok());
  CHECK(status.error().code == ErrorCode::provision);
  CHECK(status.error().message.find(
            "run.entrypoint[0]: no-such-trainer: not found on the PATH /usr/bin:/bin") !=
        std::string::npos);
}

TEST_CASE("a run.workdir that a committed symlink takes out of the checkout is refused, named") {
  ProcessRunnerFixture f("ok");
  std::filesystem::create_directories(f.tmp.path / "outside");
  std::filesystem::create_directory_symlink(f.tmp.path / "outside", f.repo / "escape");
  git(f.repo, "add escape");
  git(f.repo, "commit -q -m escape");
  f.spec.manifest.code.commit = head_commit(f.repo);
  f.spec.manifest.run.workdir = "escape";
  ProcessRunner runner(f.config);
  const auto status = runner.prepare(f.spec);
  REQUIRE_FALSE(status.ok());
  CHECK(status.error().code == ErrorCode::manifest_invalid);
  CHECK(status.error().message.find("run.workdir: \"escape\" leads through a symlink to " +
                                    (f.tmp.path / "outside").string()) == 0);
}

TEST_CASE("cancel stops a running job and its group") {
  ProcessRunnerFixture f("sleep");
  const std::string marker = marker_of(f);
  ProcessRunner runner(f.config);
  REQUIRE(runner.prepare(f.spec).ok());
  auto started = runner.start(f.spec);
  REQUIRE(started.ok());
  const auto child_pid = started->work_dir / "out" / "child.pid";
  for (int i = 0; i < 500 && read_file(child_pid).empty(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  REQUIRE_FALSE(read_file(child_pid).empty());
  runner.cancel(*started);
  auto exit = runner.wait(*started, {});
  REQUIRE(exit.ok());
  CHECK(exit->exit_code == 128 + SIGTERM);
  CHECK(none_left_with_environment(marker));
  runner.cleanup(*started);
}

TEST_CASE("a setsid() orphan of a double fork, ignoring SIGTERM, dies with its job") {
  for (const bool trusted : {false, true}) {
    for (const bool cgroups : {true, false}) {
      for (const std::string behaviour : {"setsid_orphan", "setsid_orphan_sleep"}) {
        CAPTURE(trusted);
        CAPTURE(cgroups);
        CAPTURE(behaviour);
        ProcessRunnerFixture f(behaviour);
        f.config.cgroups = cgroups;
        const std::string marker = marker_of(f);
        const bool at_timeout = behaviour == "setsid_orphan_sleep";
        if (at_timeout)
          f.spec.timeout = std::chrono::seconds(4);
        ProcessRunner runner(f.config, {trusted, {}});
        JobHandle job;
        auto outcome = start_and_wait(runner, f.spec, job);
        REQUIRE(outcome.exit.ok());
        CHECK(outcome.exit->timed_out == at_timeout);
        CHECK(outcome.exit->exit_code == (at_timeout ? 128 + SIGTERM : 0));
        INFO(outcome.exit->log_tail);
        INFO(read_file(job.work_dir / "exit_status"));
        REQUIRE_FALSE(read_file(job.work_dir / "out" / "orphan.pid").empty());
        // Before cleanup(): wait() leaves nothing of the job running.
        CHECK(none_left_with_environment(marker));
        // Unsandboxed, the supervisor killed the orphan and counted it; in a sandbox the kernel
        // ended it with the PID namespace.
        const bool counted = outcome.exit->log_tail.find(
                                 "[reverify] when the job ended, 1 process(es) it had started "
                                 "were still running; they were killed") != std::string::npos;
        CHECK(counted == trusted);
        runner.cleanup(job);
      }
    }
  }
}

TEST_CASE("a supervisor killed without cgroups leaves no descendant of the job running") {
  for (const bool trusted : {false, true}) {
    CAPTURE(trusted);
    ProcessRunnerFixture f("setsid_orphan_sleep");
    f.config.cgroups = false;
    const std::string marker = marker_of(f);
    ProcessRunner runner(f.config, {trusted, {}});
    REQUIRE(runner.prepare(f.spec).ok());
    auto started = runner.start(f.spec);
    REQUIRE(started.ok());
    const auto orphan = started->work_dir / "out" / "orphan.pid";
    for (int i = 0; i < 500 && read_file(orphan).empty(); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    REQUIRE_FALSE(read_file(orphan).empty());
    REQUIRE(processes_with_environment(marker).size() >= 2);  // the job and its orphan
    const pid_t supervisor = std::stoi(started->ref.substr(0, started->ref.find(':')));
    REQUIRE(::kill(supervisor, SIGKILL) == 0);
    auto exit = runner.wait(*started, {});
    REQUIRE_FALSE(exit.ok());
    CHECK(exit.error().code == ErrorCode::runner_lost);
    INFO(exit.error().message);
    CHECK(exit.error().message.find(trusted ? "found by the job's REVERIFY_OUT in their environment"
                                            : "the kernel ended every process of the job") !=
          std::string::npos);
    CHECK(none_left_with_environment(marker));
    runner.cleanup(*started);
  }
}

TEST_CASE("a fork bomb stops at the job's pids limit, the host unharmed, and the verdict says so") {
  for (const bool trusted : {false, true}) {
    CAPTURE(trusted);
    ProcessRunnerFixture f("fork_bomb");
    f.config.max_pids = 64;
    f.spec.timeout = std::chrono::seconds(8);
    const std::string marker = marker_of(f);
    ProcessRunner runner(f.config, {trusted, {}});
    JobHandle job;
    auto outcome = start_and_wait(runner, f.spec, job);
    REQUIRE(outcome.exit.ok());
    INFO(outcome.exit->log_tail);
    CHECK(outcome.exit->timed_out);
    expect_bound_hit(*outcome.exit, "the job hit its pids limit of 64");
    CHECK(outcome.exit->log_tail.find("trainer: fork refused") != std::string::npos);
    CHECK(none_left_with_environment(marker));
    CHECK(std::system("true") == 0);  // this process can still fork and exec
    // The processes counted as left over are distinct ones: no more than the limit holds.
    const auto note = outcome.exit->log_tail.find("[reverify] when the job ended, ");
    if (note != std::string::npos) {
      const auto count = std::stoull(outcome.exit->log_tail.substr(note + 30));
      CHECK(count <= 64);
    }
    runner.cleanup(job);
  }
}

TEST_CASE("a runaway allocation ends at the job's memory limit, and the verdict says so") {
  ProcessRunnerFixture f("eat_memory");
  f.config.memory_bytes = 128 * 1024 * 1024;
  const std::string marker = marker_of(f);
  ProcessRunner runner(f.config);
  JobHandle job;
  auto outcome = start_and_wait(runner, f.spec, job);
  REQUIRE(outcome.exit.ok());
  CHECK_FALSE(outcome.exit->timed_out);
  CHECK(outcome.exit->exit_code == 128 + SIGKILL);
  expect_bound_hit(*outcome.exit, "the job hit its memory limit of 134217728 bytes");
  CHECK(none_left_with_environment(marker));
  runner.cleanup(job);
}

TEST_CASE("a bound the config asks for that no cgroup enforces is said in the log tail") {
  ProcessRunnerFixture f("ok");
  f.config.cgroups = false;
  f.config.memory_bytes = 128 * 1024 * 1024;
  ProcessRunner runner(f.config);
  JobHandle job;
  auto outcome = start_and_wait(runner, f.spec, job);
  REQUIRE(outcome.exit.ok());
  CHECK(outcome.exit->exit_code == 0);
  INFO(outcome.exit->log_tail);
  CHECK(outcome.exit->log_tail.find("[reverify] not enforced for this job: "
                                    "runner.process.memory_bytes") != std::string::npos);
  CHECK(outcome.exit->log_tail.find("(runner.process.cgroups is false)") != std::string::npos);
  runner.cleanup(job);
}

TEST_CASE("a disk that fills under the job is the platform's fault; the log keeps its last words") {
  ProcessRunnerFixture f("fill_disk");
  TmpfsMount disk(f.tmp.path / "small", "8m");
  f.config.space.min_free_bytes = 1024 * 1024;
  f.config.space.paths = {disk.path};
  f.spec.work_dir = disk.path / "work" / f.spec.rebuild_id;
  ProcessRunner runner(f.config);
  JobHandle job;
  auto outcome = start_and_wait(runner, f.spec, job);
  REQUIRE(outcome.exit.ok());
  CHECK(outcome.exit->exit_code == 1);
  REQUIRE(outcome.exit->platform_fault.has_value());
  const auto& fault = *outcome.exit->platform_fault;
  CHECK(fault.evidence["kind"] == "disk_full");
  CHECK(fault.reason.find(disk.path.string()) != std::string::npos);
  CHECK(fault.reason.find("No space left on device (ENOSPC)") != std::string::npos);
  // What the job printed after the disk was full never reached job.log: its supervisor kept it.
  CHECK(fault.evidence.contains("log_write"));
  CHECK(outcome.exit->log_tail.find("could not be written from byte") != std::string::npos);
  CHECK(outcome.exit->log_tail.find("trainer: stopped after") != std::string::npos);
  CHECK(outcome.exit->log_tail.find("No space left on device") != std::string::npos);
  const auto status = job_exit_status(*outcome.exit);
  CHECK(status.error().code == ErrorCode::infra);
  runner.cleanup(job);

  // A disk that is full already refuses the next job before it starts, naming the path.
  REQUIRE(std::system(("dd if=/dev/zero of='" + (disk.path / "ballast").string() +
                       "' bs=1M count=16 2>/dev/null; true")
                          .c_str()) == 0);
  const auto refused = runner.prepare(f.spec);
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.error().code == ErrorCode::infra);
  CHECK(refused.error().message.find(disk.path.string()) != std::string::npos);
  CHECK(refused.error().message.find("runner.space.min_free_bytes") != std::string::npos);
}
