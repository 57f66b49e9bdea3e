// A hostile job (fixtures/hostile_job.py) under the process runner, run by this test as root
// (the unprivileged daemon under the shipped unit's settings: tests/daemon/hostile_unit.sh; the
// docker runner: docker_runner_itest). It tries every secret file the verifier keeps, its config,
// its store read-write, its /proc/<pid>/environ and a kill -0, its API with and without the
// token, an outside address and the verifier's own port, a container engine's socket, and writes
// beside its out folder, into the state folder and into the host's /tmp. In its sandbox every
// attempt fails, with cgroups and without. The same job with runner.trust_job_code succeeds at
// them: the attempts are real, and the sandbox is what stops them. Then the sandbox's own
// failures: a host that cannot sandbox, a /proc partly hidden, a sandbox that fails to set up.
#include <doctest/doctest.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/wait.h>

#include "runner_test_support.hpp"
#include "runners/job_sandbox.hpp"
#include "runners/process_runner.hpp"
#include "tests/runners/hostile_lab.hpp"

using namespace reverify;
using namespace reverify::test;
namespace fs = std::filesystem;

namespace {

std::string commit_of(const fs::path& repo) {
  const auto file = repo / ".git" / "rv-head";
  REQUIRE(std::system(("git -C '" + repo.string() + "' rev-parse HEAD > '" + file.string() + "'")
                          .c_str()) == 0);
  return read_file(file).substr(0, 40);
}

struct HostileRun {
  nlohmann::json attempts;
  JobExit exit;
  fs::path work_dir;
  std::map<std::string, bool> written;  // HostileLab::written(), before cleanup
};

// One rebuild of the hostile job through the process runner, the pipeline's way (its scratch
// folder in the state folder), its attempts read from the collected outputs.
HostileRun run_hostile(const HostileLab& lab, ProcessRunnerConfig config, JobIsolation isolation,
                       const std::string& id) {
  const fs::path repo = lab.tmp.path / ("repo-" + id);
  fs::create_directories(repo);
  fs::copy_file(source_dir() / "tests/runners/fixtures/hostile_job.py", repo / "train.py");
  const std::string git = "git -C '" + repo.string() + "' -c user.name=t -c user.email=t@t ";
  REQUIRE(
      std::system((git + "init -q && " + git + "add train.py && " + git + "commit -q -m hostile")
                      .c_str()) == 0);
  RebuildSpec spec;
  spec.rebuild_id = id;
  spec.manifest = trainer_manifest("hostile");
  spec.manifest.code.repo = repo.string();
  spec.manifest.code.commit = commit_of(repo);
  spec.manifest.run.entrypoint = {"python3", "train.py"};
  spec.manifest_location = (lab.tmp.path / "registry" / "manifest.json").string();
  spec.work_dir = lab.state / "work" / id / "job";
  spec.manifest.environment->env["HOSTILE_TARGETS"] = lab.targets(spec.work_dir).dump();
  spec.timeout = std::chrono::seconds(120);
  config.scratch_root = lab.state / "scratch";
  config.poll_interval = std::chrono::milliseconds(20);
  ProcessRunner runner(config, std::move(isolation));
  HostileRun run;
  JobHandle job;
  auto outcome = start_and_wait(runner, spec, job);
  REQUIRE_MESSAGE(outcome.exit.ok(), (outcome.exit.ok() ? "" : outcome.exit.error().to_string()));
  run.exit = *outcome.exit;
  INFO(run.exit.log_tail);
  REQUIRE(run.exit.exit_code == 0);
  auto outputs = runner.collect(job, lab.tmp.path / ("collected-" + id));
  REQUIRE_MESSAGE(outputs.ok(), (outputs.ok() ? "" : outputs.error().to_string()));
  run.attempts = nlohmann::json::parse(read_file(outputs->out_dir / "attempts.json"));
  run.work_dir = job.work_dir;
  run.written = lab.written(job.work_dir);
  runner.cleanup(job);
  return run;
}

}  // namespace

