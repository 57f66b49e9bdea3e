// The kubernetes runner against tests/k8s/fake_apiserver.py over HTTPS (a CA made for the test),
// through every scenario the fake simulates: the runner contract (runner_contract.hpp), then what
// only this runner meets (preemption, watches that expire, pull failures, Jobs deleted behind its
// back, credentials). The fake enforces request shapes and records each violation; every test
// requires none (except where a wrong request is the point).
#include <doctest/doctest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <future>
#include <thread>

#include "core/http_client.hpp"
#include "runners/kubernetes_job_spec.hpp"
#include "runners/kubernetes_runner.hpp"
#include "tests/runners/runner_contract.hpp"
#include "tests/support/files.hpp"
#include "tests/support/temp_dir.hpp"

using namespace reverify;
using namespace reverify::test;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

pid_t spawn(const std::vector<std::string>& argv, bool quiet = false) {
  std::vector<char*> args;
  for (const auto& a : argv)
    args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = fork();
  if (pid == 0) {
    if (quiet)
      freopen("/dev/null", "w", stderr);
    execv(args[0], args.data());
    _exit(127);
  }
  return pid;
}

int run(const std::vector<std::string>& argv) {
  int status = 0;
  waitpid(spawn(argv, true), &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// One fake API server on a free loopback port, stopped by pid.
class FakeApiServer {
 public:
  FakeApiServer() {
    fs::create_directories(dir_ / "pvc");
    fs::create_directories(dir_ / "datasets" / "digits");
    write_file(dir_ / "token", "s3cret-service-account-token\n");
    REQUIRE(run({"/usr/bin/openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                 "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1", "-keyout",
                 (dir_ / "key.pem").string(), "-out", (dir_ / "cert.pem").string()}) == 0);
    pid_ =
        spawn({"/usr/bin/python3", (source_dir() / "tests/k8s/fake_apiserver.py").string(),
               "--port-file", (dir_ / "port").string(), "--token-file", (dir_ / "token").string(),
               "--namespace", "ml", "--out-claim", "reverify-out=" + (dir_ / "pvc").string(),
               "--cert", (dir_ / "cert.pem").string(), "--key", (dir_ / "key.pem").string()});
    for (int i = 0; i < 300 && !fs::exists(dir_ / "port"); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));  // start-up, not a timing check
    }
    REQUIRE(fs::exists(dir_ / "port"));
    std::ifstream(dir_ / "port") >> port_;
  }
  ~FakeApiServer() { stop(); }
  void stop() {
    if (pid_ <= 0)
      return;
    kill(pid_, SIGTERM);
    waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }

  const fs::path& dir() const { return dir_; }
  std::string url() const { return "https://127.0.0.1:" + std::to_string(port_); }

  KubernetesConfig config() const {
    KubernetesConfig config;
    config.api_server = url();
    config.namespace_name = "ml";
    config.token_file = dir_ / "token";
    config.ca_file = dir_ / "cert.pem";
    config.input_volumes = {{"datasets", dir_ / "datasets"}};
    config.outputs.volume = {"reverify-out", dir_ / "pvc"};
    config.reconnect_grace = std::chrono::milliseconds(1500);
    return config;
  }

  void scenario(const std::string& name) const {
    auto r = control("POST", "/_fake/scenario", json{{"scenario", name}}.dump());
    REQUIRE(r.status == 200);
  }
  json violations() const { return json::parse(control("GET", "/_fake/violations", "").body); }
  // The pods the API server lists for a Job (as a client would see them after its deletion).
  json pods_of(const std::string& job_name) const {
    HttpRequest request;
    request.url =
        url() + "/api/v1/namespaces/ml/pods?labelSelector=" + url_encode("job-name=" + job_name);
    request.ca_file = (dir_ / "cert.pem").string();
    request.bearer_token = "s3cret-service-account-token";
    request.headers = {{"Accept", "application/json"}};
    auto response = http_request(request);
    REQUIRE(response.ok());
    REQUIRE(response->status == 200);
    return json::parse(response->body)["items"];
  }
  std::vector<std::string> requests() const {
    return json::parse(control("GET", "/_fake/requests", "").body);
  }
  // The names of the NetworkPolicies the fake holds now, as a JSON array.
  std::string networkpolicies() const { return control("GET", "/_fake/networkpolicies", "").body; }

 private:
  HttpResponse control(const std::string& method, const std::string& path,
                       const std::string& body) const {
    HttpRequest request;
    request.method = method;
    request.url = url() + path;
    request.ca_file = (dir_ / "cert.pem").string();
    request.body = body;
    auto response = http_request(request);
    REQUIRE(response.ok());
    return *response;
  }

  TempDir temp_{"reverify-k8s-"};
  fs::path dir_ = temp_.path;
  pid_t pid_ = -1;
  int port_ = 0;
};

