// Fault injection (issue #15): reverifyd as a real process (process runner, real git checkouts of
// a slow trainer, a webhook receiver on loopback) under the faults it must survive:
//   - kill -9 at 12 points of a verification's life, each observed from outside before the kill
//     (the 202, the store's rows, the trainer's marker files, the receiver holding a request),
//     then a restart;
//   - SIGHUP with an empty, a truncated, a duplicate-key, a directory and restart-only configs;
//   - a receiver that answers later than the sender's timeout;
//   - API tokens at every length boundary, at start and on reload, and a reload after the token
//     file became world-readable (it warns as a start does);
//   - one owner per state_dir: a second reverifyd on it, a `reverify run` owning its row while
//     the daemon starts (then killed in its job);
//   - history that survives its disk: a store cut to 0 bytes or deleted with the state folder
//     still showing history (refused, and its backup refused; then started over, numbering on),
//     and a restore from a `reverify backup` taken beside the running daemon;
//   - what operators do to a state_dir: reverifyd.lock or a `reverify run`'s lock file deleted
//     while held, reverify.db put back from an older copy, cut under a running daemon, damaged,
//     a restore from a file that is no store, and a schedule.cron that never fires;
//   - fail closed: a release whose predictions hold a NaN (hash updated), a gate asked
//     `?max-age=`, two Authorization headers and a lowercase bearer scheme, a "files" snapshot
//     served over http (whole, changed, gone), a run.workdir that climbs out of its checkout.
// After every fault the same invariants are checked over the whole store:
//   - every acknowledged trigger (a 202 and its verification_id) has its verdict;
//   - once settled, no verification is left queued or running;
//   - every verdict has exactly one page row, or evidence.no_page saying why it has none;
//   - every page the store marks sent reached the receiver, every copy of it under one
//     Idempotency-Key (which the receiver merges: pager/notifier.hpp, ReceiverDedup), and no copy
//     arrived after the store had recorded that page sent: a duplicate from reverify's side. A
//     copy sent again because the daemon died after the receiver answered and before it recorded
//     the answer (or because the answer came after the sender's timeout) is counted apart: no
//     sender can close that window; the key lets the receiver merge it;
//   - no page key ever reaches the receiver with another page than the one it first named.
// The last test case prints the summary table that docs/faults.md "Faults" reproduces.

#include <doctest/doctest.h>

#include <condition_variable>
#include <fstream>
#include <iostream>
#include <map>
#include <mutex>
#include <set>

#include <sqlite3.h>

#include "attest/ed25519.hpp"
#include "core/hashing.hpp"
#include "store/store.hpp"
#include "tests/daemon/daemon_fixture.hpp"
#include "tests/pager/http_receiver.hpp"
#include "tests/support/digits_trainer.hpp"
#include "tests/support/marked_processes.hpp"
#include "tests/support/tmpfs_mount.hpp"

using namespace reverify;
using namespace reverify::test;
using std::chrono::milliseconds;
using std::chrono::seconds;

namespace {

constexpr const char* kFaultsToken = "fault-token-0123456789abcdef0123456789";

// The page id in a page key ("<store id>-<page id>-<time>", pager/notifier.hpp); "" if none.
std::string page_id_in(const std::string& key) {
  const auto first = key.find('-');
  if (first == std::string::npos)
    return {};
  return key.substr(first + 1, key.find('-', first + 1) - first - 1);
}

// Every job this suite starts carries REVERIFY_FAULTS_MARKER=<this value> in its environment, and
// so does every process it starts: after the suite none may be left (its last case looks).
const std::string& job_marker() {
  static const std::string marker =
      "faults-" + std::to_string(::getpid()) + "-" +
      std::to_string(std::chrono::system_clock::now().time_since_epoch().count());
  return marker;
}

// One row of the summary table.
struct FaultRow {
  FaultRow(std::string fault_name, int faults) : fault(std::move(fault_name)), injected(faults) {}
  std::string fault;
  int injected = 0, survived = 0;
  int lost_triggers = 0, verdicts_without_page_decision = 0, duplicate_pages = 0;
  int resent_copies = 0;  // the same page again, same key, while the store had it pending
  std::string note;
};
std::vector<FaultRow>& table() {
  static std::vector<FaultRow> rows;
  return rows;
}

// A webhook receiver the test steers: it acknowledges (2xx), refuses (503), holds a request until
// released (then answers 503: the daemon that sent it is gone), or answers late.
class Receiver {
 public:
  enum class Mode { acknowledge, refuse, hold };

  // `recorded_sent(page)` reads the daemon's store when a copy arrives.
  explicit Receiver(std::function<bool(const std::string&)> recorded_sent)
      : recorded_sent_(std::move(recorded_sent)),
        server_([this](const ReceivedRequest& r) { return on_request(r); }) {}

  std::string url() const { return server_.url("/hook"); }
  void set_mode(Mode mode) {
    {
      std::lock_guard lock(mutex_);
      mode_ = mode;
    }
    changed_.notify_all();
  }
  void set_delay(milliseconds delay) {
    std::lock_guard lock(mutex_);
    delay_ = delay;
  }
  bool wait_held(seconds limit) {
    std::unique_lock lock(mutex_);
    return changed_.wait_for(lock, limit, [this] { return holding_; });
  }
  // By page key ("<store id>-<page id>-<time>", pager/notifier.hpp): copies answered 2xx, and the
  // Idempotency-Key of every copy received.
  std::map<std::string, int> acknowledged() {
    std::lock_guard lock(mutex_);
    return acknowledged_;
  }
  std::map<std::string, std::set<std::string>> keys() {
    std::lock_guard lock(mutex_);
    return keys_;
  }
  int copies(const std::string& page) {
    std::lock_guard lock(mutex_);
    return copies_[page];
  }
  int copies_after_recorded_sent() {
    std::lock_guard lock(mutex_);
    return copies_after_sent_;
  }
  // Copies whose key an earlier, different page already came with: two incidents merged.
  int keys_naming_two_pages() {
    std::lock_guard lock(mutex_);
    return keys_naming_two_pages_;
  }

 private:
  Reply on_request(const ReceivedRequest& request) {
    const auto body = nlohmann::json::parse(request.body, nullptr, false);
    const std::string page = body.is_object() ? body.value("page_key", std::string()) : "";
    const bool already_sent = recorded_sent_(page);
    // What one page is: every copy under its key must be the same page, never another incident.
    const std::string identity = body.is_object() ? body.value("dedup_key", std::string()) + " " +
                                                        body.value("action", std::string()) + " " +
                                                        body.value("created_at", std::string())
                                                  : std::string();
    std::unique_lock lock(mutex_);
    copies_after_sent_ += already_sent;
    if (const auto [seen, first] = identity_of_.emplace(page, identity); !first)
      keys_naming_two_pages_ += seen->second != identity;
    ++copies_[page];
    keys_[page].insert(request.idempotency_key);
    if (delay_.count() > 0) {
      const auto delay = delay_;
      lock.unlock();
      std::this_thread::sleep_for(delay);
      lock.lock();
    }
    if (mode_ == Mode::hold) {
      holding_ = true;
      changed_.notify_all();
      changed_.wait(lock, [this] { return mode_ != Mode::hold; });
      holding_ = false;
      return {503, "{}"};
    }
    if (mode_ == Mode::refuse)
      return {503, "{}"};
    ++acknowledged_[page];
    return {200, "{}"};
  }

  std::function<bool(const std::string&)> recorded_sent_;
  std::mutex mutex_;
  std::condition_variable changed_;
  Mode mode_ = Mode::acknowledge;
  milliseconds delay_{0};
  bool holding_ = false;
  int copies_after_sent_ = 0, keys_naming_two_pages_ = 0;
  std::map<std::string, std::string> identity_of_;
  std::map<std::string, int> acknowledged_, copies_;
  std::map<std::string, std::set<std::string>> keys_;
  HttpReceiver server_;  // last: its thread calls on_request until it is destroyed
};

// A daemon over a registry of slow-trainer versions "slow@<version>", paging the Receiver.
struct Lab {
  TempDir temp;
  DaemonUnderTest daemon;
  Receiver receiver{[this](const std::string& page) { return recorded_sent(page); }};
  std::string commit;
  int duplicates_seen = 0, resent_seen = 0;  // totals at the last check_invariants
  std::vector<std::int64_t> acknowledged;    // verification ids of 202 answers

  Lab() {
    commit = make_trainer_repo(temp.path / "trainer");
    shared_with_jobs(temp.path / "markers");
    write_file(temp.path / "api.token", std::string(kFaultsToken) + "\n");
    fs::permissions(temp.path / "api.token", fs::perms::owner_read | fs::perms::owner_write);
    daemon.dir = temp.path;
    daemon.port = free_port();
    daemon.config = temp.path / "reverify.yaml";
    write_file(daemon.config, config_text());
  }

  std::string config_text(const std::string& api_extra = "") const {
    return "state_dir: state\nstop_timeout: 20s\napi: {port: " + std::to_string(daemon.port) +
           ", token_file: api.token" + api_extra + R"(}
sources: [{name: local, kind: directory, root: registry}]
sync_interval: 1s
schedule: {per_cycle: 1, max_concurrent: 2, jitter: 0s, retry: {initial: 3s, max: 3s, max_attempts: 20}}
models: {default: {timeout: 2m}}
)" + runner_line() +
           R"(
pager:
  retry: {initial: 1s, max_backoff: 1s, max_attempts: 100}
  senders: {hook: {kind: webhook, timeout: 10s, url: ')" +
           receiver.url() + R"('}}
  routes: [{owner: "*", senders: [hook]}]
)";
  }

  // The process runner as this suite runs it; the extras add keys to runner and to
  // runner.process. The trainers write their marker files in markers/, which the job sandbox
  // shows them writable.
  std::string runner_line(const std::string& runner_extra = "",
                          const std::string& process_extra = "") const {
    return "runner: {kind: process" + runner_extra +
           ", process: {path_env: /usr/bin:/bin, kill_grace: 1s, sandbox: {writable: [" +
           (temp.path / "markers").string() + "]}" + process_extra + "}}";
  }

  // A folder the jobs write into: they run as another uid (65534) when this suite runs as root.
  static void shared_with_jobs(const fs::path& folder) {
    fs::create_directories(folder);
    fs::permissions(folder, fs::perms::all);
  }

  // A version whose trainer runs `seconds`, leaves marker files in markers/<version>/ (started,
  // finished) and, with fail_once, exits 3 on its first run (an error:job verdict and a retry).
  void add_version(const std::string& version, double seconds, bool fail_once = false) {
    auto manifest = slow_manifest("slow", version, temp.path / "trainer", commit, seconds);
    const auto markers = temp.path / "markers" / version;
    shared_with_jobs(markers);
    manifest["environment"]["env"]["MARKER_DIR"] = markers.string();
    manifest["environment"]["env"]["REVERIFY_FAULTS_MARKER"] = job_marker();
    if (fail_once)
      manifest["environment"]["env"]["FAIL_ONCE"] = "1";
    write_file(temp.path / "registry/slow" / version / "manifest.json", manifest.dump(2));
  }
  bool marker(const std::string& version, const std::string& name) const {
    return fs::exists(temp.path / "markers" / version / name);
  }

