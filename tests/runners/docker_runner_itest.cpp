// The docker runner against a real engine and registry started by the `docker` CTest fixture
// (tests/services/docker_up.sh, coordinates in $REVERIFY_SERVICES_DIR/docker.env), with the test
// trainer image pulled by digest: the runner contract (runner_contract.hpp), then what only this
// runner does (binds and environment in the container, image references, GPU runtime, a dying
// engine). Each failure case checks its error class, its message and that no container is left
// behind.
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <thread>

#include "core/http_client.hpp"
#include "runner_test_support.hpp"
#include "runners/docker_runner.hpp"
#include "tests/runners/hostile_lab.hpp"
#include "tests/support/marked_processes.hpp"
#include "tests/support/services_env.hpp"

using namespace reverify;
using namespace reverify::test;

namespace {

std::map<std::string, std::string> docker_env() {
  auto env = services_env("docker");
  REQUIRE(env.count("DOCKER_SOCK") == 1);
  REQUIRE(env.count("TRAINER_IMAGE") == 1);
  return env;
}

// Containers on the engine carrying this rebuild's label, running or not.
std::size_t containers_labelled(const std::string& socket, const std::string& rebuild_id) {
  HttpRequest request;
  request.url =
      "http://localhost/containers/json?all=1&filters=" +
      url_encode(
          nlohmann::json{{"label", {std::string(kRebuildIdLabel) + "=" + rebuild_id}}}.dump());
  request.unix_socket = socket;
  auto response = http_request(request);
  REQUIRE(response.ok());
  REQUIRE(response->status == 200);
  return nlohmann::json::parse(response->body).size();
}

// The engine's view of one container (GET /containers/{id}/json).
nlohmann::json inspect(const std::string& socket, const std::string& id) {
  HttpRequest request;
  request.url = "http://localhost/containers/" + id + "/json";
  request.unix_socket = socket;
  auto response = http_request(request);
  REQUIRE(response.ok());
  REQUIRE(response->status == 200);
  return nlohmann::json::parse(response->body);
}

// Containers of this suite on the engine, running or not: every rebuild id here starts "dk-".
std::vector<std::string> suite_containers(const std::string& socket) {
  HttpRequest request;
  request.url = "http://localhost/containers/json?all=1&filters=" +
                url_encode(nlohmann::json{{"label", {std::string(kRebuildIdLabel)}}}.dump());
  request.unix_socket = socket;
  auto response = http_request(request);
  REQUIRE(response.ok());
  REQUIRE(response->status == 200);
  std::vector<std::string> names;
  for (const auto& container : nlohmann::json::parse(response->body)) {
    const auto id =
        container.value("Labels", nlohmann::json::object()).value(kRebuildIdLabel, std::string());
    if (id.rfind("dk-", 0) == 0)
      names.push_back(id);
  }
  return names;
}

struct Fixture {
  std::map<std::string, std::string> env = docker_env();
  TempDir tmp;
  DockerRunnerConfig config;
  RebuildSpec spec;

  explicit Fixture(const std::string& behaviour) {
    config.socket = env["DOCKER_SOCK"];
    config.scratch_root = tmp.path / "scratch";
    config.kill_grace = std::chrono::seconds(1);
    config.reconnect_grace = std::chrono::milliseconds(3000);
    spec.rebuild_id = "dk-" + behaviour;
    spec.manifest = trainer_manifest(behaviour);
    spec.manifest.environment->image = env["TRAINER_IMAGE"];
    spec.manifest.run.workdir = "/src";
    spec.timeout = std::chrono::seconds(120);
    // A read-only eval set, as the pipeline gives it.
    std::filesystem::create_directories(tmp.path / "eval");
    std::ofstream(tmp.path / "eval" / "eval.npy") << "eval";
    spec.eval_path = tmp.path / "eval" / "eval.npy";
  }

  std::string image_with_digest(const std::string& digest) const {
    const auto& image = env.at("TRAINER_IMAGE");
    return image.substr(0, image.find('@')) + "@" + digest;
  }

  void expect_nothing_left(const JobHandle* job = nullptr) {
    CHECK(containers_labelled(config.socket, spec.rebuild_id) == 0);
    if (job)
      CHECK_FALSE(std::filesystem::exists(job->work_dir));
  }