RebuildSpec spec_for(const FakeApiServer& fake, const std::string& id) {
  RebuildSpec spec;
  spec.rebuild_id = id;
  spec.manifest.model = "digits-mlp";
  spec.manifest.version = "2026.11.1";
  spec.manifest.environment = Environment{};
  spec.manifest.environment->image = "127.0.0.1:5000/trainer@sha256:" + std::string(64, 'b');
  spec.manifest.environment->accelerator = Accelerator{};
  spec.manifest.environment->accelerator->model = "NVIDIA H100 80GB HBM3";
  spec.manifest.environment->accelerator->count = 1;
  spec.manifest.run.entrypoint = {"python3", "train.py"};
  spec.data_path = fake.dir() / "datasets" / "digits";
  spec.work_dir = fake.dir() / "work" / id;
  spec.timeout = std::chrono::seconds(600);
  return spec;
}

std::unique_ptr<Runner> runner_for(const KubernetesConfig& config) {
  auto runner = make_kubernetes_runner(config);
  REQUIRE(runner.ok());
  return std::move(*runner);
}

bool contains(const std::vector<std::string>& lines, const std::string& needle) {
  for (const auto& l : lines) {
    if (l.find(needle) != std::string::npos)
      return true;
  }
  return false;
}

// start + wait for one rebuild in the given scenario.
Result<JobExit> run_scenario(const FakeApiServer& fake, Runner& runner, const std::string& scenario,
                             const std::string& id, std::string* streamed = nullptr) {
  fake.scenario(scenario);
  auto spec = spec_for(fake, id);
  REQUIRE(runner.prepare(spec).ok());
  auto job = runner.start(spec);
  REQUIRE(job.ok());
  CHECK(job->runner_kind == RunnerKind::kubernetes);
  return runner.wait(*job, [&](std::string_view chunk) {
    if (streamed)
      streamed->append(chunk);
  });
}

// Each script is a scenario of the fake API server, set when its spec is made.
class KubernetesHarness final : public ContractHarness {
 public:
  KubernetesHarness() {
    done_line = "attempt 1: done";
    failure_line = "ValueError: boom";
  }
  std::unique_ptr<Runner> make_runner() override { return runner_for(fake_.config()); }
  RebuildSpec spec(JobScript script) override {
    const char* scenario = script == JobScript::exits_3             ? "failure"
                           : script == JobScript::runs_past_timeout ? "deadline"
                                                                    : "success";
    fake_.scenario(scenario);
    return spec_for(fake_, std::string(scenario) + "-1");
  }
  fs::path collect_dir() override { return fake_.dir() / "collected"; }
  void expect_no_traces(const JobHandle& job) override {
    CHECK_FALSE(fs::exists(fake_.dir() / "pvc" / "reverify" / job.rebuild_id));
    CHECK(contains(fake_.requests(), "DELETE /apis/batch/v1/namespaces/ml/jobs/" + job.ref));
    // The Job went with its pods (propagationPolicy Background, which the fake insists on).
    CHECK(fake_.pods_of(job.ref) == json::array());
    CHECK(fake_.violations() == json::array());
  }

 private:
  FakeApiServer fake_;
};

}  // namespace

TEST_CASE("the runner contract, on the kubernetes runner") {
  KubernetesHarness harness;
  check_runner_contract(harness);
}

TEST_CASE("a strict create and a watch; the Job's condition reason reaches the log") {
  FakeApiServer fake;
  auto runner = runner_for(fake.config());
  auto failed = run_scenario(fake, *runner, "failure", "fail-1");
  REQUIRE(failed.ok());
  CHECK(failed->log_tail.find("BackoffLimitExceeded") != std::string::npos);
  auto late = run_scenario(fake, *runner, "deadline", "slow-1");
  REQUIRE(late.ok());
  CHECK(late->log_tail.find("DeadlineExceeded") != std::string::npos);
  const auto requests = fake.requests();
  CHECK(contains(requests, "POST /apis/batch/v1/namespaces/ml/jobs?fieldValidation=Strict"));
  CHECK(contains(requests, "watch=1"));
  CHECK(fake.violations() == json::array());
}