  // Whether the store already says the page with this key was delivered to the webhook
  // (read-only, beside the daemon's own connection: WAL). A page of another store is not sent by
  // this one.
  bool recorded_sent(const std::string& page_key) const {
    const std::string page_id = page_id_in(page_key);
    if (page_id.empty())
      return false;
    sqlite3* db = nullptr;
    bool sent = false;
    if (sqlite3_open_v2((temp.path / "state/reverify.db").c_str(), &db, SQLITE_OPEN_READONLY,
                        nullptr) == SQLITE_OK) {
      sqlite3_busy_timeout(db, 2000);
      sqlite3_stmt* q = nullptr;
      if (sqlite3_prepare_v2(db,
                             "SELECT d.state FROM page_deliveries d JOIN pages p "
                             "ON p.id = d.page_id WHERE d.page_id = ?1 AND p.store_id = ?2",
                             -1, &q, nullptr) == SQLITE_OK) {
        sqlite3_bind_int64(q, 1, std::stoll(page_id));
        sqlite3_bind_text(q, 2, page_key.substr(0, page_key.find('-')).c_str(), -1,
                          SQLITE_TRANSIENT);
        sent = sqlite3_step(q) == SQLITE_ROW &&
               std::string(reinterpret_cast<const char*>(sqlite3_column_text(q, 0))) == "sent";
      }
      sqlite3_finalize(q);
    }
    sqlite3_close(db);
    return sent;
  }

  std::unique_ptr<Store> store() const {
    auto opened = Store::open(temp.path / "state/reverify.db", system_now, true);
    REQUIRE(opened.ok());
    return std::move(*opened);
  }

