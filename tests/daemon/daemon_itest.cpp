// reverifyd as a process: --check-config, HTTP limits (malformed, oversized, slow requests) with
// the daemon still serving afterwards, bearer token on POST, a manual trigger verified end to
// end with its page, the gate, SIGTERM draining within the stop timeout, and the signed summary
// of each decided verdict (served, gated, exported, rotated by a reload); a registry folder moved
// (every version misses its inputs at once) held as one operator alert and banner, and the
// counter-case, an input every version shares rewritten, paging each owner.

#include <doctest/doctest.h>

#include <algorithm>

#include "attest/summary_check.hpp"
#include "core/hashing.hpp"
#include "store/store.hpp"
#include "tests/daemon/daemon_fixture.hpp"

using namespace reverify;
using namespace reverify::test;

namespace {

// The API token every daemon of these tests is started with (32+ token characters).
constexpr const char* kToken = "test-token-0123456789abcdef0123456789";

struct Setup {
  TempDir temp;
  DaemonUnderTest daemon;
  std::string commit;

  explicit Setup(int versions, double trainer_seconds, const std::string& extra_yaml = "",
                 const std::string& sync_interval = "1s") {
    commit = make_trainer_repo(temp.path / "trainer");
    for (int i = 1; i <= versions; ++i) {
      const std::string version = "1." + std::to_string(i);
      write_file(
          temp.path / "registry/slow" / version / "manifest.json",
          slow_manifest("slow", version, temp.path / "trainer", commit, trainer_seconds).dump(2));
    }
    write_file(temp.path / "api.token", std::string(kToken) + "\n");
    // A secret readable by other users fails --check-config (settings/config_check.hpp).
    fs::permissions(temp.path / "api.token", fs::perms::owner_read | fs::perms::owner_write);
    daemon.dir = temp.path;
    daemon.port = free_port();
    daemon.config = temp.path / "reverify.yaml";
    write_file(daemon.config,
               R"(state_dir: state
stop_timeout: 20s
api: {port: )" + std::to_string(daemon.port) +
                   R"(, token_file: api.token, request_timeout: 1s, max_body_bytes: 1024}
sources: [{name: local, kind: directory, root: registry}]
sync_interval: )" + sync_interval +
                   R"(
schedule: {per_cycle: 1, max_concurrent: 1, jitter: 0s, retry: {initial: 1s, max: 2s, max_attempts: 20}}
models: {default: {timeout: 2m}}
runner: {kind: process, process: {path_env: /usr/bin:/bin, kill_grace: 1s}}
pager:
  senders: {sink: {kind: file, path: pages.jsonl}}
  routes: [{owner: "*", senders: [sink]}]
)" + extra_yaml);
  }

  std::unique_ptr<Store> store() const {
    auto opened = Store::open(temp.path / "state/reverify.db", system_now, true);
    REQUIRE(opened.ok());
    return std::move(*opened);
  }

  // Polls the store until every verification has its verdict (or the limit passes).
  bool wait_all_done(std::size_t at_least, std::chrono::seconds limit) const {
    auto deadline = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < deadline) {
      if (fs::exists(temp.path / "state/reverify.db")) {
        auto s = store();
        auto all = s->verifications("", "", 1000);
        auto unfinished = s->unfinished();
        if (all.ok() && unfinished.ok() && all->size() >= at_least && unfinished->empty()) {
          return true;
        }
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    return false;
  }
};

}  // namespace

TEST_CASE("--check-config accepts a good config and names the path of a bad one") {
  Setup setup(1, 0.1);
  const auto& scratch = setup.temp.path;
  CHECK(run_reverifyd({"--config", setup.daemon.config.string(), "--check-config"}, scratch)
            .exit_code == 0);
  write_file(scratch / "bad.yaml", "schedule: {per_cycle: 0}\n");
  const Ran bad =
      run_reverifyd({"--config", (scratch / "bad.yaml").string(), "--check-config"}, scratch);
  CHECK(bad.exit_code == 2);
  CHECK(bad.err.find("schedule.per_cycle: must be >= 1, got 0") != std::string::npos);
}