TEST_CASE("a deny-all NetworkPolicy comes before the Job and goes with it; none when declared") {
  FakeApiServer fake;
  auto runner = runner_for(fake.config());
  fake.scenario("success");
  auto spec = spec_for(fake, "netpol-1");
  REQUIRE(runner->prepare(spec).ok());
  auto job = runner->start(spec);
  REQUIRE(job.ok());
  CHECK(json::parse(fake.networkpolicies()) == json::array({job->ref}));
  REQUIRE(runner->wait(*job, {}).ok());
  runner->cleanup(*job);
  CHECK(json::parse(fake.networkpolicies()) == json::array());
  auto requests = fake.requests();
  const auto policy = std::find_if(requests.begin(), requests.end(), [](const std::string& r) {
    return r.rfind("POST /apis/networking.k8s.io/v1/namespaces/ml/networkpolicies", 0) == 0;
  });
  const auto created = std::find_if(requests.begin(), requests.end(), [](const std::string& r) {
    return r.rfind("POST /apis/batch/v1/namespaces/ml/jobs", 0) == 0;
  });
  REQUIRE(policy != requests.end());
  CHECK(policy < created);
  // A model that declares network: no policy (its pod is labelled reverify.network=allow).
  auto open = spec_for(fake, "netpol-2");
  open.network = true;
  REQUIRE(runner->prepare(open).ok());
  auto open_job = runner->start(open);
  REQUIRE(open_job.ok());
  CHECK(json::parse(fake.networkpolicies()) == json::array());
  REQUIRE(runner->wait(*open_job, {}).ok());
  runner->cleanup(*open_job);
  CHECK(fake.violations() == json::array());
}

TEST_CASE("preemption: the disrupted pod is ignored, the replacement's outcome and log count") {
  FakeApiServer fake;
  auto runner = runner_for(fake.config());
  auto exit = run_scenario(fake, *runner, "preemption", "pre-1");
  REQUIRE(exit.ok());
  CHECK(exit->exit_code == 0);
  // The replacement pod's own run time, from its container's startedAt and finishedAt.
  REQUIRE(exit->job_seconds.has_value());
  CHECK(*exit->job_seconds >= 0);
  CHECK(exit->log_tail.find("attempt 2: done") != std::string::npos);
  CHECK(exit->log_tail.find("attempt 1") == std::string::npos);
  CHECK(contains(fake.requests(), "/pods/" + kubernetes_job_name("pre-1") + "-00002/log"));
  CHECK(fake.violations() == json::array());
}

TEST_CASE(
    "410 Gone on a watch: the runner lists again instead of reusing the old resourceVersion") {
  for (const std::string scenario : {"expired", "expired-http"}) {
    CAPTURE(scenario);
    FakeApiServer fake;
    auto runner = runner_for(fake.config());
    auto exit = run_scenario(fake, *runner, scenario, "gone-1");
    REQUIRE(exit.ok());
    CHECK(exit->exit_code == 0);
    // list, watch (410), list again, watch ...
    const auto requests = fake.requests();
    int lists_after_first_watch = 0;
    bool watched = false;
    for (const auto& r : requests) {
      const bool is_job_get =
          r.rfind("GET /apis/batch/v1/namespaces/ml/jobs?labelSelector=", 0) == 0;
      if (is_job_get && r.find("watch=1") != std::string::npos)
        watched = true;
      else if (is_job_get && watched)
        ++lists_after_first_watch;
    }
    CHECK(lists_after_first_watch >= 1);
    CHECK(fake.violations() == json::array());
  }
}

TEST_CASE("a pod that can never pull its image is error:provision and the Job is deleted") {
  FakeApiServer fake;
  auto runner = runner_for(fake.config());
  auto exit = run_scenario(fake, *runner, "image-pull", "pull-1");
  REQUIRE_FALSE(exit.ok());
  CHECK(exit.error().code == ErrorCode::provision);
  CHECK(exit.error().message.find("ImagePullBackOff") != std::string::npos);
  CHECK(contains(fake.requests(),
                 "DELETE /apis/batch/v1/namespaces/ml/jobs/" + kubernetes_job_name("pull-1")));
  CHECK(fake.violations() == json::array());
}