  // Started (ready: its state read from the store) and its first registry sync listed the
  // versions.
  void start() {
    daemon.start();
    INFO(daemon.log());
    REQUIRE(daemon.wait_ready());
    REQUIRE(wait_for(
        [&] {
          auto models = get(daemon.url() + "/v1/models");
          if (!models.ok() || models->status != 200)
            return false;
          auto body = nlohmann::json::parse(models->body, nullptr, false);
          return body.is_object() && body.contains("models") && !body["models"].empty();
        },
        milliseconds(30'000), milliseconds(50)));
  }
  void restart() {
    daemon.kill9();
    start();
  }
  // SIGTERM: true when it drained and exited 0.
  bool stop() {
    ::kill(daemon.pid, SIGTERM);
    return daemon.wait_exit(seconds(30)) == 0;
  }

  Result<HttpResponse> post(const std::string& body,
                            const std::string& token = kFaultsToken) const {
    HttpRequest request;
    request.method = "POST";
    request.url = daemon.url() + "/v1/verifications";
    request.body = body;
    request.bearer_token = token;
    return http_request(request);
  }
  // A manual trigger; a 202's verification id joins `acknowledged`.
  std::optional<std::int64_t> trigger(const std::string& version) {
    auto answer = post(R"({"model": "slow", "version": ")" + version + R"("})");
    if (!answer.ok() || answer->status != 202)
      return std::nullopt;
    const auto id = nlohmann::json::parse(answer->body)["verification_id"].get<std::int64_t>();
    acknowledged.push_back(id);
    return id;
  }

  std::optional<VerificationRow> row(std::int64_t id) const {
    if (!fs::exists(temp.path / "state/reverify.db"))
      return std::nullopt;
    auto found = store()->verification(id);
    return found.ok() && found->has_value() ? std::optional(**found) : std::nullopt;
  }

  template <class Predicate>
  static bool wait_for(Predicate done, milliseconds limit, milliseconds step = milliseconds(20)) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < deadline) {
      if (done())
        return true;
      std::this_thread::sleep_for(step);
    }
    return done();
  }

  // Settled: nothing queued or running, every acknowledged trigger decided, no page pending.
  bool settle(seconds limit = seconds(120)) const {
    return wait_for(
        [&] {
          if (!fs::exists(temp.path / "state/reverify.db"))
            return false;
          auto s = store();
          auto unfinished = s->unfinished();
          auto counts = s->delivery_counts();
          if (!unfinished.ok() || !unfinished->empty() || !counts.ok() || counts->pending != 0)
            return false;
          return std::all_of(acknowledged.begin(), acknowledged.end(), [&](std::int64_t id) {
            auto r = row(id);
            return r && r->state == VerificationState::done;
          });
        },
        limit, milliseconds(200));
  }

  // Starts and waits until the store holds `rows` verifications: the month's cycle is planned
  // once, at the first start (per_cycle 1), and a fail-once version's error verdict comes with
  // its queued retry.
  void start_until_rows(std::size_t rows) {
    start();
    REQUIRE(wait_for(
        [&] {
          if (!fs::exists(temp.path / "state/reverify.db"))
            return false;
          auto all = store()->verifications("", "", 10);
          return all.ok() && all->size() >= rows;
        },
        milliseconds(60'000), milliseconds(100)));
  }
  // The first cycle's verification decided, so every trigger after it finds its version idle.
  void start_and_settle_first_cycle() {
    start_until_rows(1);
    REQUIRE(settle());
  }

  // The invariants, counted into `row` (and checked).
  void check_invariants(FaultRow& out) {
    auto s = store();
    for (auto id : acknowledged) {
      auto r = row(id);
      INFO("acknowledged verification " << id);
      CHECK((r && r->cls.has_value()));
      if (!r || !r->cls)
        ++out.lost_triggers;
    }
    auto all = s->verifications("", "", 100'000);
    REQUIRE(all.ok());
    // Page rows per verification, straight from SQLite, and each page's state by its key.
    std::map<std::int64_t, int> pages_of;
    std::map<std::string, std::string> delivery_state;
    {
      sqlite3* db = nullptr;
      REQUIRE(sqlite3_open_v2((temp.path / "state/reverify.db").c_str(), &db, SQLITE_OPEN_READONLY,
                              nullptr) == SQLITE_OK);
      sqlite3_stmt* q = nullptr;
      REQUIRE(sqlite3_prepare_v2(db,
                                 "SELECT p.id, p.verification_id, d.state, p.store_id, "
                                 "p.event_json FROM pages p JOIN page_deliveries d "
                                 "ON d.page_id = p.id",
                                 -1, &q, nullptr) == SQLITE_OK);
      while (sqlite3_step(q) == SQLITE_ROW) {
        ++pages_of[sqlite3_column_int64(q, 1)];
        PageEvent page;  // what names it at the receiver: its key
        page.id = sqlite3_column_int64(q, 0);
        page.store_id = reinterpret_cast<const char*>(sqlite3_column_text(q, 3));
        page.created_at =
            nlohmann::json::parse(reinterpret_cast<const char*>(sqlite3_column_text(q, 4)))
                .value("created_at", std::string());
        delivery_state[page_key(page)] = reinterpret_cast<const char*>(sqlite3_column_text(q, 2));
      }
      sqlite3_finalize(q);
      sqlite3_close(db);
    }
    for (const auto& v : *all) {
      INFO("verification " << v.id << " " << v.version);
      CHECK(v.state == VerificationState::done);
      const bool reason = v.evidence.is_object() && v.evidence.contains("no_page");
      const int pages = pages_of.count(v.id) ? pages_of[v.id] : 0;
      CHECK(((pages == 1 && !reason) || (pages == 0 && reason)));
      if (!((pages == 1 && !reason) || (pages == 0 && reason)))
        ++out.verdicts_without_page_decision;
    }
    const auto acknowledged_copies = receiver.acknowledged();
    const auto keys = receiver.keys();
    int resent = 0;
    for (const auto& [page, state] : delivery_state) {
      INFO("page " << page << " " << state);
      CHECK(state == "sent");
      const int copies = acknowledged_copies.count(page) ? acknowledged_copies.at(page) : 0;
      CHECK(copies >= 1);
      CHECK((keys.count(page) && keys.at(page) == std::set<std::string>{"reverify-page-" + page}));
      resent += std::max(0, receiver.copies(page) - 1);
    }
    const int duplicates = receiver.copies_after_recorded_sent();
    CHECK(duplicates == 0);
    CHECK(receiver.keys_naming_two_pages() == 0);
    out.duplicate_pages = duplicates - duplicates_seen;
    out.resent_copies = resent - resent_seen;
    duplicates_seen = duplicates;
    resent_seen = resent;
  }
};

// One kill point: `reach` drives the daemon to it (returning what was observed there), then
// kill -9, restart, settle and the invariants.
void kill_point(
    Lab& lab, const std::string& name, const std::function<void()>& reach,
    const std::function<void()>& after_restart = [] {}) {
  INFO("kill point: " << name);
  FaultRow row{"kill -9 " + name, 1};
  reach();
  lab.daemon.kill9();
  after_restart();
  lab.start();
  const bool settled = lab.settle();
  INFO(lab.daemon.log());
  CHECK(settled);
  lab.check_invariants(row);
  row.survived = settled && row.lost_triggers == 0 && row.verdicts_without_page_decision == 0 &&
                         row.duplicate_pages == 0
                     ? 1
                     : 0;
  table().push_back(row);
}

}  // namespace

TEST_CASE("kill -9 at 12 points of a verification's life, each followed by a restart") {
  Lab lab;
  for (int i = 1; i <= 12; ++i)
    lab.add_version("3." + std::to_string(i), 1.5, /*fail_once=*/i == 11);
  lab.add_version("0.1", 0.2);  // what the first cycle is likely to pick (never verified)
  lab.start_and_settle_first_cycle();

  kill_point(lab, "after the 202", [&] { REQUIRE(lab.trigger("3.1")); });
  kill_point(lab, "while a POST is in flight", [&] {
    // The request is sent whole; the kill comes before the answer is read. Unacknowledged:
    // either outcome is allowed, but a row written must still end with its verdict.
    const std::string body = R"({"model": "slow", "version": "3.2"})";
    std::thread([port = lab.daemon.port, body] {
      raw_exchange(port,
                   "POST /v1/verifications HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " +
                       std::string(kFaultsToken) + "\r\nContent-Type: application/json\r\n" +
                       "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body,
                   milliseconds(500));
    }).detach();
    std::this_thread::sleep_for(milliseconds(1));
  });
  kill_point(lab, "with the row running, before the job starts", [&] {
    auto id = lab.trigger("3.3");
    REQUIRE(id);
    CHECK(Lab::wait_for(
        [&] {
          auto r = lab.row(*id);
          return r && r->state != VerificationState::queued;
        },
        milliseconds(5000), milliseconds(1)));
  });
  kill_point(lab, "while the job runs", [&] {
    REQUIRE(lab.trigger("3.4"));
    CHECK(Lab::wait_for([&] { return lab.marker("3.4", "started"); }, milliseconds(20'000)));
  });
  kill_point(lab, "as the job exits, before its verdict", [&] {
    REQUIRE(lab.trigger("3.5"));
    CHECK(Lab::wait_for([&] { return lab.marker("3.5", "finished"); }, milliseconds(20'000),
                        milliseconds(1)));
  });
  kill_point(
      lab, "between the verdict and its page (receiver refusing)",
      [&] {
        lab.receiver.set_mode(Receiver::Mode::refuse);
        auto id = lab.trigger("3.6");
        REQUIRE(id);
        CHECK(Lab::wait_for(
            [&] {
              auto r = lab.row(*id);
              return r && r->state == VerificationState::done;
            },
            milliseconds(30'000)));
      },
      [&] { lab.receiver.set_mode(Receiver::Mode::acknowledge); });
  kill_point(
      lab, "during the send (the receiver holds the request)",
      [&] {
        lab.receiver.set_mode(Receiver::Mode::hold);
        REQUIRE(lab.trigger("3.7"));
        CHECK(lab.receiver.wait_held(seconds(30)));
      },
      [&] { lab.receiver.set_mode(Receiver::Mode::acknowledge); });
  kill_point(lab, "while SIGTERM drains a running job", [&] {
    REQUIRE(lab.trigger("3.8"));
    CHECK(Lab::wait_for([&] { return lab.marker("3.8", "started"); }, milliseconds(20'000)));
    ::kill(lab.daemon.pid, SIGTERM);
    CHECK(Lab::wait_for(
        [&] { return lab.daemon.log().find("SIGTERM: draining") != std::string::npos; },
        milliseconds(5000)));
  });
  kill_point(lab, "during start-up reconciliation of a job left running", [&] {
    REQUIRE(lab.trigger("3.9"));
    CHECK(Lab::wait_for([&] { return lab.marker("3.9", "started"); }, milliseconds(20'000)));
    lab.daemon.kill9();
    lab.daemon.start();  // killed again while it reconciles, before it serves
    std::this_thread::sleep_for(milliseconds(30));
  });
  kill_point(lab, "during a SIGHUP reload with a job running", [&] {
    REQUIRE(lab.trigger("3.10"));
    CHECK(Lab::wait_for([&] { return lab.marker("3.10", "started"); }, milliseconds(20'000)));
    ::kill(lab.daemon.pid, SIGHUP);
  });
  kill_point(lab, "while a retry waits out its backoff", [&] {
    auto id = lab.trigger("3.11");  // its trainer fails once: an error verdict, a retry in 3 s
    REQUIRE(id);
    CHECK(Lab::wait_for(
        [&] {
          auto r = lab.row(*id);
          return r && r->cls && is_error(*r->cls);
        },
        milliseconds(30'000)));
    auto unfinished = lab.store()->unfinished();
    REQUIRE(unfinished.ok());
    CHECK(std::any_of(unfinished->begin(), unfinished->end(), [](const VerificationRow& r) {
      return r.version == "3.11" && r.trigger == VerificationTrigger::retry;
    }));
  });
  kill_point(
      lab, "with a page in flight and a job running",
      [&] {
        lab.receiver.set_mode(Receiver::Mode::hold);
        REQUIRE(lab.trigger("3.12"));
        CHECK(lab.receiver.wait_held(seconds(30)));
        fs::remove(lab.temp.path / "markers/3.1/started");
        REQUIRE(lab.trigger("3.1"));  // verified again: its job runs while 3.12's page is held
        CHECK(Lab::wait_for([&] { return lab.marker("3.1", "started"); }, milliseconds(20'000)));
      },
      [&] { lab.receiver.set_mode(Receiver::Mode::acknowledge); });
  ::kill(lab.daemon.pid, SIGTERM);
  CHECK(lab.daemon.wait_exit(seconds(30)) == 0);
}

namespace {

// Sends SIGHUP and waits for the daemon's answer to it: the index of its line in the log.
std::string reload(Lab& lab) {
  const auto before = lab.daemon.log().size();
  ::kill(lab.daemon.pid, SIGHUP);
  std::string answer;
  Lab::wait_for(
      [&] {
        const auto log = lab.daemon.log().substr(before);
        const auto at = log.find("SIGHUP: ");
        if (at == std::string::npos)
          return false;
        answer = log.substr(at);
        return true;
      },
      milliseconds(10'000));
  return answer;
}

}  // namespace

TEST_CASE("SIGHUP with broken or restart-only configs keeps the running one, and says why") {
  Lab lab;
  lab.add_version("4.1", 0.2);
  lab.start_and_settle_first_cycle();
  const std::string good = lab.config_text();
  const auto token_at = good.find("sources:");
  write_file(lab.temp.path / "short.token", std::string(31, 'a') + "\n");
  fs::permissions(lab.temp.path / "short.token", fs::perms::owner_read | fs::perms::owner_write);
  struct Case {
    std::string name, text, expected;
  };
  auto replaced = [&](const std::string& from, const std::string& to) {
    std::string text = good;
    text.replace(text.find(from), from.size(), to);
    return text;
  };
  const std::vector<Case> cases = {
      {"an empty file", "", "the config is empty"},
      {"a file cut mid-line", good.substr(0, good.find("kind: directory") + 4), "invalid"},
      {"a file cut before its sources", good.substr(0, token_at), "sources: required"},
      {"a duplicate key", good + "state_dir: elsewhere\n", "duplicate key"},
      {"a directory in the file's place", "", "is a directory"},
      {"a changed state_dir", replaced("state_dir: state", "state_dir: other-state"),
       "changes state_dir, work_dir"},
      {"a changed listen port",
       replaced("port: " + std::to_string(lab.daemon.port),
                "port: " + std::to_string(lab.daemon.port + 1)),
       "changes api.port"},
      {"a changed runner", replaced("kill_grace: 1s", "kill_grace: 2s"), "changes runner"},
      {"a token of 31 characters", replaced("token_file: api.token", "token_file: short.token"),
       "short.token"},
  };
  for (const auto& c : cases) {
    INFO("SIGHUP with " << c.name);
    FaultRow row{"SIGHUP with " + c.name, 1};
    if (c.name == "a directory in the file's place") {
      fs::remove(lab.daemon.config);
      fs::create_directory(lab.daemon.config);
    } else {
      write_file(lab.daemon.config, c.text);
    }
    const auto answer = reload(lab);
    CHECK(answer.rfind("SIGHUP: keeping the running config", 0) == 0);
    CHECK(answer.find(c.expected) != std::string::npos);
    fs::remove_all(lab.daemon.config);
    write_file(lab.daemon.config, good);
    // The running config still holds: the same token, port and state_dir take a trigger.
    const auto id = lab.trigger("4.1");
    CHECK(id.has_value());
    const bool settled = lab.settle();
    CHECK(settled);
    CHECK_FALSE(fs::exists(lab.temp.path / "other-state"));
    lab.check_invariants(row);
    row.survived =
        answer.rfind("SIGHUP: keeping the running config", 0) == 0 && id && settled &&
                row.lost_triggers + row.verdicts_without_page_decision + row.duplicate_pages == 0
            ? 1
            : 0;
    table().push_back(row);
  }
  // A change that may be applied is.
  write_file(lab.daemon.config, replaced("sync_interval: 1s", "sync_interval: 2s"));
  // It says what changed, by name, never by value.
  const std::string applied = reload(lab);
  CHECK(applied.rfind("SIGHUP: config reloaded: 1 setting(s) changed: sync_interval changed=1",
                      0) == 0);
  // The same file again: nothing changed, and it says so.
  CHECK(reload(lab).rfind("SIGHUP: config reloaded: no setting changed", 0) == 0);
  ::kill(lab.daemon.pid, SIGTERM);
  CHECK(lab.daemon.wait_exit(seconds(30)) == 0);
}

TEST_CASE("API tokens at each length boundary: refused at start, or served") {
  Lab lab;
  lab.add_version("5.1", 0.2);
  FaultRow row{"start with tokens of 0, 31, 32, 1024, 1025 characters and a space", 6};
  struct Case {
    std::string token;
    bool accepted;
  };
  const std::vector<Case> cases = {{"", false},
                                   {std::string(31, 'b'), false},
                                   {std::string(32, 'b'), true},
                                   {std::string(1024, 'b'), true},
                                   {std::string(1025, 'b'), false},
                                   {std::string(16, 'b') + " " + std::string(16, 'b'), false}};
  for (const auto& c : cases) {
    INFO("token of " << c.token.size() << " characters");
    write_file(lab.temp.path / "api.token", c.token + "\n");
    lab.daemon.start();
    if (c.accepted) {
      REQUIRE(lab.daemon.wait_ready());
      // Authorized: an unknown version is 404, not 401; a token one character short is 401.
      auto known = lab.post(R"({"model": "slow", "version": "9.9"})", c.token);
      auto other = lab.post(R"({"model": "slow", "version": "9.9"})", c.token.substr(1));
      CHECK((known.ok() && known->status == 404));
      CHECK((other.ok() && other->status == 401));
      ::kill(lab.daemon.pid, SIGTERM);
      CHECK(lab.daemon.wait_exit(seconds(30)) == 0);
      row.survived += known.ok() && known->status == 404 && other->status == 401;
    } else {
      const int status = lab.daemon.wait_exit(seconds(30));
      CHECK(status == 2);
      CHECK(lab.daemon.log().find("api.token") != std::string::npos);
      row.survived += status == 2;
    }
  }
  table().push_back(row);
}

TEST_CASE("a receiver slower than the sender's timeout gets one page, under one key") {
  Lab lab;
  lab.add_version("6.1", 0.2);
  std::string config = lab.config_text();
  config.replace(config.find("timeout: 10s"), 12, "timeout: 1s");
  write_file(lab.daemon.config, config);
  lab.receiver.set_delay(milliseconds(1500));  // answers after 1.5 s; the sender waits 1 s
  lab.start_and_settle_first_cycle();
  FaultRow row{"receiver answers in 1.5 s, sender timeout 1 s", 1};
  // Each page: every copy carried one Idempotency-Key (the receiver merges them), and the
  // store marked it sent once.
  const auto keys = lab.receiver.keys();
  REQUIRE_FALSE(keys.empty());
  int copies = 0;
  for (const auto& [page, seen] : keys) {
    CHECK(seen.size() == 1);
    copies += lab.receiver.copies(page);
  }
  row.duplicate_pages = lab.receiver.copies_after_recorded_sent();
  CHECK(row.duplicate_pages == 0);
  row.resent_copies = copies - int(keys.size());
  const auto log = lab.daemon.log();
  CHECK(log.find("unconfirmed") != std::string::npos);
  CHECK(log.find("giving up") == std::string::npos);
  row.note = std::to_string(copies) + " copies of " + std::to_string(keys.size()) +
             " page(s), one Idempotency-Key each";
  row.survived = row.duplicate_pages == 0;
  table().push_back(row);
  ::kill(lab.daemon.pid, SIGTERM);
  CHECK(lab.daemon.wait_exit(seconds(30)) == 0);
}

// Found #5: after an error verdict, a manual trigger got 409 "already has a verification queued
// or running" for the whole backoff of the queued retry (up to an hour) while nothing ran.
TEST_CASE("a manual trigger during a retry's hour-long backoff runs that retry now") {
  Lab lab;
  lab.add_version("7.1", 0.2, /*fail_once=*/true);
  std::string config = lab.config_text();
  const std::string retry = "retry: {initial: 3s, max: 3s,";
  config.replace(config.find(retry), retry.size(), "retry: {initial: 1h, max: 1h,");
  write_file(lab.daemon.config, config);
  lab.start_until_rows(2);  // the cycle's failed verification and its retry
  auto rows = lab.store()->verifications("slow", "7.1", 10);
  REQUIRE(rows.ok());
  REQUIRE(rows->size() == 2);  // the failed one and its retry, an hour away
  const auto& waiting =
      rows->front().state == VerificationState::queued ? rows->front() : rows->back();
  REQUIRE(waiting.state == VerificationState::queued);
  CHECK(waiting.trigger == VerificationTrigger::retry);
  const auto id = lab.trigger("7.1");
  REQUIRE(id);
  CHECK(*id == waiting.id);  // folded: the same row, no second one
  CHECK(lab.settle(seconds(60)));
  auto done = lab.row(*id);
  REQUIRE(done);
  CHECK(done->trigger == VerificationTrigger::manual);
  CHECK(done->cls == VerdictClass::passed);
  CHECK(lab.store()->verifications("slow", "7.1", 10)->size() == 2);
  FaultRow row{"manual trigger while a retry backs off (1 h)", 1};
  lab.check_invariants(row);
  row.survived = *id == waiting.id && done->cls == VerdictClass::passed;
  table().push_back(row);
  ::kill(lab.daemon.pid, SIGTERM);
  CHECK(lab.daemon.wait_exit(seconds(30)) == 0);
}

// --- Issue #26: one owner per state_dir, and history that survives its disk. ---

namespace {

fs::path db_of(const Lab& lab) {
  return lab.temp.path / "state/reverify.db";
}

// The store's files gone, as with a lost disk: the database, its WAL and shared memory.
void remove_store(const Lab& lab) {
  for (const char* suffix : {"-wal", "-shm", ""})
    fs::remove(db_of(lab).string() + suffix);
}

// Every verification id in the store (or in a backup of it).
std::set<std::int64_t> verification_ids(const fs::path& db) {
  auto store = Store::open(db, system_now, /*read_only=*/true);
  REQUIRE(store.ok());
  auto all = (*store)->verifications("", "", 100'000);
  REQUIRE(all.ok());
  std::set<std::int64_t> ids;
  for (const auto& row : *all)
    ids.insert(row.id);
  return ids;
}

// Page keys the receiver got after `before` was taken whose page id a key in `before` already had:
// the page numbers a new or restored store uses again. The store id in each key keeps them apart
// (Receiver::keys_naming_two_pages counts a key that came back with another page).
int page_ids_reused(const std::map<std::string, std::set<std::string>>& before,
                    const std::map<std::string, std::set<std::string>>& after) {
  std::set<std::string> old_numbers;
  for (const auto& [key, idempotency] : before)
    old_numbers.insert(page_id_in(key));
  int reused = 0;
  for (const auto& [key, idempotency] : after)
    reused += !before.count(key) && old_numbers.count(page_id_in(key)) > 0;
  return reused;
}

}  // namespace

// Issue #26: the platform's faults are the platform's, nothing a job starts outlives it, and a
// job cannot take the host down. A "hostile" model whose trainer (the runner tests' trainer,
// tests/runners/fixtures/trainer.py) fills the state volume, orphans a setsid() grandchild that
// ignores SIGTERM, fork-bombs or allocates without end, under a runner with max_pids 64 and
// memory_bytes 256 MiB.
namespace {

constexpr std::uint64_t kHostileMemoryBytes = 256ULL * 1024 * 1024;

struct HostileLab {
  Lab lab;
  std::string commit =
      make_trainer_repo(lab.temp.path / "hostile-trainer", "tests/runners/fixtures/trainer.py");

  HostileLab() {
    std::string config = lab.config_text();
    const auto replace = [&](const std::string& from, const std::string& to) {
      REQUIRE(config.find(from) != std::string::npos);
      config.replace(config.find(from), from.size(), to);
    };
    replace(lab.runner_line(), lab.runner_line(", space: {min_free_bytes: 2097152}",
                                               ", max_pids: 64, memory_bytes: " +
                                                   std::to_string(kHostileMemoryBytes)));
    replace("models: {default: {timeout: 2m}}",
            "models: {default: {timeout: 2m}, hostile: {timeout: 6s}}");
    replace("max_attempts: 20", "max_attempts: 1");  // one verdict per trigger, no retries
    write_file(lab.daemon.config, config);
  }

  void add(const std::string& version, const std::string& behaviour) {
    auto manifest = slow_manifest("hostile", version, lab.temp.path / "hostile-trainer", commit, 0);
    const auto markers = lab.temp.path / "markers" / version;
    Lab::shared_with_jobs(markers);
    auto& env = manifest["environment"]["env"];
    env["TRAINER_BEHAVIOUR"] = behaviour;
    env["ORPHAN_PID_FILE"] = (markers / "orphan.pid").string();
    env["REVERIFY_FAULTS_MARKER"] = job_marker();
    write_file(lab.temp.path / "registry/hostile" / version / "manifest.json", manifest.dump(2));
  }

  // Triggers each version that is not queued or running already (the first cycle takes one).
  void run_all(const std::vector<std::string>& versions) {
    lab.start_until_rows(1);
    for (const auto& version : versions) {
      auto answer = lab.post(R"({"model": "hostile", "version": ")" + version + R"("})");
      REQUIRE(answer.ok());
      CHECK((answer->status == 202 || answer->status == 409));
    }
    const bool settled = lab.settle(seconds(180));
    INFO(lab.daemon.log());
    REQUIRE(settled);
  }

  VerificationRow verdict_of(const std::string& version) const {
    auto rows = lab.store()->verifications("hostile", version, 10);
    REQUIRE(rows.ok());
    REQUIRE(rows->size() == 1);
    REQUIRE(rows->front().cls.has_value());
    return rows->front();
  }

  // The page recorded for a verification (its event, as the senders get it).
  nlohmann::json page_of(std::int64_t verification_id) const {
    sqlite3* db = nullptr;
    REQUIRE(sqlite3_open_v2((lab.temp.path / "state/reverify.db").c_str(), &db,
                            SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK);
    sqlite3_stmt* q = nullptr;
    REQUIRE(sqlite3_prepare_v2(db, "SELECT event_json FROM pages WHERE verification_id = ?1", -1,
                               &q, nullptr) == SQLITE_OK);
    sqlite3_bind_int64(q, 1, verification_id);
    nlohmann::json event;
    if (sqlite3_step(q) == SQLITE_ROW)
      event = nlohmann::json::parse(reinterpret_cast<const char*>(sqlite3_column_text(q, 0)));
    sqlite3_finalize(q);
    sqlite3_close(db);
    return event;
  }

  // Whether the grandchild the version's job orphaned is gone: the pid it wrote down is its
  // sandbox's own, so it is found by the environment only its job's processes carry.
  bool orphan_gone(const std::string& version) const {
    const auto pid_file = lab.temp.path / "markers" / version / "orphan.pid";
    REQUIRE_FALSE(read_file(pid_file).empty());
    return none_left_with_environment("ORPHAN_PID_FILE=" + pid_file.string());
  }

  void stop() {
    ::kill(lab.daemon.pid, SIGTERM);
    CHECK(lab.daemon.wait_exit(seconds(30)) == 0);
  }
};

bool no_job_process_left() {
  return none_left_with_environment("REVERIFY_FAULTS_MARKER=" + job_marker());
}

}  // namespace

TEST_CASE("a store cut to 0 bytes or deleted, with history in its state_dir, is refused") {
  for (const bool deleted : {false, true}) {
    const std::string how = deleted ? "deleted" : "cut to 0 bytes";
    INFO("reverify.db " << how);
    Lab lab;
    lab.add_version("8.1", 0.2);
    lab.start_and_settle_first_cycle();
    REQUIRE(lab.stop());
    const fs::path db = db_of(lab);
    if (deleted) {
      remove_store(lab);
    } else {
      fs::resize_file(db, 0);
    }
    FaultRow row{"start with reverify.db " + how + " (work/ and the store's marker left)", 1};
    lab.daemon.start();
    const int status = lab.daemon.wait_exit(seconds(30));
    const std::string log = lab.daemon.log();
    INFO(log);
    CHECK(status == 2);
    const bool named = log.find(db.string() + (deleted ? " is missing" : " is empty (0 bytes)")) !=
                       std::string::npos;
    const bool ways_on = log.find("reverify restore BACKUP --config ") != std::string::npos &&
                         log.find("reverify restore --empty --config ") != std::string::npos;
    CHECK(named);
    CHECK(ways_on);
    const bool untouched = deleted ? !fs::exists(db) : fs::file_size(db) == 0;
    CHECK(untouched);
    row.survived = status == 2 && named && ways_on && untouched;
    row.note = "exit 2, naming the path, `reverify restore` and `--empty`";
    table().push_back(row);
    if (!deleted) {
      // The nightly backup of that store: refused, nothing written (an empty copy with a blank
      // store id would rotate the good copies out).
      FaultRow backup{"`reverify backup` of reverify.db cut to 0 bytes", 1};
      const fs::path out = lab.temp.path / "nightly.db";
      const Ran refused =
          run_cli({"backup", "--config", lab.daemon.config.string(), out.string()}, lab.temp.path);
      INFO(refused.out << refused.err);
      CHECK(refused.exit_code == 2);
      const bool said = refused.err.find(db.string() + " is empty (0 bytes)") != std::string::npos;
      CHECK(said);
      CHECK_FALSE(fs::exists(out));
      backup.survived = refused.exit_code == 2 && said && !fs::exists(out);
      backup.note = "exit 2, the refusal every command gives; no file written";
      table().push_back(backup);
      continue;
    }
    const std::int64_t highest_before = lab.acknowledged.empty() ? 0 : lab.acknowledged.back();

    // Starting over on purpose: a new store numbers its pages from 1 again, under keys of its own.
    const auto before = lab.receiver.keys();
    const Ran fresh =
        run_cli({"restore", "--config", lab.daemon.config.string(), "--empty"}, lab.temp.path);
    INFO(fresh.out << fresh.err);
    REQUIRE(fresh.exit_code == 0);
    lab.start_until_rows(1);  // the new store plans the month's cycle again
    REQUIRE(lab.settle());
    FaultRow keys{"a new store (`reverify restore --empty`) numbers on after the lost store", 1};
    lab.check_invariants(keys);
    // Its ids continue after every id the lost store handed out (the state_dir's marker keeps
    // them): no page id and no verification id is used again.
    const int reused = page_ids_reused(before, lab.receiver.keys());
    CHECK(reused == 0);
    const auto ids = verification_ids(db_of(lab));
    const bool ids_new = !ids.empty() && *ids.begin() > std::max<std::int64_t>(highest_before, 1);
    CHECK(ids_new);
    keys.survived = keys.duplicate_pages == 0 && lab.receiver.keys_naming_two_pages() == 0 &&
                    reused == 0 && ids_new;
    keys.note = std::to_string(reused) + " page ids and 0 verification ids used again";
    table().push_back(keys);
    CHECK(lab.stop());
  }
}

namespace {

// A second reverifyd on the lab's state_dir, on a port of its own (not started).
void configure_second(const Lab& lab, DaemonUnderTest& second) {
  second.dir = lab.temp.path / "second";
  fs::create_directories(second.dir);
  second.port = free_port();
  second.config = lab.temp.path / "second.yaml";  // beside the first: the same state_dir
  std::string text = lab.config_text();
  const std::string port = "port: " + std::to_string(lab.daemon.port);
  text.replace(text.find(port), port.size(), "port: " + std::to_string(second.port));
  write_file(second.config, text);
}

}  // namespace

TEST_CASE("a second reverifyd on the same state_dir exits 2, naming the first one's pid") {
  Lab lab;
  lab.add_version("9.1", 0.2);
  lab.start_and_settle_first_cycle();
  DaemonUnderTest second;
  configure_second(lab, second);
  second.start();
  const int status = second.wait_exit(seconds(30));
  const std::string log = second.log();
  INFO(log);
  CHECK(status == 2);
  const bool named =
      log.find("pid " + std::to_string(lab.daemon.pid) + " (reverifyd)") != std::string::npos;
  CHECK(named);
  // The first one keeps its state_dir: it still takes triggers and verifies.
  FaultRow row{"a second reverifyd on the same state_dir", 1};
  REQUIRE(lab.trigger("9.1"));
  CHECK(lab.settle());
  lab.check_invariants(row);
  row.survived = status == 2 && named && row.lost_triggers + row.duplicate_pages == 0;
  row.note = "exit 2, naming the first one's pid";
  table().push_back(row);
  CHECK(lab.stop());
}

TEST_CASE(
    "a `reverify run` owning its row as reverifyd starts keeps it; once it dies, it is "
    "reconciled") {
  Lab lab;
  lab.add_version("10.1", 0.2);
  lab.start_and_settle_first_cycle();  // the month's cycle: planned and verified, once
  REQUIRE(lab.stop());
  lab.add_version("10.2", 4.0);  // the `reverify run` that lives through the daemon's start
  lab.add_version("10.3", 6.0);  // the one killed in its job
  // Versions added while the daemon was down are new releases it would verify at release; this
  // case is about the rows of `reverify run` alone.
  std::string text = lab.config_text();
  text.replace(text.find("jitter: 0s,"), 11, "jitter: 0s, at_release: {enabled: false},");
  write_file(lab.daemon.config, text);
  const std::string config = lab.daemon.config.string();
  const auto cli_row = [&](const std::string& version) {
    auto rows = lab.store()->verifications("slow", version, 10);
    REQUIRE(rows.ok());
    REQUIRE(rows->size() == 1);
    REQUIRE(rows->front().trigger == VerificationTrigger::cli);
    return rows->front();
  };

  // The run's job is running (its row is running, its lock held) when reverifyd starts.
  Started run = start_cli({"run", "slow@10.2", "--config", config}, lab.temp.path, "-10.2");
  REQUIRE(Lab::wait_for([&] { return lab.marker("10.2", "started"); }, milliseconds(60'000)));
  lab.start();  // its first sync is done: the reconciliation was decided before it
  const std::int64_t owned = cli_row("10.2").id;
  const std::string left_alone = "verification " + std::to_string(owned) +
                                 " of slow@10.2 is a `reverify run` that still runs (pid " +
                                 std::to_string(run.pid) + " (reverify run))";
  CHECK(lab.daemon.log().find(left_alone) != std::string::npos);
  const Ran ran = run.finish();
  INFO(ran.out << ran.err);
  CHECK(ran.exit_code == 0);
  const VerificationRow finished = cli_row("10.2");
  CHECK(finished.cls == VerdictClass::passed);  // the run's own verdict
  FaultRow kept{"reverifyd starts while a `reverify run` owns its row", 1};
  const std::string reconciled_owned = "reconciling verification " + std::to_string(owned);
  const bool untouched = lab.daemon.log().find(reconciled_owned) == std::string::npos &&
                         lab.daemon.log().find("already has a verdict") == std::string::npos;
  CHECK(untouched);

  // A run killed in its job leaves its row running: the daemon's next tick finds the lock free
  // and reconciles it (its job reattached, or error:runner-lost).
  Started doomed = start_cli({"run", "slow@10.3", "--config", config}, lab.temp.path, "-10.3");
  REQUIRE(Lab::wait_for([&] { return lab.marker("10.3", "started"); }, milliseconds(60'000)));
  ::kill(doomed.pid, SIGKILL);
  CHECK(doomed.finish().exit_code == 128 + SIGKILL);
  const bool settled = lab.settle();
  INFO(lab.daemon.log());
  CHECK(settled);
  const VerificationRow orphan = cli_row("10.3");
  CHECK(orphan.cls.has_value());
  const bool adopted =
      lab.daemon.log().find("reconciling verification " + std::to_string(orphan.id) +
                            " of slow@10.3 (full), left running by a `reverify run` that "
                            "ended") != std::string::npos;
  CHECK(adopted);
  lab.check_invariants(kept);
  kept.survived = untouched && finished.cls == VerdictClass::passed &&
                  kept.verdicts_without_page_decision + kept.duplicate_pages == 0;
  kept.note = "left to its owner (pid named), which records its verdict";
  table().push_back(kept);
  FaultRow reconciled{"kill -9 of a `reverify run` in its job, reverifyd running", 1};
  reconciled.survived = settled && adopted && orphan.cls.has_value();
  reconciled.note =
      std::string("reconciled on a tick: ") + (orphan.cls ? to_string(*orphan.cls) : "no verdict");
  table().push_back(reconciled);
  CHECK(lab.stop());
}

TEST_CASE(
    "`reverify backup` beside a running reverifyd, then a restore, brings every "
    "verification back") {
  Lab lab;
  lab.add_version("11.1", 0.2);
  lab.add_version("11.2", 3.0);
  lab.start_and_settle_first_cycle();
  REQUIRE(lab.trigger("11.1"));
  REQUIRE(lab.settle());
  // The backup is taken while a job runs and the daemon writes.
  REQUIRE(lab.trigger("11.2"));
  REQUIRE(Lab::wait_for([&] { return lab.marker("11.2", "started"); }, milliseconds(60'000)));
  const fs::path backup = lab.temp.path / "backup.db";
  const Ran backed_up =
      run_cli({"backup", "--config", lab.daemon.config.string(), backup.string()}, lab.temp.path);
  INFO(backed_up.out << backed_up.err);
  REQUIRE(backed_up.exit_code == 0);
  const std::set<std::int64_t> in_backup = verification_ids(backup);
  REQUIRE(lab.settle());
  // One more after the backup: it goes with the disk.
  const auto lost = lab.trigger("11.1");
  REQUIRE(lost);
  REQUIRE(lab.settle());
  const auto before = lab.receiver.keys();

  // The disk is lost: the daemon dies with its store; the restart is refused until a restore.
  lab.daemon.kill9();
  remove_store(lab);
  lab.daemon.start();
  CHECK(lab.daemon.wait_exit(seconds(30)) == 2);
  const Ran restored =
      run_cli({"restore", "--config", lab.daemon.config.string(), backup.string()}, lab.temp.path);
  INFO(restored.out << restored.err);
  REQUIRE(restored.exit_code == 0);
  CHECK(restored.out.find("restored " + std::to_string(in_backup.size()) + " verification(s)") !=
        std::string::npos);
  // The verification acknowledged after the backup is gone with the disk, as a backup's age says
  // (and its id is never handed out again: settling must not wait for it).
  lab.acknowledged.erase(std::remove(lab.acknowledged.begin(), lab.acknowledged.end(), *lost),
                         lab.acknowledged.end());
  lab.start();
  const bool settled = lab.settle();
  INFO(lab.daemon.log());
  CHECK(settled);
  const std::set<std::int64_t> after = verification_ids(db_of(lab));
  const bool all_back =
      std::includes(after.begin(), after.end(), in_backup.begin(), in_backup.end());
  CHECK(all_back);
  // The restored store pages under keys of its own, and its ids continue after the lost store's
  // (the state_dir's marker outlived the store): the verification after the backup keeps its id.
  const auto next = lab.trigger("11.1");
  REQUIRE(next);
  CHECK(*next > *lost);
  CHECK(lab.settle());
  FaultRow row{"disk lost: `reverify restore` of a `reverify backup` taken while a job ran", 1};
  lab.check_invariants(row);
  const int reused = page_ids_reused(before, lab.receiver.keys());
  CHECK(reused == 0);
  row.survived = settled && all_back && lab.receiver.keys_naming_two_pages() == 0 && reused == 0 &&
                 *next > *lost &&
                 row.lost_triggers + row.verdicts_without_page_decision + row.duplicate_pages == 0;
  const auto back = std::count_if(in_backup.begin(), in_backup.end(),
                                  [&](std::int64_t id) { return after.count(id) > 0; });
  row.note = std::to_string(back) + " of " + std::to_string(in_backup.size()) +
             " backed-up verifications back; " + std::to_string(reused) +
             " page ids and 0 verification ids used again";
  table().push_back(row);
  CHECK(lab.stop());
}

TEST_CASE("a reload that makes the API token world-readable warns as a start does") {
  Lab lab;
  lab.add_version("12.1", 0.2);
  lab.start_and_settle_first_cycle();
  const fs::path token = lab.temp.path / "api.token";
  fs::permissions(token, fs::perms::others_read, fs::perm_options::add);
  const std::string answer = reload(lab);
  INFO(lab.daemon.log());
  const std::string warning =
      "warning: api.token_file: " + token.string() + " is readable by every user (mode 0604)";
  const bool warned = lab.daemon.log().find(warning) != std::string::npos;
  CHECK(answer.rfind("SIGHUP: config reloaded", 0) == 0);
  CHECK(warned);
  FaultRow row{"SIGHUP after the token file became world-readable", 1};
  row.survived = warned;
  row.note = "applied, with the warning a start gives";
  table().push_back(row);
  CHECK(lab.stop());
}

TEST_CASE("a state volume that fills under the job: error:infra naming the path, never the job's") {
  HostileLab h;
  TmpfsMount volume(h.lab.temp.path / "state", "32m");  // the state volume
  h.add("1.0", "fill_disk");
  h.run_all({"1.0"});
  const auto v = h.verdict_of("1.0");
  INFO(v.explanation);
  FaultRow row{"a state volume that fills during the job (ENOSPC, 32 MiB tmpfs)", 1};
  CHECK(v.cls == VerdictClass::error_infra);
  CHECK(v.explanation.find(volume.path.string()) != std::string::npos);
  CHECK(v.explanation.find("No space left on device") != std::string::npos);
  REQUIRE(v.evidence.contains("platform_fault"));
  CHECK(v.evidence["platform_fault"]["kind"] == "disk_full");
  // What the job wrote, the line it printed after the disk was full included.
  CHECK(v.log_tail.find("trainer: stopped after") != std::string::npos);
  CHECK(v.log_tail.find("No space left on device") != std::string::npos);
  const auto page = h.page_of(v.id);
  REQUIRE(page.is_object());
  CHECK(page["details"]["fault"] == "system");
  CHECK(page["details"]["class"] == "error:infra");
  CHECK(page["summary"].get<std::string>().find("the platform failed under the job") !=
        std::string::npos);
  const std::string log = h.lab.daemon.log();
  // Logged at error priority with the class, as every error:* verdict is (the operator acts).
  CHECK(log.find("error: verification " + std::to_string(v.id) + " of hostile@1.0: error:infra") !=
        std::string::npos);
  h.lab.check_invariants(row);
  const auto lowest = v.evidence["platform_fault"].value("file_systems", nlohmann::json::array());
  row.note = "error:infra, fault=system, " +
             (lowest.empty() ? std::string("?")
                             : std::to_string(lowest[0].value("lowest_free_bytes", 0ULL))) +
             " bytes free at the lowest; log tail " + std::to_string(v.log_tail.size()) +
             " bytes, the job's last line in it";
  row.survived = v.cls == VerdictClass::error_infra && page["details"]["fault"] == "system" &&
                         !v.log_tail.empty() && row.lost_triggers == 0 &&
                         row.verdicts_without_page_decision == 0
                     ? 1
                     : 0;
  table().push_back(row);
  h.stop();
  CHECK(no_job_process_left());
}

TEST_CASE(
    "setsid() orphans ignoring SIGTERM, fork bombs and runaway allocations end with the job") {
  HostileLab h;
  h.add("2.1", "setsid_orphan");
  h.add("2.2", "setsid_orphan_sleep");
  h.add("3.1", "fork_bomb");
  h.add("4.1", "eat_memory");
  h.run_all({"2.1", "2.2", "3.1", "4.1"});
  struct Expected {
    std::string version, fault, cls, words, page_fault;
    bool orphan;
  };
  const std::vector<Expected> cases = {
      {"2.1", "a setsid() grandchild (double fork) that ignores SIGTERM, the job ending", "passed",
       "", "", true},
      {"2.2", "the same, the job running past its timeout", "error:job", "ran past its timeout",
       "system", true},
      {"3.1", "a fork bomb (max_pids 64)", "error:job", "the job hit its pids limit of 64", "job",
       false},
      {"4.1", "a runaway allocation (memory_bytes 256 MiB)", "error:job",
       "the job hit its memory limit of " + std::to_string(kHostileMemoryBytes) + " bytes", "job",
       false},
  };
  for (const auto& c : cases) {
    INFO(c.fault);
    const auto v = h.verdict_of(c.version);
    INFO(v.explanation);
    FaultRow row{c.fault, 1};
    const bool cls_ok = to_string(*v.cls) == c.cls;
    CHECK(cls_ok);
    const bool words_ok = v.explanation.find(c.words) != std::string::npos;
    CHECK(words_ok);
    const auto page = h.page_of(v.id);
    const bool fault_ok = c.page_fault.empty() || page["details"]["fault"] == c.page_fault;
    CHECK(fault_ok);
    const bool orphan_ok = !c.orphan || h.orphan_gone(c.version);
    CHECK(orphan_ok);
    row.note = c.cls + (c.page_fault.empty() ? "" : ", fault=" + c.page_fault) +
               (c.orphan ? "; the orphan was killed" : "") +
               (c.words.empty() || c.orphan ? "" : "; \"" + c.words + "\"");
    row.survived = cls_ok && words_ok && fault_ok && orphan_ok ? 1 : 0;
    table().push_back(row);
  }
  FaultRow invariants{"(the four above: triggers, page decisions, pages)", 0};
  h.lab.check_invariants(invariants);
  CHECK(invariants.lost_triggers + invariants.verdicts_without_page_decision +
            invariants.duplicate_pages ==
        0);
  // The daemon and the host came through: it still answers, and this process still forks.
  CHECK(get(h.lab.daemon.url() + "/healthz")->status == 200);
  CHECK(run_command("true") == 0);
  h.stop();
  CHECK(no_job_process_left());
}

// --- One owner and one history, whatever operators do; a store that fails says so. ---

namespace {

// The daemon's /healthz answer: its status code and body.
std::pair<unsigned, nlohmann::json> health_of(const Lab& lab) {
  auto answer = get(lab.daemon.url() + "/healthz");
  if (!answer.ok())
    return {0, nullptr};
  return {answer->status, nlohmann::json::parse(answer->body, nullptr, false)};
}

// The value of one line of the daemon's /metrics ("name{labels}"), or -1.
double metric_of(const Lab& lab, const std::string& series) {
  auto answer = get(lab.daemon.url() + "/metrics");
  if (!answer.ok())
    return -1;
  const auto at = answer->body.find("\n" + series + " ");
  return at == std::string::npos ? -1 : std::stod(answer->body.substr(at + series.size() + 2));
}

}  // namespace

TEST_CASE("reverifyd.lock deleted while a job runs: a second reverifyd is refused all the same") {
  Lab lab;
  lab.add_version("14.1", 4.0);
  lab.start_and_settle_first_cycle();
  fs::remove(lab.temp.path / "markers/14.1/started");
  const auto id = lab.trigger("14.1");
  REQUIRE(id);
  REQUIRE(Lab::wait_for([&] { return lab.marker("14.1", "started"); }, milliseconds(60'000)));
  // What an operator does with a lock file a refusal named: it is only a label now; the lock is
  // the state_dir folder's.
  REQUIRE(fs::remove(lab.temp.path / "state/reverifyd.lock"));
  DaemonUnderTest second;
  configure_second(lab, second);
  second.start();
  const int status = second.wait_exit(seconds(30));
  const std::string refusal = second.log();
  INFO(refusal);
  CHECK(status == 2);
  const bool named = refusal.find("is held by pid " + std::to_string(lab.daemon.pid) +
                                  " (reverifyd)") != std::string::npos;
  CHECK(named);
  // The first one's verification is its own to the end: no one else reconciled it.
  const bool settled = lab.settle();
  CHECK(settled);
  const auto done = lab.row(*id);
  const bool own = done && done->cls == VerdictClass::passed &&
                   lab.daemon.log().find("reconciling verification " + std::to_string(*id)) ==
                       std::string::npos &&
                   refusal.find("reconciling") == std::string::npos;
  CHECK(own);
  FaultRow row{"reverifyd.lock deleted while a job runs, then a second reverifyd", 1};
  lab.check_invariants(row);
  row.survived = status == 2 && named && settled && own &&
                 row.lost_triggers + row.verdicts_without_page_decision + row.duplicate_pages == 0;
  row.note = "exit 2, naming the first one's pid; its job's verdict its own (passed)";
  table().push_back(row);
  CHECK(lab.stop());
}

TEST_CASE("a `reverify run`'s lock file deleted while its job runs: the version stays its own") {
  Lab lab;
  lab.add_version("15.1", 0.2);
  std::string text = lab.config_text();
  text.replace(text.find("jitter: 0s,"), 11, "jitter: 0s, at_release: {enabled: false},");
  write_file(lab.daemon.config, text);
  lab.start_and_settle_first_cycle();
  lab.add_version("15.2", 8.0);  // its job outlives a few of the daemon's ticks (every 5 s)
  const std::string config = lab.daemon.config.string();
  Started run = start_cli({"run", "slow@15.2", "--config", config}, lab.temp.path, "-15.2");
  REQUIRE(Lab::wait_for([&] { return lab.marker("15.2", "started"); }, milliseconds(60'000)));
  REQUIRE(fs::remove(lab.temp.path / "state/owners/slow@15.2.lock"));
  // A second run of the version, as an operator would start it after removing the "stale" file.
  const Ran second = run_cli({"run", "slow@15.2", "--config", config}, lab.temp.path);
  INFO(second.out << second.err);
  CHECK(second.exit_code == 2);
  const bool named =
      second.err.find("is held by pid " + std::to_string(run.pid)) != std::string::npos;
  CHECK(named);
  const Ran first = run.finish();
  INFO(first.out << first.err);
  CHECK(first.exit_code == 0);
  auto rows = lab.store()->verifications("slow", "15.2", 10);
  REQUIRE(rows.ok());
  REQUIRE(rows->size() == 1);  // the second run wrote no row
  const VerificationRow& verified = rows->front();
  // The daemon's ticks asked who owns the running row and left it to the run.
  const bool own = verified.cls == VerdictClass::passed &&
                   lab.daemon.log().find("reconciling verification " +
                                         std::to_string(verified.id)) == std::string::npos;
  CHECK(own);
  const bool settled = lab.settle();
  FaultRow row{"a `reverify run`'s lock file deleted while its job runs, then a second run", 1};
  lab.check_invariants(row);
  row.survived = first.exit_code == 0 && second.exit_code == 2 && named && own && settled &&
                 row.verdicts_without_page_decision + row.duplicate_pages == 0;
  row.note = "the second run exits 2 naming the first's pid; reverifyd leaves the row to it";
  table().push_back(row);
  CHECK(lab.stop());
}

TEST_CASE("reverify.db put back from an older copy: refused; kept as a restore, no id repeats") {
  Lab lab;
  lab.add_version("16.1", 0.2);
  lab.add_version("16.2", 0.2);
  lab.start_and_settle_first_cycle();
  REQUIRE(lab.trigger("16.1"));
  REQUIRE(lab.settle());
  REQUIRE(lab.stop());
  // The copy a file-system snapshot holds (the daemon stopped: no WAL beside it).
  const fs::path db = db_of(lab);
  const fs::path snapshot = lab.temp.path / "snapshot.db";
  fs::copy_file(db, snapshot);
  const std::set<std::int64_t> in_snapshot = verification_ids(snapshot);
  lab.start();
  const auto after_snapshot = lab.acknowledged.size();
  REQUIRE(lab.trigger("16.2"));
  REQUIRE(lab.settle());
  REQUIRE(lab.trigger("16.1"));
  REQUIRE(lab.settle());
  const std::int64_t highest = lab.acknowledged.back();
  const auto before = lab.receiver.keys();
  REQUIRE(lab.stop());
  // The file rolled back under the stopped daemon.
  remove_store(lab);
  fs::copy_file(snapshot, db);

  FaultRow refused{"reverify.db put back from a copy taken earlier (its state_dir kept)", 1};
  lab.daemon.start();
  const int status = lab.daemon.wait_exit(seconds(30));
  const std::string log = lab.daemon.log();
  INFO(log);
  CHECK(status == 2);
  const std::string aside = db.string() + ".rolled-back";
  const bool said =
      log.find(db.string() + " is older than this state_dir's history") != std::string::npos &&
      log.find("reverify restore " + aside + " --config ") != std::string::npos;
  CHECK(said);
  const bool untouched = verification_ids(db) == in_snapshot;
  CHECK(untouched);
  refused.survived = status == 2 && said && untouched;
  refused.note = "exit 2, naming both marks, the newest file and `reverify restore`";
  table().push_back(refused);

  // Kept as the refusal says: moved aside and restored. Its ids continue after every id handed out.
  fs::rename(db, aside);
  const Ran restored =
      run_cli({"restore", "--config", lab.daemon.config.string(), aside}, lab.temp.path);
  INFO(restored.out << restored.err);
  REQUIRE(restored.exit_code == 0);
  // What was recorded after the copy is gone with the newer file, as a restore's age says.
  lab.acknowledged.resize(after_snapshot);
  lab.start();
  const auto next = lab.trigger("16.2");
  REQUIRE(next);
  const bool settled = lab.settle();
  CHECK(settled);
  CHECK(*next > highest);
  FaultRow kept{"that copy kept as a restore (`reverify restore` of it): new ids and keys", 1};
  lab.check_invariants(kept);
  const int reused = page_ids_reused(before, lab.receiver.keys());
  CHECK(reused == 0);
  kept.survived =
      settled && *next > highest && reused == 0 && lab.receiver.keys_naming_two_pages() == 0 &&
      kept.lost_triggers + kept.verdicts_without_page_decision + kept.duplicate_pages == 0;
  kept.note = "verification " + std::to_string(*next) + " after " + std::to_string(highest) +
              " handed out; " + std::to_string(reused) + " page ids used again";
  table().push_back(kept);
  CHECK(lab.stop());
}

TEST_CASE("reverify.db cut to 0 bytes under a running reverifyd: /healthz and a metric say so") {
  Lab lab;
  lab.add_version("17.1", 0.2);
  lab.start_and_settle_first_cycle();
  CHECK(health_of(lab).first == 200);
  CHECK(metric_of(lab, "reverify_store_ok") == 1);
  const fs::path db = db_of(lab);
  fs::resize_file(db, 0);
  FaultRow row{"reverify.db cut to 0 bytes under a running reverifyd", 1};
  const bool flipped = Lab::wait_for([&] { return health_of(lab).first == 503; },
                                     milliseconds(60'000), milliseconds(200));
  CHECK(flipped);
  const auto [status, body] = health_of(lab);
  INFO(body.dump());
  const std::string reason = body.is_object() ? body.value("error", std::string()) : "";
  const bool named = body.is_object() && body.value("status", std::string()) == "store_failing" &&
                     reason.find(db.string() + " was cut from ") != std::string::npos &&
                     reason.find("`reverify restore BACKUP --config ") != std::string::npos;
  CHECK(named);
  const double ok = metric_of(lab, "reverify_store_ok");
  const double errors = metric_of(lab, "reverify_store_errors_total{operation=\"check\"}");
  CHECK(ok == 0);
  CHECK(errors >= 1);
  const bool logged = lab.daemon.log().find("error: the store is failing") != std::string::npos;
  CHECK(logged);
  row.survived = status == 503 && named && ok == 0 && errors >= 1 && logged;
  row.note = "/healthz 503 naming the file and `reverify restore`; reverify_store_ok 0";
  table().push_back(row);
  ::kill(lab.daemon.pid, SIGTERM);
  CHECK(lab.daemon.wait_exit(seconds(30)) == 0);
}

TEST_CASE(
    "a damaged reverify.db and a restore file that is no store: each named, with the way on") {
  Lab lab;
  lab.add_version("18.1", 0.2);
  lab.start_and_settle_first_cycle();
  const fs::path backup = lab.temp.path / "backup.db";
  const Ran backed_up =
      run_cli({"backup", "--config", lab.daemon.config.string(), backup.string()}, lab.temp.path);
  REQUIRE(backed_up.exit_code == 0);
  REQUIRE(lab.stop());
  // Every page but the first overwritten: SQLite reads a schema whose tables are garbage.
  const fs::path db = db_of(lab);
  {
    const auto size = fs::file_size(db);
    REQUIRE(size > 8192);
    std::fstream file(db, std::ios::in | std::ios::out | std::ios::binary);
    file.seekp(4096);
    const std::string garbage(size - 4096, '\xAB');
    file.write(garbage.data(), std::streamsize(garbage.size()));
  }
  FaultRow damaged{"start with reverify.db damaged (all but its first page overwritten)", 1};
  lab.daemon.start();
  const int status = lab.daemon.wait_exit(seconds(30));
  const std::string log = lab.daemon.log();
  INFO(log);
  CHECK((status == 1 || status == 2));
  const bool named = log.find(db.string() + " is damaged") != std::string::npos &&
                     log.find("`reverify restore BACKUP --config ") != std::string::npos;
  CHECK(named);
  damaged.survived = (status == 1 || status == 2) && named;
  damaged.note = "exit " + std::to_string(status) +
                 ", SQLite's reason with the file named and "
                 "`reverify restore`";
  table().push_back(damaged);

  // Moved aside as the error says; a file that is not a store offered to restore: refused, named.
  for (const char* suffix : {"", "-wal", "-shm"}) {
    std::error_code none;  // the -wal and -shm files, if any
    fs::rename(db.string() + suffix, db.string() + ".damaged" + suffix, none);
  }
  const fs::path junk = lab.temp.path / "not-a-backup.db";
  write_file(junk, std::string(8192, 'x'));
  FaultRow bad_file{"`reverify restore` of a file that is not a store", 1};
  const Ran refused =
      run_cli({"restore", "--config", lab.daemon.config.string(), junk.string()}, lab.temp.path);
  INFO(refused.out << refused.err);
  CHECK(refused.exit_code == 2);
  const bool said = refused.err.find("the backup " + junk.string() + " cannot be restored") !=
                        std::string::npos &&
                    refused.err.find("file is not a database") != std::string::npos &&
                    refused.err.find("restore another backup") != std::string::npos;
  CHECK(said);
  CHECK_FALSE(fs::exists(db));
  const Ran restored =
      run_cli({"restore", "--config", lab.daemon.config.string(), backup.string()}, lab.temp.path);
  INFO(restored.out << restored.err);
  REQUIRE(restored.exit_code == 0);
  lab.start();
  REQUIRE(lab.trigger("18.1"));
  const bool settled = lab.settle();
  CHECK(settled);
  lab.check_invariants(bad_file);
  bad_file.survived = refused.exit_code == 2 && said && settled &&
                      bad_file.lost_triggers + bad_file.duplicate_pages == 0;
  bad_file.note = "exit 2, naming it; the backup then restored and verifying";
  table().push_back(bad_file);
  CHECK(lab.stop());
}

TEST_CASE("schedule.cron that never fires: refused by --check-config and at start, named") {
  Lab lab;
  std::string text = lab.config_text();
  text.replace(text.find("schedule: {"), 11, "schedule: {cron: \"0 0 31 2 *\", ");
  write_file(lab.daemon.config, text);
  FaultRow row{"schedule.cron \"0 0 31 2 *\" (31 February: never fires)", 1};
  const Ran checked =
      run_reverifyd({"--config", lab.daemon.config.string(), "--check-config"}, lab.temp.path);
  INFO(checked.out << checked.err);
  CHECK(checked.exit_code == 2);
  const bool check_named = checked.err.find("schedule.cron") != std::string::npos &&
                           checked.err.find("never fires") != std::string::npos;
  CHECK(check_named);
  lab.daemon.start();
  const int status = lab.daemon.wait_exit(seconds(30));
  const bool start_named = lab.daemon.log().find("schedule.cron") != std::string::npos;
  CHECK(status == 2);
  CHECK(start_named);
  row.survived = checked.exit_code == 2 && check_named && status == 2 && start_named;
  row.note = "--check-config and the start exit 2, naming schedule.cron";
  table().push_back(row);
}

// A job that exits 0 with outputs the rebuild contract refuses: the job's fault (error:job, the
// page's fault "job"), and a headline that names what it wrote wrong, never "did not finish".
TEST_CASE("a job's bad outputs are its own fault, in words naming what it wrote") {
  HostileLab h;
  const std::vector<std::pair<std::string, std::string>> versions = {
      {"5.1", "huge_result"}, {"5.2", "escape_result"}, {"5.3", "symlink_predictions"},
      {"5.4", "nan_result"},  {"5.5", "bad_result"},
  };
  for (const auto& [version, behaviour] : versions)
    h.add(version, behaviour);
  h.run_all({"5.1", "5.2", "5.3", "5.4", "5.5"});
  struct Expected {
    std::string version, fault, words, more;  // the explanation holds words, then more
  };
  const std::vector<Expected> cases = {
      {"5.1", "a result.json of 17 MiB (over the contract's 16 MiB)", "result.json: 178",
       "bytes, over the contract's limit of 16777216 bytes"},
      {"5.2", "a predictions path escaping $REVERIFY_OUT",
       "predictions: expected a file inside $REVERIFY_OUT", "../../etc/passwd"},
      {"5.3", "predictions.npy a symbolic link to /etc/passwd",
       "names predictions.npy, a symbolic link (to /etc/passwd)", ""},
      {"5.4", "NaN as the primary metric's value", "result.json: not valid JSON at byte",
       "NaN is not JSON"},
      {"5.5", "a primary value that is not a number",
       "result.json: primary.value: expected a finite number", ""},
  };
  for (const auto& c : cases) {
    INFO(c.fault);
    const auto v = h.verdict_of(c.version);
    INFO(v.explanation);
    FaultRow row{"a job exiting 0 with bad outputs: " + c.fault, 1};
    const bool cls_ok = v.cls == VerdictClass::error_job;
    CHECK(cls_ok);
    const auto at = v.explanation.find(c.words);
    const bool words_ok =
        at != std::string::npos && v.explanation.find(c.more, at) != std::string::npos;
    CHECK(words_ok);
    const auto page = h.page_of(v.id);
    const std::string summary = page.value("summary", std::string());
    INFO(summary);
    const bool fault_ok = page["details"]["fault"] == "job";
    CHECK(fault_ok);
    const bool headline_ok =
        summary.find("wrote outputs the rebuild contract refuses") != std::string::npos &&
        summary.find("did not finish") == std::string::npos;
    CHECK(headline_ok);
    row.note =
        "error:job, fault=job; \"" + c.words + (c.more.empty() ? "" : "... " + c.more) + "\"";
    row.survived = cls_ok && words_ok && fault_ok && headline_ok ? 1 : 0;
    table().push_back(row);
  }
  h.stop();
  CHECK(no_job_process_left());
}

namespace {

// Fail closed (docs/security.md "Fail-closed rules"): the digits example as released, a copy with
// one NaN in its released predictions (their hash updated), and a copy whose dataset snapshot is
// served over http by a static file server on loopback; a slow version whose run.workdir climbs
// out of its checkout. Attestation is on, so what gets signed can be checked.
struct FailClosedLab {
  Lab lab;
  fs::path dir = lab.temp.path;
  std::map<std::string, std::string> served;  // target -> body, for the file server
  std::optional<HttpReceiver> web{
      std::in_place, [this](const ReceivedRequest& request) {
        auto it = served.find(request.target);
        return it == served.end() ? Reply{404, "not found"} : Reply{200, it->second};
      }};
  std::string web_url = web->url();

  FailClosedLab() {
    build_digits_trainer(dir / "digits-trainer");
    fs::copy(source_dir() / "examples/digits", dir / "digits", fs::copy_options::recursive);
    const fs::path release = source_dir() / "examples/registry/digits-mlp/2026.11.1";
    fs::create_directories(dir / "registry/digits-mlp");
    for (const char* version : {"2026.11.1", "2026.11.1-nan", "2026.11.1-remote"})
      fs::copy(release, dir / "registry/digits-mlp" / version, fs::copy_options::recursive);
    edit("2026.11.1-nan", [&](nlohmann::json& m) {
      const fs::path npy = dir / "registry/digits-mlp/2026.11.1-nan/predictions.npy";
      put_nan(npy, 17 * 10 + 3);  // row 17, class 3 of the <f4 (391, 10) scores
      m["evaluation"]["predictions"]["sha256"] = sha256_file(npy).value();
    });
    // The same snapshot, published: its file manifest at /data/snapshot.sha256 (written after
    // hashing, so not one of its own lines), each file beside it.
    auto listing = hash_directory(dir / "digits/data");
    REQUIRE(listing.ok());
    served["/data/snapshot.sha256"] = listing->text();
    for (const auto& file : listing->files)
      served["/data/" + file.relative_path] = read_file(dir / "digits/data" / file.relative_path);
    edit("2026.11.1-remote", [&](nlohmann::json& m) {
      m["data"]["snapshot"]["uri"] = web_url + "/data/snapshot.sha256";
    });
    auto escape = slow_manifest("slow", "escape", dir / "trainer", lab.commit, 0.1);
    escape["run"]["workdir"] = "../../../../tmp";
    write_file(dir / "registry/slow/escape/manifest.json", escape.dump(2));
    const auto key = Ed25519SigningKey::generate();
    write_file(dir / "attest.pem", key.private_pem());
    fs::permissions(dir / "attest.pem", fs::perms::owner_read | fs::perms::owner_write);
    // One verdict per trigger, no retries: the server-gone case's error is read, not retried.
    std::string config = lab.config_text();
    const std::string retries = "max_attempts: 20";
    config.replace(config.find(retries), retries.size(), "max_attempts: 1");
    write_file(lab.daemon.config,
               config + "code_mirrors: {" + kDigitsRepoUrl +
                   ": digits-trainer}\nattestation: {key_file: attest.pem, verifier_id: "
                   "'https://reverify.example/faults'}\n");
  }

  void edit(const std::string& version, const std::function<void(nlohmann::json&)>& change) {
    const fs::path path = dir / "registry/digits-mlp" / version / "manifest.json";
    auto m = nlohmann::json::parse(read_file(path));
    m["version"] = version;
    change(m);
    write_file(path, m.dump(2));
  }

  // One float32 NaN at element `index` of a version 1.0 .npy file.
  static void put_nan(const fs::path& npy, std::size_t index) {
    std::string bytes = read_file(npy);
    const std::size_t header =
        10 + static_cast<unsigned char>(bytes[8]) + 256 * static_cast<unsigned char>(bytes[9]);
    const char nan[4] = {0, 0, static_cast<char>(0xc0), 0x7f};
    bytes.replace(header + 4 * index, 4, nan, 4);
    write_file(npy, bytes);
  }

  // Triggers `version` of digits-mlp and waits for its verdict.
  VerificationRow verify(const std::string& version) {
    auto answer = lab.post(R"({"model": "digits-mlp", "version": ")" + version + R"("})");
    REQUIRE(answer.ok());
    INFO(answer->body);
    REQUIRE(answer->status == 202);
    const auto id = nlohmann::json::parse(answer->body)["verification_id"].get<std::int64_t>();
    lab.acknowledged.push_back(id);
    REQUIRE(Lab::wait_for(
        [&] {
          auto r = lab.row(id);
          return r && r->state == VerificationState::done;
        },
        milliseconds(180'000), milliseconds(200)));
    return *lab.row(id);
  }

  // Whether the verification's job ran (its run stage was timed).
  static bool job_ran(const VerificationRow& row) {
    return row.evidence.contains("durations") && row.evidence["durations"].contains("run");
  }

  unsigned status_of(const std::string& target,
                     const std::vector<std::pair<std::string, std::string>>& headers = {},
                     const std::string& method = "GET", const std::string& body = "") const {
    HttpRequest request;
    request.method = method;
    request.url = lab.daemon.url() + target;
    request.headers = headers;
    request.body = body;
    auto answer = http_request(request);
    REQUIRE(answer.ok());
    return static_cast<unsigned>(answer->status);
  }
};

}  // namespace

// Found by trying reverify as an attacker and as an operator would: a check that vanished with a
// NaN, a gate that answered 200 to a misspelt parameter, inputs nobody checked. Each row says what
// reverify does now.
TEST_CASE("fail closed: an unreadable release, a gate asked in other words, unchecked inputs") {
  FailClosedLab f;
  Lab& lab = f.lab;
  lab.start_and_settle_first_cycle();

  {
    FaultRow row{"a NaN in the released predictions.npy, its hash updated", 1};
    const auto clean = f.verify("2026.11.1");
    const auto nan = f.verify("2026.11.1-nan");
    INFO(nan.explanation);
    const bool clean_ok = clean.cls == VerdictClass::passed &&
                          f.status_of("/v1/gate/digits-mlp/2026.11.1") == 200 &&
                          f.status_of("/v1/attestations/digits-mlp/2026.11.1") == 200;
    CHECK(clean_ok);
    const bool refused = nan.cls == VerdictClass::error_manifest_invalid &&
                         nan.explanation.find("evaluation.predictions") != std::string::npos &&
                         nan.explanation.find("NaN") != std::string::npos && !f.job_ran(nan);
    CHECK(refused);
    // Nothing signed, and the gate does not pass it.
    const unsigned summary = f.status_of("/v1/attestations/digits-mlp/2026.11.1-nan");
    const unsigned gate = f.status_of("/v1/gate/digits-mlp/2026.11.1-nan");
    CHECK(summary == 404);
    CHECK(gate == 412);
    row.note =
        "error:manifest-invalid naming evaluation.predictions, before any job; no signed "
        "summary (404); gate " +
        std::to_string(gate) + "; the clean release beside it passed, signed, gate 200";
    row.survived = clean_ok && refused && summary == 404 && gate == 412 ? 1 : 0;
    table().push_back(row);
  }
  {
    FaultRow row{"GET /v1/gate/M/V?max-age=1s (the CLI flag's spelling); /v1/models?owner=x", 2};
    const unsigned misspelt = f.status_of("/v1/gate/digits-mlp/2026.11.1?max-age=1s");
    const unsigned owner = f.status_of("/v1/models?owner=team-vision");
    CHECK(misspelt == 400);
    CHECK(owner == 400);
    // The CLI keeps asking in the API's words.
    const auto cli =
        run_program({(build_dir() / "cli/reverify").string(), "gate", "digits-mlp@2026.11.1",
                     "--max-age", "40d", "--url", lab.daemon.url()},
                    f.dir);
    CHECK(cli.exit_code == 0);
    row.note =
        "400 and 400, naming what each accepts (max_age, mode; none); `reverify gate "
        "--max-age 40d` still exits 0";
    row.survived = (misspelt == 400) + (owner == 400 && cli.exit_code == 0);
    table().push_back(row);
  }
  {
    FaultRow row{"two Authorization headers on a trigger; a lowercase bearer scheme", 2};
    const std::string body = R"({"model": "digits-mlp", "version": "2026.11.1"})";
    const unsigned two = f.status_of("/v1/verifications",
                                     {{"Authorization", std::string("Bearer ") + kFaultsToken},
                                      {"Authorization", "Bearer wrong"}},
                                     "POST", body);
    CHECK(two == 400);
    HttpRequest request;
    request.method = "POST";
    request.url = lab.daemon.url() + "/v1/verifications";
    request.headers = {{"Authorization", std::string("bearer ") + kFaultsToken}};
    request.body = body;
    auto lower = http_request(request);
    REQUIRE(lower.ok());
    CHECK(lower->status == 202);
    if (lower->status == 202)
      lab.acknowledged.push_back(
          nlohmann::json::parse(lower->body)["verification_id"].get<std::int64_t>());
    row.note = "400, nothing queued; 202 (RFC 7235: the scheme is case-insensitive)";
    row.survived = (two == 400) + (lower->status == 202);
    table().push_back(row);
    REQUIRE(lab.settle(seconds(180)));
  }
  {
    FaultRow row{
        "a files snapshot at an http URI: served whole; a file changed on the server; "
        "the server gone",
        3};
    const auto whole = f.verify("2026.11.1-remote");
    INFO(whole.explanation);
    const bool fetched =
        whole.cls == VerdictClass::passed && f.job_ran(whole) &&
        whole.evidence["inputs"]["dataset"]["url"] == f.web_url + "/data/snapshot.sha256";
    CHECK(fetched);
    f.served["/data/shard-05.csv"][40] ^= 1;  // one byte, the size kept
    const auto changed = f.verify("2026.11.1-remote");
    INFO(changed.explanation);
    const bool drift = changed.cls == VerdictClass::failed_input_drift && !f.job_ran(changed) &&
                       changed.explanation.find("shard-05.csv (changed)") != std::string::npos;
    CHECK(drift);
    f.web.reset();  // the server is gone
    const auto gone = f.verify("2026.11.1-remote");
    INFO(gone.explanation);
    const bool provision = gone.cls == VerdictClass::error_provision && !f.job_ran(gone) &&
                           gone.explanation.find("data.snapshot.uri") != std::string::npos;
    CHECK(provision);
    row.note =
        "passed, the job trained on the fetched copy; failed:input-drift naming "
        "shard-05.csv; error:provision naming data.snapshot.uri; no job in the last two";
    row.survived = fetched + drift + provision;
    table().push_back(row);
  }
  {
    FaultRow row{"run.workdir \"../../../../tmp\"", 1};
    const unsigned trigger =
        f.status_of("/v1/verifications", {{"Authorization", std::string("Bearer ") + kFaultsToken}},
                    "POST", R"({"model": "slow", "version": "escape"})");
    const auto lint = run_program({(build_dir() / "cli/reverify").string(), "lint",
                                   (f.dir / "registry/slow/escape/manifest.json").string()},
                                  f.dir);
    INFO(lint.out << lint.err);
    const bool named = (lint.out + lint.err)
                           .find(
                               "run.workdir: must be a folder without '..' "
                               "segments") != std::string::npos;
    CHECK(trigger == 409);
    CHECK(lint.exit_code == 2);
    CHECK(named);
    row.note =
        "the manifest invalid at sync: trigger 409, `reverify lint` exit 2, naming "
        "run.workdir";
    row.survived = trigger == 409 && lint.exit_code == 2 && named ? 1 : 0;
    table().push_back(row);
  }
  REQUIRE(lab.settle(seconds(180)));
  FaultRow invariants{"(the fail-closed cases above: triggers, page decisions, pages)", 0};
  lab.check_invariants(invariants);
  CHECK(invariants.lost_triggers + invariants.verdicts_without_page_decision +
            invariants.duplicate_pages ==
        0);
}

// After every case above (and the kill -9 points' jobs): no process any job of the suite started

// After every case above (and the kill -9 points' jobs): no process any job of the suite started
// is left, whatever session or process group it moved to.
TEST_CASE("after the suite, no process started by a job is left") {
  const auto left = processes_with_environment("REVERIFY_FAULTS_MARKER=" + job_marker());
  for (pid_t pid : left)
    MESSAGE("left running: pid " << pid << " "
                                 << read_file("/proc/" + std::to_string(pid) + "/cmdline"));
  FaultRow row{"after the suite: processes started by jobs still running", 1};
  row.note = std::to_string(left.size()) + " left";
  row.survived = left.empty() ? 1 : 0;
  table().push_back(row);
  CHECK(left.empty());
}

// Last in the file, so last to run: the table docs/faults.md "Faults" reproduces.
TEST_CASE("summary: faults injected, survived, data lost") {
  int injected = 0, survived = 0, lost = 0, undecided = 0, duplicates = 0, kill_points = 0;
  int resent = 0;
  std::cout << "| fault | injected | survived | lost triggers | verdicts without page decision "
               "| duplicate pages | copies sent again (one key) | note |\n"
               "|---|---|---|---|---|---|---|---|\n";
  for (const auto& r : table()) {
    std::cout << "| " << r.fault << " | " << r.injected << " | " << r.survived << " | "
              << r.lost_triggers << " | " << r.verdicts_without_page_decision << " | "
              << r.duplicate_pages << " | " << r.resent_copies << " | " << r.note << " |\n";
    resent += r.resent_copies;
    injected += r.injected;
    survived += r.survived;
    lost += r.lost_triggers;
    undecided += r.verdicts_without_page_decision;
    duplicates += r.duplicate_pages;
    kill_points += r.fault.rfind("kill -9", 0) == 0;
  }
  std::cout << "| **total** | " << injected << " | " << survived << " | " << lost << " | "
            << undecided << " | " << duplicates << " | " << resent << " | |\n";
  CHECK(lost == 0);
  CHECK(undecided == 0);
  CHECK(duplicates == 0);
  CHECK(survived == injected);
  if (table().size() > 1)
    CHECK(kill_points >= 10);
}