TEST_CASE("malformed, oversized and slow requests get 4xx or are cut; the daemon keeps serving") {
  Setup setup(1, 0.1);
  setup.daemon.start();
  REQUIRE(setup.daemon.wait_ready());
  const auto port = setup.daemon.port;
  using std::chrono::milliseconds;

  auto garbage = raw_exchange(port, "THIS IS NOT HTTP\r\n\r\n", milliseconds(3000));
  CHECK(garbage.rfind("HTTP/1.1 400", 0) == 0);

  const std::string huge_header =
      "GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: " + std::string(20000, 'a') + "\r\n\r\n";
  CHECK(raw_exchange(port, huge_header, milliseconds(3000)).rfind("HTTP/1.1 431", 0) == 0);

  const std::string big_body =
      "POST /v1/verifications HTTP/1.1\r\nHost: x\r\nContent-Length: 5000\r\n"
      "Authorization: Bearer " +
      std::string(kToken) + "\r\n\r\n" + std::string(5000, '{');
  CHECK(raw_exchange(port, big_body, milliseconds(3000)).rfind("HTTP/1.1 413", 0) == 0);

  // Slow loris: half a request, then silence. The daemon closes it after request_timeout (1 s)
  // and sends nothing: recv returns because the peer closed, well before our 8 s wait.
  auto started = std::chrono::steady_clock::now();
  auto slow = raw_exchange(port, "GET /healthz HTTP/1.1\r\nHost: x\r\n", milliseconds(8000));
  CHECK(slow.empty());
  CHECK(std::chrono::steady_clock::now() - started < std::chrono::seconds(7));

  // Keep-alive: two pipelined requests on one connection, the second (HEAD) closing it. HEAD
  // gets the headers, Content-Length included, and no body.
  started = std::chrono::steady_clock::now();
  auto pipelined = raw_exchange(port,
                                "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"
                                "HEAD /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
                                milliseconds(8000));
  CHECK(std::chrono::steady_clock::now() - started < std::chrono::seconds(3));
  const auto second = pipelined.find("HTTP/1.1 200 OK", 1);
  REQUIRE(pipelined.rfind("HTTP/1.1 200 OK\r\n", 0) == 0);
  REQUIRE(second != std::string::npos);
  CHECK(pipelined.find("\"status\"", 0) < second);  // the GET's body
  CHECK(pipelined.find("Content-Length: ", second) != std::string::npos);
  CHECK(pipelined.substr(second).ends_with("\r\n\r\n"));  // HEAD: no body
  // HTTP/1.0 without keep-alive: answered in kind, then closed.
  CHECK(raw_exchange(port, "GET /healthz HTTP/1.0\r\n\r\n", milliseconds(3000))
            .rfind("HTTP/1.0 200 OK\r\n", 0) == 0);
  // An idle keep-alive connection is closed after request_timeout too.
  started = std::chrono::steady_clock::now();
  auto idle = raw_exchange(port, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n", milliseconds(8000));
  CHECK(idle.rfind("HTTP/1.1 200 OK\r\n", 0) == 0);
  CHECK(std::chrono::steady_clock::now() - started < std::chrono::seconds(7));

  CHECK(raw_exchange(port, "GET /v1/gate/..%2f..%2fetc/passwd HTTP/1.1\r\nHost: x\r\n\r\n",
                     milliseconds(3000))
            .rfind("HTTP/1.1 400", 0) == 0);
  CHECK(raw_exchange(port, "GET /v1/models/../../etc/versions/passwd HTTP/1.1\r\nHost: x\r\n\r\n",
                     milliseconds(3000))
            .rfind("HTTP/1.1 400", 0) == 0);

  auto health = get(setup.daemon.url() + "/healthz");
  REQUIRE(health.ok());
  CHECK(health->status == 200);
  CHECK(setup.daemon.pid > 0);
  CHECK(setup.daemon.wait_exit(milliseconds(10)) == -1);  // still running
}

TEST_CASE("manual trigger: 401 without or with a wrong token; with it, verified, paged, gated") {
  // per_cycle 1 with 2 versions: the cycle verifies one, the trigger the other.
  Setup setup(2, 0.2);
  setup.daemon.start();
  REQUIRE(setup.daemon.wait_ready());
  // Wait for the cycle to queue its one verification, then trigger the other version.
  std::string scheduled;
  for (int i = 0; i < 300 && scheduled.empty(); ++i) {
    auto list = get(setup.daemon.url() + "/v1/verifications");
    if (list.ok() && list->status == 200) {
      auto j = nlohmann::json::parse(list->body);
      if (!j["verifications"].empty())
        scheduled = j["verifications"][0]["version"];
    }
    if (scheduled.empty())
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  REQUIRE_FALSE(scheduled.empty());
  const std::string manual = scheduled == "1.1" ? "1.2" : "1.1";
  const std::string body = R"({"model": "slow", "version": ")" + manual + R"("})";
  auto post = [&](const std::string& token) {
    HttpRequest request;
    request.method = "POST";
    request.url = setup.daemon.url() + "/v1/verifications";
    request.body = body;
    request.bearer_token = token;
    return http_request(request);
  };
  CHECK(post("")->status == 401);
  CHECK(post("wrong-token")->status == 401);
  auto accepted = post(kToken);
  REQUIRE(accepted.ok());
  CHECK(accepted->status == 202);
  // The 202 came after the commit: the row is in the database now, with the id the answer gave.
  {
    const auto id = nlohmann::json::parse(accepted->body)["verification_id"].get<std::int64_t>();
    auto row = setup.store()->verification(id);
    REQUIRE(row.ok());
    REQUIRE(row->has_value());
    CHECK((*row)->version == manual);
    CHECK((*row)->trigger == VerificationTrigger::manual);
  }
  // A second trigger while the first is queued or running is refused.
  auto duplicate = post(kToken);
  REQUIRE(duplicate.ok());
  CHECK(duplicate->status == 409);
  REQUIRE(setup.wait_all_done(2, std::chrono::seconds(120)));

  auto s = setup.store();
  auto runs = s->verifications("slow", manual, 10);
  REQUIRE(runs.ok());
  REQUIRE_FALSE(runs->empty());
  CHECK(runs->back().trigger == VerificationTrigger::manual);
  INFO(runs->back().explanation);
  INFO(setup.daemon.log());
  CHECK(runs->back().cls.has_value());

  // The gate answers from the daemon's memory once the verdict is in.
  nlohmann::json gate;
  for (int i = 0; i < 50; ++i) {
    auto answer = get(setup.daemon.url() + "/v1/gate/slow/" + manual + "?max_age=1d");
    REQUIRE(answer.ok());
    gate = nlohmann::json::parse(answer->body);
    if (gate.contains("class"))
      break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  CHECK(gate["class"] == to_string(*runs->back().cls));
  CHECK(gate["ok"] == (*runs->back().cls == VerdictClass::passed));
  // The CLI gate agrees with the endpoint.
  CHECK(run_cli({"gate", "slow@" + manual, "--max-age", "1d", "--url", setup.daemon.url()},
                setup.temp.path)
            .exit_code == (gate["ok"] == true ? 0 : 1));
  CHECK(run_cli({"gate", "slow@9.9", "--url", setup.daemon.url()}, setup.temp.path).exit_code == 2);
  // --mode counts only a verdict of that mode: the manual run was a full rebuild, no steps one.
  CHECK(run_cli({"gate", "slow@" + manual, "--max-age", "1d", "--mode", "full", "--url",
                 setup.daemon.url()},
                setup.temp.path)
            .exit_code == (gate["ok"] == true ? 0 : 1));
  const Ran steps = run_cli(
      {"gate", "slow@" + manual, "--mode", "steps", "--url", setup.daemon.url()}, setup.temp.path);
  CHECK(steps.exit_code == 1);
  CHECK(steps.out.find("NOT verified: steps mode: never verified") != std::string::npos);
  CHECK(run_cli({"gate", "slow@" + manual, "--mode", "half", "--url", setup.daemon.url()},
                setup.temp.path)
            .exit_code == 2);

  // Every verdict recorded a page (resolve for a pass, trigger otherwise) for the file sink.
  for (int i = 0; i < 50 && s->delivery_counts()->pending > 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  CHECK(s->delivery_counts()->sent >= 2);
  CHECK(fs::exists(setup.temp.path / "pages.jsonl"));
}

TEST_CASE("a verdict `reverify run --config` records shows in the daemon within seconds") {
  // The registry is synced once an hour: only the daemon's watch on the store (SQLite's
  // data_version) can show the CLI's verdict this soon.
  Setup setup(1, 0.1, "", "1h");
  setup.daemon.start();
  REQUIRE(setup.daemon.wait_ready());
  REQUIRE(setup.wait_all_done(1, std::chrono::seconds(60)));  // the first cycle's verification
  REQUIRE(run_cli({"run", "slow@1.1", "--config", setup.daemon.config.string()}, setup.temp.path)
              .exit_code == 0);
  const auto newest = setup.store()->verifications("slow", "1.1", 1);
  REQUIRE(newest.ok());
  REQUIRE(newest->size() == 1);
  const auto& row = newest->front();
  REQUIRE(row.trigger == VerificationTrigger::cli);
  const auto recorded = std::chrono::steady_clock::now();
  nlohmann::json last_verdict;
  while (std::chrono::steady_clock::now() - recorded < std::chrono::seconds(10)) {
    auto version = get(setup.daemon.url() + "/v1/models/slow/versions/1.1");
    REQUIRE(version.ok());
    last_verdict = nlohmann::json::parse(version->body)["last_verdict"];
    if (last_verdict.is_object() && last_verdict["id"] == row.id)
      break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  INFO(last_verdict.dump());
  INFO(setup.daemon.log());
  CHECK(last_verdict["id"] == row.id);  // within 10 s (the sync comes in an hour)
  auto listed = get(setup.daemon.url() + "/v1/verifications/" + std::to_string(row.id));
  REQUIRE(listed.ok());
  CHECK(listed->status == 200);
  CHECK(nlohmann::json::parse(listed->body)["trigger"] == "cli");
}

TEST_CASE("SIGTERM drains: the running verification finishes, then the daemon exits 0") {
  Setup setup(1, 3.0);
  setup.daemon.start();
  REQUIRE(setup.daemon.wait_ready());
  // Wait until the cycle's verification is running.
  bool running = false;
  std::string last_list;
  for (int i = 0; i < 300 && !running; ++i) {
    auto list = get(setup.daemon.url() + "/v1/verifications");
    if (list.ok() && list->status == 200) {
      last_list = list->body;
      // Named: a range-for over a member of the temporary parse() result would dangle.
      const auto body = nlohmann::json::parse(list->body);
      for (const auto& v : body["verifications"]) {
        running = running || v["state"] == "running";
      }
    }
    if (!running)
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  INFO("last /v1/verifications: " << last_list);
  INFO(setup.daemon.log());
  REQUIRE(running);
  ::kill(setup.daemon.pid, SIGTERM);
  const int status = setup.daemon.wait_exit(std::chrono::seconds(25));  // stop_timeout 20 s
  INFO(setup.daemon.log());
  CHECK(status == 0);
  auto s = setup.store();
  auto unfinished = s->unfinished();
  REQUIRE(unfinished.ok());
  CHECK(unfinished->empty());
  auto all = s->verifications("", "", 10);
  REQUIRE(all.ok());
  REQUIRE(all->size() == 1);
  CHECK(all->front().cls.has_value());
}

TEST_CASE("signed summaries from a daemon: served, linked, gated, exported, rotated by a reload") {
  const std::string attestation =
      "attestation: {key_file: attest.pem, verifier_id: 'https://reverify.example/daemon'}\n";
  Setup setup(1, 0.1, attestation);
  const fs::path dir = setup.temp.path;
  const auto first_key = Ed25519SigningKey::generate();
  write_file(dir / "attest.pem", first_key.private_pem());
  fs::permissions(dir / "attest.pem", fs::perms::owner_read | fs::perms::owner_write);
  write_file(dir / "first.pub", first_key.public_key().pem());
  setup.daemon.start();
  REQUIRE(setup.daemon.wait_ready());
  REQUIRE(setup.wait_all_done(1, std::chrono::seconds(120)));
  const auto cls = *setup.store()->verifications("slow", "1.1", 1)->front().cls;
  INFO("verdict " << to_string(cls) << "; log: " << setup.daemon.log());
  REQUIRE((cls == VerdictClass::passed || is_failure(cls)));
  const int accepted = cls == VerdictClass::passed ? 0 : 1;  // a FAILED summary: valid, refused

  // Served from the daemon's memory once its read model has the verdict.
  const std::string path = "/v1/attestations/slow/1.1";
  Result<HttpResponse> served = get(setup.daemon.url() + path);
  for (int i = 0; i < 100 && served.ok() && served->status != 200; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    served = get(setup.daemon.url() + path);
  }
  REQUIRE(served.ok());
  REQUIRE(served->status == 200);
  CHECK(served->header("content-type") == "application/vnd.in-toto.vsa+dsse");
  const std::string first_id = served->header("x-reverify-verification-id");
  write_file(dir / "served.json", served->body);

  CHECK(run_cli({"attest", "verify", (dir / "served.json").string(), "--key",
                 (dir / "first.pub").string(), "--model", "slow@1.1", "--max-age", "1d"},
                dir)
            .exit_code == accepted);
  // Straight from the daemon's URL: the transport is not trusted, the key is.
  CHECK(run_cli({"attest", "verify", setup.daemon.url() + path, "--key",
                 (dir / "first.pub").string(), "--model", "slow@1.1"},
                dir)
            .exit_code == accepted);
  // The second implementation agrees on the signature.
  CHECK(run_program({"/usr/bin/python3", (source_dir() / "tests/attest/dsse_reference.py").string(),
                     "verify", (dir / "served.json").string(), (dir / "first.pub").string()},
                    dir)
            .exit_code == 0);
  // The gate with --attestation trusts the key, not the transport.
  const std::vector<std::string> gate = {"gate",  "slow@1.1",         "--max-age",     "1d",
                                         "--url", setup.daemon.url(), "--attestation", "--key"};
  auto gate_with_key = [&](const fs::path& key) {
    auto args = gate;
    args.push_back(key.string());
    return run_cli(args, dir).exit_code;
  };
  CHECK(gate_with_key(dir / "first.pub") == accepted);
  write_file(dir / "stranger.pub", Ed25519SigningKey::generate().public_key().pem());
  CHECK(gate_with_key(dir / "stranger.pub") == 2);
  // The CLI exports the same bytes from the store.
  CHECK(run_cli({"attest", "export", "slow@1.1", "--config", setup.daemon.config.string(), "--out",
                 (dir / "exported.json").string()},
                dir)
            .exit_code == 0);
  CHECK(read_file(dir / "exported.json") == served->body);
  // The version's page links it; the policy document hashes to the summary's policy digest.
  CHECK(get(setup.daemon.url() + "/models/slow/1.1")
            ->body.find("href=\"/v1/attestations/slow/1.1\"") != std::string::npos);
  auto policy = get(setup.daemon.url() + path + "/policy");
  REQUIRE(policy->status == 200);
  SummaryExpectations expected;
  expected.now = system_now();
  expected.model = ModelVersion{"slow", "1.1"};
  expected.max_age_s = 86'400;
  auto checked = check_summary(served->body, {first_key.public_key()}, expected);
  REQUIRE(checked.ok());
  CHECK(checked->acceptable() == (accepted == 0));
  CHECK(checked->summary.policy.digest.at("sha256") ==
        sha256_hex(policy->body.substr(0, policy->body.size() - 1)));

  // Rotation: a new key file and a reload; the next summary is signed with the new key, the
  // first one is still served by its id and still verifies with the old public key.
  const auto second_key = Ed25519SigningKey::generate();
  write_file(dir / "attest2.pem", second_key.private_pem());
  fs::permissions(dir / "attest2.pem", fs::perms::owner_read | fs::perms::owner_write);
  write_file(dir / "second.pub", second_key.public_key().pem());
  std::string config = read_file(setup.daemon.config);
  config.replace(config.find("attest.pem"), std::string("attest.pem").size(), "attest2.pem");
  write_file(setup.daemon.config, config);
  const auto log_before_reload = setup.daemon.log().size();
  ::kill(setup.daemon.pid, SIGHUP);
  REQUIRE(setup.daemon.wait_log("config reloaded", log_before_reload));
  HttpRequest trigger;
  trigger.method = "POST";
  trigger.url = setup.daemon.url() + "/v1/verifications";
  trigger.body = R"({"model": "slow", "version": "1.1"})";
  trigger.bearer_token = kToken;
  REQUIRE(http_request(trigger)->status == 202);
  REQUIRE(setup.wait_all_done(2, std::chrono::seconds(120)));
  served = get(setup.daemon.url() + path);
  for (int i = 0; i < 100 && served->header("x-reverify-verification-id") == first_id; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    served = get(setup.daemon.url() + path);
  }
  REQUIRE(served->header("x-reverify-verification-id") != first_id);
  CHECK(served->header("x-reverify-key-id") == second_key.key_id());
  CHECK(check_summary(served->body, {second_key.public_key()}, {}).ok());
  CHECK_FALSE(check_summary(served->body, {first_key.public_key()}, {}).ok());
  auto old = get(setup.daemon.url() + path + "?verification=" + first_id);
  REQUIRE(old->status == 200);
  CHECK(check_summary(old->body, {first_key.public_key()}, {}).ok());
}

namespace {

// The registry's versions read their eval set from data/eval.csv beside the registry, by a URI
// relative to the manifest (as the docs recommend), and the daemon verifies all of them in its
// first cycle without retrying an error.
void share_eval_set(Setup& setup, int versions) {
  const std::string eval = "id,label\na,1\nb,0\n";
  write_file(setup.temp.path / "data/eval.csv", eval);
  for (int i = 1; i <= versions; ++i) {
    const fs::path path =
        setup.temp.path / "registry/slow" / ("1." + std::to_string(i)) / "manifest.json";
    auto manifest = nlohmann::json::parse(read_file(path));
    manifest["evaluation"]["set"] = {{"uri", "../../../data/eval.csv"},
                                     {"sha256", sha256_hex(eval)}};
    write_file(path, manifest.dump(2));
  }
  std::string config = read_file(setup.daemon.config);
  for (const auto& [from, to] :
       {std::pair<std::string, std::string>{"per_cycle: 1", "per_cycle: 9"},
        {"max_attempts: 20", "max_attempts: 1"}}) {
    config.replace(config.find(from), from.size(), to);
  }
  write_file(setup.daemon.config, config);
}

void trigger(const Setup& setup, const std::string& version) {
  HttpRequest request;
  request.method = "POST";
  request.url = setup.daemon.url() + "/v1/verifications";
  request.body = R"({"model": "slow", "version": ")" + version + R"("})";
  request.bearer_token = kToken;
  auto answer = http_request(request);
  REQUIRE(answer.ok());
  REQUIRE(answer->status == 202);
}

// Every page the file sink received, once the outbox has none pending.
std::vector<nlohmann::json> delivered_pages(const Setup& setup) {
  auto s = setup.store();
  for (int i = 0; i < 100 && s->delivery_counts()->pending > 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  std::vector<nlohmann::json> pages;
  std::istringstream lines(read_file(setup.temp.path / "pages.jsonl"));
  for (std::string line; std::getline(lines, line);)
    pages.push_back(nlohmann::json::parse(line));
  return pages;
}

// The pages about verifications after `after`: (dedup key prefix, action) -> how many.
std::size_t count_pages(const std::vector<nlohmann::json>& pages, std::int64_t after,
                        const std::string& key_prefix, const std::string& action) {
  return std::count_if(pages.begin(), pages.end(), [&](const nlohmann::json& p) {
    return p["verification_id"].get<std::int64_t>() > after &&
           p["dedup_key"].get<std::string>().rfind(key_prefix, 0) == 0 && p["action"] == action;
  });
}

// Restarts the daemon on the config with `from` replaced by `to`.
void restart_with(Setup& setup, const std::string& from, const std::string& to) {
  ::kill(setup.daemon.pid, SIGTERM);
  REQUIRE(setup.daemon.wait_exit(std::chrono::seconds(30)) == 0);
  std::string config = read_file(setup.daemon.config);
  config.replace(config.find(from), from.size(), to);
  write_file(setup.daemon.config, config);
  setup.daemon.start();
  REQUIRE(setup.daemon.wait_ready());
}

std::string status_page(const Setup& setup) {
  auto page = get(setup.daemon.url() + "/");
  REQUIRE(page.ok());
  return page->body;
}

// Starts the daemon on `versions` versions sharing one eval set; its first cycle passes each.
void start_and_pass(Setup& setup, int versions) {
  share_eval_set(setup, versions);
  setup.daemon.start();
  REQUIRE(setup.daemon.wait_ready());
  REQUIRE(setup.wait_all_done(std::size_t(versions), std::chrono::seconds(120)));
  for (int i = 1; i <= versions; ++i) {
    REQUIRE(setup.store()->verifications("slow", "1." + std::to_string(i), 1)->front().cls ==
            VerdictClass::passed);
  }
}

}  // namespace

TEST_CASE("a moved registry pages nobody: one operator alert, one banner, the gate as before") {
  Setup setup(3, 0.2);
  start_and_pass(setup, 3);

  // The registry folder moves (its manifests' relative URIs now miss data/), and the source is
  // pointed at its new place.
  fs::create_directories(setup.temp.path / "moved");
  fs::rename(setup.temp.path / "registry", setup.temp.path / "moved/registry");
  restart_with(setup, "root: registry", "root: moved/registry");
  for (const char* version : {"1.1", "1.2", "1.3"})
    trigger(setup, version);
  REQUIRE(setup.wait_all_done(6, std::chrono::seconds(120)));
  INFO(setup.daemon.log());
  for (const char* version : {"1.1", "1.2", "1.3"}) {
    const auto latest = setup.store()->verifications("slow", version, 1)->front();
    CHECK(latest.cls == VerdictClass::error_infra);
    CHECK(latest.explanation.find("held as a platform condition") != std::string::npos);
    // The gate answers from the last conclusive verdict, the pass.
    auto gate = nlohmann::json::parse(get(setup.daemon.url() + "/v1/gate/slow/" + version)->body);
    CHECK(gate["class"] == "passed");
    CHECK(gate["ok"] == true);
  }
  auto pages = delivered_pages(setup);
  CHECK(count_pages(pages, 3, "reverify/slow/", "trigger") == 0);
  CHECK(count_pages(pages, 3, "reverify/source/local", "trigger") == 1);
  std::string page = status_page(setup);
  CHECK(page.find("id=\"platform-local\"") != std::string::npos);
  CHECK(page.find("Registry source <code>local</code> moved") != std::string::npos);

  // The data moves too: the next verification finds its inputs, passes, and clears it.
  fs::rename(setup.temp.path / "data", setup.temp.path / "moved/data");
  trigger(setup, "1.1");
  REQUIRE(setup.wait_all_done(7, std::chrono::seconds(120)));
  CHECK(setup.store()->verifications("slow", "1.1", 1)->front().cls == VerdictClass::passed);
  pages = delivered_pages(setup);
  CHECK(count_pages(pages, 3, "reverify/source/local", "trigger") == 1);
  CHECK(count_pages(pages, 3, "reverify/source/local", "resolve") == 1);
  CHECK(status_page(setup).find("id=\"platform-local\"") == std::string::npos);
}

TEST_CASE("the eval set every version shares rewritten: each fails and pages its owner") {
  Setup setup(3, 0.2);
  start_and_pass(setup, 3);

  write_file(setup.temp.path / "data/eval.csv", "id,label\na,1\nb,1\n");  // a backfill
  for (const char* version : {"1.1", "1.2", "1.3"})
    trigger(setup, version);
  REQUIRE(setup.wait_all_done(6, std::chrono::seconds(120)));
  INFO(setup.daemon.log());
  for (const char* version : {"1.1", "1.2", "1.3"}) {
    CHECK(setup.store()->verifications("slow", version, 1)->front().cls ==
          VerdictClass::failed_input_drift);
    auto gate = nlohmann::json::parse(get(setup.daemon.url() + "/v1/gate/slow/" + version)->body);
    CHECK(gate["ok"] == false);
  }
  const auto pages = delivered_pages(setup);
  CHECK(count_pages(pages, 3, "reverify/slow/", "trigger") == 3);
  CHECK(count_pages(pages, 0, "reverify/source/", "trigger") == 0);
  CHECK(status_page(setup).find("id=\"platform-") == std::string::npos);
}

TEST_CASE("a registry of one version: held when it moved, its owner's when its data went away") {
  Setup setup(1, 0.2);
  start_and_pass(setup, 1);
  auto latest = [&] { return setup.store()->verifications("slow", "1.1", 1)->front(); };

  // Its eval set gone from the place the pass found it: the owner's failure.
  fs::rename(setup.temp.path / "data", setup.temp.path / "data.away");
  trigger(setup, "1.1");
  REQUIRE(setup.wait_all_done(2, std::chrono::seconds(120)));
  CHECK(latest().cls == VerdictClass::failed_input_drift);
  CHECK(count_pages(delivered_pages(setup), 1, "reverify/slow/", "trigger") == 1);
  fs::rename(setup.temp.path / "data.away", setup.temp.path / "data");
  trigger(setup, "1.1");
  REQUIRE(setup.wait_all_done(3, std::chrono::seconds(120)));
  REQUIRE(latest().cls == VerdictClass::passed);

  // The registry folder moved, and the source pointed there: a platform condition.
  fs::create_directories(setup.temp.path / "moved");
  fs::rename(setup.temp.path / "registry", setup.temp.path / "moved/registry");
  restart_with(setup, "root: registry", "root: moved/registry");
  trigger(setup, "1.1");
  REQUIRE(setup.wait_all_done(4, std::chrono::seconds(120)));
  INFO(setup.daemon.log());
  CHECK(latest().cls == VerdictClass::error_infra);
  const auto pages = delivered_pages(setup);
  CHECK(count_pages(pages, 3, "reverify/slow/", "trigger") == 0);
  CHECK(count_pages(pages, 3, "reverify/source/local", "trigger") == 1);
  CHECK(status_page(setup).find("id=\"platform-local\"") != std::string::npos);
  auto gate = nlohmann::json::parse(get(setup.daemon.url() + "/v1/gate/slow/1.1")->body);
  CHECK(gate["class"] == "passed");
}