  // Every process of the job carries this entry in its environment (seen from the host).
  std::string marker() {
    spec.manifest.environment->env["RUNNER_TEST_MARKER"] = tmp.path.string();
    return "RUNNER_TEST_MARKER=" + tmp.path.string();
  }
};

class DockerHarness final : public TrainerHarness {
 public:
  std::unique_ptr<Runner> make_runner() override {
    return std::make_unique<DockerRunner>(fixture_.config);
  }
  RebuildSpec spec(JobScript script) override {
    RebuildSpec spec = acting_out(fixture_.spec, script, "dk-");
    return spec;
  }
  std::filesystem::path collect_dir() override { return fixture_.tmp.path / "collected"; }
  void expect_no_traces(const JobHandle& job) override {
    CHECK(containers_labelled(fixture_.config.socket, job.rebuild_id) == 0);
  }

 private:
  Fixture fixture_{"ok"};
};

Error prepare_error(Fixture& f) {
  DockerRunner runner(f.config);
  const auto status = runner.prepare(f.spec);
  REQUIRE_FALSE(status.ok());
  return status.error();
}

}  // namespace

TEST_CASE("the runner contract, on the docker runner") {
  DockerHarness harness;
  check_runner_contract(harness);
}

TEST_CASE("in the container: the contract's environment, the binds, nothing of the daemon's") {
  Fixture f("ok");
  DockerRunner runner(f.config);
  JobHandle job;
  const auto before = std::chrono::steady_clock::now();
  auto outcome = start_and_wait(runner, f.spec, job);
  const std::chrono::duration<double> waited = std::chrono::steady_clock::now() - before;
  REQUIRE_MESSAGE(outcome.exit.ok(), (outcome.exit.ok() ? "" : outcome.exit.error().to_string()));
  CHECK(outcome.exit->log_tail.find("trainer-first-instruction") != std::string::npos);
  // The job's own time, from the engine's StartedAt/FinishedAt (not wait()'s polling).
  REQUIRE(outcome.exit->job_seconds.has_value());
  CHECK(*outcome.exit->job_seconds > 0);
  CHECK(*outcome.exit->job_seconds <= waited.count());
  CHECK(containers_labelled(f.config.socket, f.spec.rebuild_id) == 1);  // until cleanup
  auto outputs = runner.collect(job, f.tmp.path / "collected");
  REQUIRE_MESSAGE(outputs.ok(), (outputs.ok() ? "" : outputs.error().to_string()));
  REQUIRE(outputs->predictions);
  const auto env = nlohmann::json::parse(read_file(f.tmp.path / "collected" / "env.json"));
  CHECK(env["REVERIFY_OUT"] == "/reverify/out");
  CHECK(env["REVERIFY_EVAL"] == "/reverify/eval/eval.npy");
  CHECK(env["REVERIFY_SEEDS"] == "/reverify/in/seeds.json");
  CHECK(env["TRAINER_BEHAVIOUR"] == "ok");
  CHECK(env["SOURCE_DATE_EPOCH"] == "1793000000");
  CHECK_FALSE(env.contains("REVERIFY_SERVICES_DIR"));  // nothing of the daemon's environment
  runner.cleanup(job);
  f.expect_nothing_left(&job);
}

// The hostile job (fixtures/hostile_job.py, in the trainer image) against the docker runner, this
// test playing the verifier (hostile_lab.hpp): the engine is asked for no host path but the
// contract's folders, no socket, no network (NetworkMode none), and every attempt fails.
TEST_CASE("a hostile job in a container reaches nothing of the verifier") {
  Fixture f("hostile");
  HostileLab lab;
  f.spec.manifest.run.entrypoint = {"python3", "hostile_job.py"};
  f.spec.rebuild_id = "dk-hostile";
  const auto work_dir = f.config.scratch_root / f.spec.rebuild_id;
  f.spec.manifest.environment->env["HOSTILE_TARGETS"] = lab.targets(work_dir).dump();
  DockerRunner runner(f.config, {false, lab.verifier_paths()});
  JobHandle job;
  auto outcome = start_and_wait(runner, f.spec, job);
  REQUIRE_MESSAGE(outcome.exit.ok(), (outcome.exit.ok() ? "" : outcome.exit.error().to_string()));
  INFO(outcome.exit->log_tail);
  REQUIRE(outcome.exit->exit_code == 0);
  // What the daemon asked the engine for.
  const auto host = inspect(f.config.socket, job.ref)["HostConfig"];
  CHECK(host["NetworkMode"] == "none");
  CHECK(host["Privileged"] == false);
  CHECK(host.value("Mounts", nlohmann::json::array()).empty());
  for (const auto& bind : host["Binds"]) {
    const std::string source = bind.get<std::string>().substr(0, bind.get<std::string>().find(':'));
    CAPTURE(source);
    CHECK((source.rfind(work_dir.string(), 0) == 0 || source == f.spec.eval_path->string()));
    CHECK(source.find("docker.sock") == std::string::npos);
  }
  const auto written = lab.written(job.work_dir);
  auto outputs = runner.collect(job, f.tmp.path / "collected");
  REQUIRE_MESSAGE(outputs.ok(), (outputs.ok() ? "" : outputs.error().to_string()));
  const auto attempts = nlohmann::json::parse(read_file(outputs->out_dir / "attempts.json"));
  const std::size_t checked = lab.expect_blocked(attempts, job.work_dir, written);
  CHECK(checked >= 17);
  MESSAGE("docker: " << checked << " attempts, each blocked:\n" << outcome.exit->log_tail);
  runner.cleanup(job);
  f.expect_nothing_left(&job);
}