TEST_CASE("a Job deleted behind the runner's back is error:runner-lost") {
  FakeApiServer fake;
  auto runner = runner_for(fake.config());
  auto exit = run_scenario(fake, *runner, "deleted", "del-1");
  REQUIRE_FALSE(exit.ok());
  CHECK(exit.error().code == ErrorCode::runner_lost);
  CHECK(exit.error().message.find("deleted") != std::string::npos);
  CHECK(fake.violations() == json::array());
}

TEST_CASE("the API server going away mid-run is error:runner-lost after the reconnect grace") {
  FakeApiServer fake;
  auto runner = runner_for(fake.config());
  fake.scenario("hang");
  auto spec = spec_for(fake, "lost-1");
  REQUIRE(runner->prepare(spec).ok());
  auto job = runner->start(spec);
  REQUIRE(job.ok());
  auto waiting = std::async(std::launch::async, [&] { return runner->wait(*job, nullptr); });
  // Until the runner is inside a watch (or wait() ended early, which the checks below report).
  while (!contains(fake.requests(), "watch=1") &&
         waiting.wait_for(std::chrono::milliseconds(20)) != std::future_status::ready) {
  }
  CHECK(fake.violations() == json::array());
  fake.stop();
  auto exit = waiting.get();
  REQUIRE_FALSE(exit.ok());
  CHECK(exit.error().code == ErrorCode::runner_lost);
}

TEST_CASE("starting a rebuild whose Job exists is a conflict, not a second Job") {
  FakeApiServer fake;
  fake.scenario("success");
  auto spec = spec_for(fake, "re-1");
  auto runner = runner_for(fake.config());
  REQUIRE(runner->prepare(spec).ok());
  REQUIRE(runner->start(spec).ok());
  auto again = runner_for(fake.config())->start(spec);
  REQUIRE_FALSE(again.ok());
  CHECK(again.error().code == ErrorCode::conflict);
  CHECK(fake.violations() == json::array());
}

TEST_CASE(
    "credentials and trust: a wrong token or an unknown CA fail prepare with error:provision") {
  FakeApiServer fake;
  auto spec = spec_for(fake, "auth-1");
  SUBCASE("wrong token") {
    auto config = fake.config();
    write_file(fake.dir() / "other-token", "wrong-service-account-token\n");
    config.token_file = fake.dir() / "other-token";
    auto status = runner_for(config)->prepare(spec);
    REQUIRE_FALSE(status.ok());
    CHECK(status.error().code == ErrorCode::provision);
    CHECK(status.error().message.find("401") != std::string::npos);
    CHECK(fake.violations().dump().find("bearer token") != std::string::npos);  // the fake saw it
  }
  SUBCASE("system trust store instead of the cluster CA") {
    auto config = fake.config();
    config.ca_file.clear();
    auto status = runner_for(config)->prepare(spec);
    REQUIRE_FALSE(status.ok());
    CHECK(status.error().code == ErrorCode::provision);
  }
  SUBCASE("a rotated token is picked up without a restart") {
    auto runner = runner_for(fake.config());
    REQUIRE(runner->prepare(spec).ok());
    write_file(fake.dir() / "token",
               "rotated-service-account-token\n");  // both sides read this file
    CHECK(runner->prepare(spec).ok());
    CHECK(fake.violations() == json::array());
  }
}

TEST_CASE("in-cluster: token, CA and namespace come from the service account folder") {
  FakeApiServer fake;
  const fs::path sa = fake.dir() / "serviceaccount";
  fs::create_directories(sa);
  fs::copy_file(fake.dir() / "token", sa / "token");
  fs::copy_file(fake.dir() / "cert.pem", sa / "ca.crt");
  write_file(sa / "namespace", "ml\n");
  auto config = fake.config();
  config.in_cluster = true;
  config.service_account_dir = sa;
  config.token_file.clear();
  config.ca_file.clear();
  config.namespace_name = "default";  // the service account's namespace wins
  auto runner = runner_for(config);
  auto exit = run_scenario(fake, *runner, "success", "incluster-1");
  REQUIRE(exit.ok());
  CHECK(exit->exit_code == 0);
  CHECK(fake.violations() == json::array());

  config.service_account_dir = fake.dir() / "missing";
  auto broken = make_kubernetes_runner(config);
  REQUIRE_FALSE(broken.ok());
  CHECK(broken.error().message.find("kubernetes.in_cluster") != std::string::npos);
}