TEST_CASE("a hostile job in the process runner's sandbox reaches nothing of the verifier") {
  for (const bool cgroups : {true, false}) {
    CAPTURE(cgroups);
    HostileLab lab;
    ProcessRunnerConfig config;
    config.cgroups = cgroups;
    const auto run = run_hostile(lab, config, {false, lab.verifier_paths()},
                                 cgroups ? "hostile-cg" : "hostile-nocg");
    INFO(run.exit.log_tail);
    const std::size_t checked = lab.expect_blocked(run.attempts, run.work_dir, run.written);
    CHECK(checked >= 17);
    MESSAGE("sandboxed (cgroups " << (cgroups ? "on" : "off") << "): " << checked
                                  << " attempts, each blocked:\n"
                                  << run.exit.log_tail);
  }
}

TEST_CASE("the same job with runner.trust_job_code reaches the verifier: the attempts are real") {
  HostileLab lab;
  const auto run = run_hostile(lab, {}, {true, lab.verifier_paths()}, "hostile-trusted");
  INFO(run.exit.log_tail);
  const auto succeeded = [&](const std::string& name) {
    CAPTURE(name);
    REQUIRE(run.attempts.contains(name));
    return run.attempts[name]["succeeded"].get<bool>();
  };
  // Root reads every file; the daemon's own uid would too (its secrets are its own).
  CHECK(succeeded("read api.token"));
  CHECK(run.attempts["read api.token"]["detail"].get<std::string>().find(
            sha256_hex(read_file(lab.etc / "api.token"))) != std::string::npos);
  CHECK(succeeded("read the attestation key"));
  CHECK(succeeded("open the store read-write"));
  CHECK(succeeded("read the verifier's /proc/<pid>/environ"));
  CHECK(succeeded("signal the verifier (kill -0)"));
  CHECK(succeeded("POST /v1/verifications with the token"));
  CHECK(succeeded("connect to the verifier's port on 127.0.0.1"));
  CHECK(succeeded("connect to the container engine's socket"));
  CHECK(run.written.at("write into the host's /tmp"));
  CHECK(run.written.at("write into the state folder"));
  CHECK(run.written.at("write beside the out folder (the scratch records)"));
  CHECK(run.exit.log_tail.find("runner.trust_job_code is true") != std::string::npos);
}

namespace {

// A trivial job in a git checkout, for the sandbox's own failures.
RebuildSpec trivial_spec(const HostileLab& lab, const std::string& id,
                         std::vector<std::string> entrypoint) {
  const fs::path repo = lab.tmp.path / ("repo-" + id);
  fs::create_directories(repo);
  write_file(repo / "README", "trivial\n");
  const std::string git = "git -C '" + repo.string() + "' -c user.name=t -c user.email=t@t ";
  REQUIRE(std::system(
              (git + "init -q && " + git + "add README && " + git + "commit -q -m t").c_str()) ==
          0);
  RebuildSpec spec;
  spec.rebuild_id = id;
  spec.manifest = trainer_manifest("trivial");
  spec.manifest.code.repo = repo.string();
  spec.manifest.code.commit = commit_of(repo);
  spec.manifest.run.entrypoint = std::move(entrypoint);
  spec.manifest_location = (lab.tmp.path / "registry" / "manifest.json").string();
  spec.work_dir = lab.state / "work" / id / "job";
  return spec;
}

}  // namespace

TEST_CASE("a host that cannot sandbox refuses jobs, naming runner.trust_job_code") {
  HostileLab lab;
  ProcessRunnerConfig config;
  config.scratch_root = lab.state / "scratch";
  config.sandbox.bwrap = lab.tmp.path / "no-bwrap";
  ProcessRunner runner(config);
  const auto refused = runner.prepare(trivial_spec(lab, "no-bwrap", {"true"}));
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.error().code == ErrorCode::provision);
  CHECK(refused.error().message.find("install Debian's bubblewrap") != std::string::npos);
  CHECK(refused.error().message.find("runner.trust_job_code: true") != std::string::npos);
}