TEST_CASE("a job whose model declares network gets runner.docker.network_mode, others none") {
  Fixture f("ok");
  f.config.network_mode = "host";  // this engine has no bridge; host shows the setting is used
  f.spec.network = true;
  DockerRunner runner(f.config);
  JobHandle job;
  auto outcome = start_and_wait(runner, f.spec, job);
  REQUIRE_MESSAGE(outcome.exit.ok(), (outcome.exit.ok() ? "" : outcome.exit.error().to_string()));
  CHECK(inspect(f.config.socket, job.ref)["HostConfig"]["NetworkMode"] == "host");
  runner.cleanup(job);
  f.expect_nothing_left(&job);
}

TEST_CASE("a data path that would show the job one of the verifier's own files is refused") {
  Fixture f("ok");
  const auto secret = f.tmp.path / "eval" / "api.token";
  std::ofstream(secret) << "secret";
  DockerRunner runner(f.config, {false, {secret}});
  REQUIRE(runner.prepare(f.spec).ok());
  f.spec.eval_path = f.tmp.path / "eval";
  const auto started = runner.start(f.spec);
  REQUIRE_FALSE(started.ok());
  CHECK(started.error().code == ErrorCode::provision);
  CHECK(started.error().message.find("REVERIFY_EVAL") != std::string::npos);
  f.expect_nothing_left();
}

TEST_CASE("no or invalid result.json is error:job") {
  for (const std::string behaviour : {"no_result", "bad_result"}) {
    CAPTURE(behaviour);
    Fixture f(behaviour);
    DockerRunner runner(f.config);
    JobHandle job;
    auto outcome = start_and_wait(runner, f.spec, job);
    REQUIRE(outcome.exit.ok());
    CHECK(outcome.exit->exit_code == 0);
    auto outputs = runner.collect(job, f.tmp.path / "collected");
    REQUIRE_FALSE(outputs.ok());
    CHECK(outputs.error().code == ErrorCode::job);
    CHECK(outputs.error().message.find("result.json") != std::string::npos);
    runner.cleanup(job);
    f.expect_nothing_left(&job);
  }
}

TEST_CASE("an image digest the registry does not have is error:provision") {
  Fixture f("ok");
  f.spec.manifest.environment->image = f.image_with_digest("sha256:" + std::string(64, '0'));
  const auto error = prepare_error(f);
  CHECK(error.code == ErrorCode::provision);
  CHECK(error.message.find("pulling " + *f.spec.manifest.environment->image) != std::string::npos);
  f.expect_nothing_left();
}

TEST_CASE("an image by tag is refused before anything is pulled") {
  Fixture f("ok");
  const auto& image = f.env["TRAINER_IMAGE"];
  f.spec.manifest.environment->image = image.substr(0, image.find('@')) + ":test";
  const auto error = prepare_error(f);
  CHECK(error.code == ErrorCode::manifest_invalid);
  CHECK(error.message.find("environment.image: must be referenced by digest") != std::string::npos);
}