TEST_CASE("a /proc partly hidden, as systemd's ProtectKernelTunables= hides it, is named") {
  // In a mount namespace of its own, /proc/sys over-mounted read-only as the unit setting does,
  // as an unprivileged user: the kernel refuses bwrap a fresh /proc.
  int answer[2];
  REQUIRE(::pipe(answer) == 0);
  const pid_t child = ::fork();
  if (child == 0) {
    ::close(answer[0]);
    std::string said = "setup failed";
    if (::unshare(CLONE_NEWNS) == 0 &&
        ::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) == 0 &&
        ::mount("/proc/sys", "/proc/sys", nullptr, MS_BIND, nullptr) == 0 &&
        ::mount(nullptr, "/proc/sys", nullptr, MS_REMOUNT | MS_BIND | MS_RDONLY, nullptr) == 0 &&
        ::setgid(65534) == 0 && ::setuid(65534) == 0) {
      const auto probe = probe_sandbox(SandboxConfig{});
      said = probe.ok() ? "the probe passed" : probe.error().message;
    }
    (void)!::write(answer[1], said.data(), said.size());
    std::_Exit(0);
  }
  ::close(answer[1]);
  std::string said;
  char buffer[4096];
  for (ssize_t n; (n = ::read(answer[0], buffer, sizeof buffer)) > 0;)
    said.append(buffer, static_cast<std::size_t>(n));
  ::close(answer[0]);
  ::waitpid(child, nullptr, 0);
  INFO(said);
  CHECK(said.find("Can't mount proc") != std::string::npos);
  CHECK(said.find("ProtectKernelTunables=") != std::string::npos);
  CHECK(said.find("runner.trust_job_code") != std::string::npos);
}

TEST_CASE("a sandbox that fails to set up is error:provision; a job exiting 1 is the job's") {
  HostileLab lab;
  ProcessRunnerConfig config;
  config.scratch_root = lab.state / "scratch";
  config.poll_interval = std::chrono::milliseconds(20);
  SUBCASE("bwrap refuses a mount (after a probe that passed)") {
    // Real bubblewrap for the probe (/usr/bin/true); a refusal, as bwrap words it, for the job.
    const auto fake = lab.tmp.path / "bwrap";
    write_file(fake,
               "#!/bin/sh\n"
               "for last; do :; done\n"
               "[ \"$last\" = /usr/bin/true ] && exec /usr/bin/bwrap \"$@\"\n"
               "echo \"bwrap: Can't bind mount /oldroot/x on /newroot/x: No such file\" >&2\n"
               "exit 1\n");
    fs::permissions(fake, fs::perms::owner_all);
    config.sandbox.bwrap = fake;
    ProcessRunner runner(config);
    JobHandle job;
    const auto spec = trivial_spec(lab, "setup-fails", {"sh", "-c", "exit 0"});
    REQUIRE(runner.prepare(spec).ok());
    auto started = runner.start(spec);
    REQUIRE(started.ok());
    const auto exit = runner.wait(*started, {});
    REQUIRE_FALSE(exit.ok());
    CHECK(exit.error().code == ErrorCode::provision);
    CHECK(exit.error().message.find("the job's sandbox could not be set up, so the job never "
                                    "ran: bwrap: Can't bind mount") != std::string::npos);
    runner.cleanup(*started);
  }
  SUBCASE("the job itself exits 1") {
    ProcessRunner runner(config);
    JobHandle job;
    auto outcome =
        start_and_wait(runner, trivial_spec(lab, "exits-1", {"sh", "-c", "exit 1"}), job);
    REQUIRE_MESSAGE(outcome.exit.ok(), (outcome.exit.ok() ? "" : outcome.exit.error().to_string()));
    CHECK(outcome.exit->exit_code == 1);
    CHECK(job_exit_status(*outcome.exit).error().code == ErrorCode::job);
    runner.cleanup(job);
  }
}