TEST_CASE("a registry that is down is error:provision naming the image") {
  Fixture f("ok");
  // Port 9 (discard) on loopback: no registry answers there.
  const auto& image = f.env["TRAINER_IMAGE"];
  const auto digest = image.substr(image.find('@') + 1);
  f.spec.manifest.environment->image = "127.0.0.1:9/reverify-trainer@" + digest;
  const auto error = prepare_error(f);
  CHECK(error.code == ErrorCode::provision);
  CHECK(error.message.find("127.0.0.1:9") != std::string::npos);
  f.expect_nothing_left();
}

TEST_CASE("one GPU on an engine without a GPU runtime is error:provision naming the runtime") {
  Fixture f("ok");
  f.spec.manifest.environment->accelerator = Accelerator{"NVIDIA H100", 1, {}, {}, {}};
  DockerRunner runner(f.config);
  REQUIRE(runner.prepare(f.spec).ok());
  auto started = runner.start(f.spec);
  REQUIRE_FALSE(started.ok());
  CHECK(started.error().code == ErrorCode::provision);
  CHECK(started.error().message.find("no GPU runtime") != std::string::npos);
  CHECK(started.error().message.find("nvidia-container-runtime-hook") != std::string::npos);
  f.expect_nothing_left();
}

TEST_CASE("dockerd killed mid-run is error:runner-lost, and a restarted engine is cleaned up") {
  Fixture f("sleep");
  // A private engine: killing the shared one would break the other tests.
  const auto engine = std::filesystem::path("/tmp") / ("rv-dk-" + std::to_string(::getpid()));
  const auto services = source_dir() / "tests/services";
  REQUIRE(std::system(("bash '" + (services / "dockerd_start.sh").string() + "' " + engine.string())
                          .c_str()) == 0);
  struct Stop {
    std::string command;
    ~Stop() { (void)std::system(command.c_str()); }
  } stop{"bash '" + (services / "dockerd_stop.sh").string() + "' " + engine.string()};
  f.config.socket = (engine / "docker.sock").string();
  DockerRunner runner(f.config);
  REQUIRE(runner.prepare(f.spec).ok());
  auto started = runner.start(f.spec);
  REQUIRE_MESSAGE(started.ok(), (started.ok() ? "" : started.error().to_string()));
  const auto child_pid = started->work_dir / "out" / "child.pid";
  for (int i = 0; i < 600 && read_file(child_pid).empty(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  REQUIRE_FALSE(read_file(child_pid).empty());

  std::thread killer([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    ::kill(std::stoi(read_file(engine / "dockerd.pid")), SIGKILL);
  });
  auto exit = runner.wait(*started, {});
  killer.join();
  REQUIRE_FALSE(exit.ok());
  CHECK(exit.error().code == ErrorCode::runner_lost);
  CHECK(exit.error().message.find("stopped answering") != std::string::npos);

  // The engine comes back (dockerd_start.sh on the same folder): the container is removed.
  REQUIRE(std::system(("bash '" + (services / "dockerd_start.sh").string() + "' " + engine.string())
                          .c_str()) == 0);
  runner.cleanup(*started);
  CHECK(containers_labelled(f.config.socket, f.spec.rebuild_id) == 0);
}

TEST_CASE("overhead: start request to the job's first instruction, against docker run") {
  Fixture f("no_result");
  DockerRunner runner(f.config);
  REQUIRE(runner.prepare(f.spec).ok());  // the image is local from here on, for both
  // Each timed run below is prepare (the pull-by-digest check) + start, as the pipeline runs it.
  const auto stamp = [](const std::string& log) {
    const auto at = log.find("trainer-first-instruction ");
    REQUIRE(at != std::string::npos);
    return std::stod(log.substr(at + 26));
  };
  const auto now_s = [] {
    return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch())
        .count();
  };
  std::vector<double> ours, cli;
  for (int i = 0; i < 5; ++i) {
    f.spec.rebuild_id = "dk-overhead-" + std::to_string(i);
    const double t0 = now_s();
    JobHandle job;
    auto outcome = start_and_wait(runner, f.spec, job);
    REQUIRE(outcome.exit.ok());
    ours.push_back(stamp(outcome.exit->log_tail) - t0);
    runner.cleanup(job);

    const auto log = f.tmp.path / "cli.log";
    const std::string command = "DOCKER_HOST=unix://" + f.config.socket +
                                " docker run --rm --network none -e TRAINER_BEHAVIOUR=no_result -e "
                                "REVERIFY_OUT=/tmp -w /src " +
                                f.env["TRAINER_IMAGE"] + " python3 trainer.py > " + log.string() +
                                " 2>&1";
    const double t1 = now_s();
    REQUIRE(std::system(command.c_str()) == 0);
    cli.push_back(stamp(read_file(log)) - t1);
  }
  std::sort(ours.begin(), ours.end());
  std::sort(cli.begin(), cli.end());
  MESSAGE("start -> first instruction, median of 5: docker runner "
          << ours[2] * 1000 << " ms, `docker run` " << cli[2] * 1000 << " ms");
  CHECK(ours[2] > 0);
}

TEST_CASE("the container cannot take the host down: read-only root, tmpfs, pids, files, no swap") {
  Fixture f("ok");
  f.config.memory_bytes = 256 * 1024 * 1024;
  f.config.max_open_files = 4096;  // under this engine's own hard limit
  DockerRunner runner(f.config);
  JobHandle job;
  auto outcome = start_and_wait(runner, f.spec, job);
  REQUIRE_MESSAGE(outcome.exit.ok(), (outcome.exit.ok() ? "" : outcome.exit.error().to_string()));
  CHECK(outcome.exit->exit_code == 0);  // the out folder stays a writable bind
  CHECK(runner.collect(job, f.tmp.path / "collected").ok());
  const auto host = inspect(f.config.socket, job.ref)["HostConfig"];
  CHECK(host["ReadonlyRootfs"] == true);
  CHECK(host["PidsLimit"] == 4096);
  CHECK(host["Memory"] == 256 * 1024 * 1024);
  CHECK(host["MemorySwap"] == 256 * 1024 * 1024);
  CHECK(host["OomScoreAdj"] == 1000);
  REQUIRE(host["Tmpfs"].contains("/tmp"));
  CHECK(host["Tmpfs"]["/tmp"].get<std::string>().find("size=1073741824") != std::string::npos);
  REQUIRE(host["Ulimits"].size() == 1);
  CHECK(host["Ulimits"][0]["Name"] == "nofile");
  CHECK(host["Ulimits"][0]["Hard"] == 4096);
  runner.cleanup(job);
  f.expect_nothing_left(&job);
}

TEST_CASE("a fork bomb in a container stops at its PidsLimit, the host unharmed, with the reason") {
  Fixture f("fork_bomb");
  f.config.max_pids = 64;
  f.spec.timeout = std::chrono::seconds(15);
  const std::string marker = f.marker();
  DockerRunner runner(f.config);
  JobHandle job;
  auto outcome = start_and_wait(runner, f.spec, job);
  REQUIRE_MESSAGE(outcome.exit.ok(), (outcome.exit.ok() ? "" : outcome.exit.error().to_string()));
  CHECK(outcome.exit->timed_out);
  expect_bound_hit(*outcome.exit, "the job hit its pids limit of 64");
  CHECK(outcome.exit->log_tail.find("trainer: fork refused") != std::string::npos);
  CHECK(std::system("true") == 0);  // this process can still fork and exec
  runner.cleanup(job);
  f.expect_nothing_left(&job);
  CHECK(none_left_with_environment(marker));
}

TEST_CASE("a runaway allocation in a container ends at its memory limit, with the reason") {
  Fixture f("eat_memory");
  f.config.memory_bytes = 128 * 1024 * 1024;
  const std::string marker = f.marker();
  DockerRunner runner(f.config);
  JobHandle job;
  auto outcome = start_and_wait(runner, f.spec, job);
  REQUIRE_MESSAGE(outcome.exit.ok(), (outcome.exit.ok() ? "" : outcome.exit.error().to_string()));
  CHECK_FALSE(outcome.exit->timed_out);
  CHECK(outcome.exit->exit_code == 128 + SIGKILL);
  expect_bound_hit(*outcome.exit, "the job hit its memory limit of 134217728 bytes");
  runner.cleanup(job);
  f.expect_nothing_left(&job);
  CHECK(none_left_with_environment(marker));
}

// Last in the file, so last to run (doctest runs a file's test cases in order).
TEST_CASE("after the suite, no container of it is left on the engine (docker ps -a)") {
  const auto env = docker_env();
  const auto left = suite_containers(env.at("DOCKER_SOCK"));
  for (const auto& id : left)
    MESSAGE("left behind: the container of rebuild " << id);
  CHECK(left.empty());
}
