#pragma once
// daemon/ only: the loop behind Daemon. daemon.hpp states its threads, what each may touch and its
// lifecycle; this header is the class that keeps those promises, included by daemon/*.cpp alone.
// Its members are defined by concern:
//   daemon.cpp              start and run, reconciliation, the loop's ticks, verifications, the
//                           read model, manual triggers, draining
//   daemon_calibration.cpp  calibrations of underpowered versions in spare capacity
//   daemon_sync.cpp         registry syncs
//   daemon_reload.cpp       SIGHUP reloads and the pager dispatcher

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/thread_pool.hpp>

#include <atomic>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "api/daemon_metrics.hpp"
#include "api/http_server.hpp"
#include "api/snapshot.hpp"
#include "core/log.hpp"
#include "daemon/daemon.hpp"
#include "verify/schedule.hpp"
#include "verify/verification_service.hpp"

namespace reverify {

namespace net = boost::asio;

// The HTTP threads only read the published read model: one per core, each running an io_context
// of its own, serves requests on every core.
std::vector<std::unique_ptr<net::io_context>> make_api_workers();

std::vector<std::string> source_names(const Config& config);

inline LogFields version_fields(const std::string& model, const std::string& version) {
  return {{"model", model}, {"version", version}};
}

// Why the running calibration stops before its next run: written by the loop, read by the
// calibration's thread.
enum class CalibrationStop { none, verification_due, draining };

// The verifications found running and not being worked on by this daemon, by who finishes them.
struct LeftRunning {
  std::vector<VerificationRow> own;       // reverifyd's: reattached, or error:runner-lost
  std::vector<VerificationRow> orphaned;  // a `reverify run`'s whose process is gone
  std::vector<std::pair<VerificationRow, std::string>> owned;  // a live `reverify run`'s, owner
};

// How a verification thread starts (start_verification).
enum class VerificationStart {
  run,       // a queued row: execute it
  reattach,  // reverifyd's own row left running by its previous process: recover it
  adopt,     // a `reverify run` row whose process ended: take the version's lock, then recover
};

// A thread failure (daemon.hpp, "Thread failures"): one error line, then exit 70 at once.
[[noreturn]] void fail_fast(const std::string& where, const std::string& what);

// Runs `work` where a thread of the daemon runs it: an exception escaping it is a thread failure.
template <class Work>
auto guarded(const std::string& where, Work&& work) -> decltype(work()) {
  try {
    return work();
  } catch (const std::exception& e) {
    fail_fast(where, e.what());
  } catch (...) {
    fail_fast(where, "an exception that is not a std::exception");
  }
}

class DaemonImpl {
 public:
  DaemonImpl(std::shared_ptr<const Config> config, DaemonCollaborators with, DaemonOptions options)
      : options_(std::move(options)),
        store_(with.store),
        runner_(with.runner),
        clock_(with.clock),
        make_source_(std::move(with.make_source)),
        make_senders_(std::move(with.make_senders)),
        metrics_(clock_.now()),
        config_(std::move(config)) {}

  Status init();  // on the caller's thread, before run(): no other thread exists yet
  int run();
  void stop() {
    net::post(loop_, [this] { begin_drain("stop requested"); });
  }
  void reload() {
    net::post(loop_, [this] { reload_config(); });
  }

 private:
  // Runs `work` on the pool, then `then(result)` on the loop. The loop counts the pair as
  // outstanding work, so it cannot run out of work (and run() return) in between. `what` names
  // the task when it fails (daemon.hpp, "Thread failures").
  template <class Work, class Then>
  void off_loop(const char* what, Work work, Then then) {
    net::post(pool_, [this, what, guard = net::make_work_guard(loop_), work = std::move(work),
                      then = std::move(then)]() mutable {
      auto result = guarded(std::string("a pool thread (") + what + ")", work);
      net::post(loop_, [then = std::move(then), result = std::move(result)]() mutable {
        then(std::move(result));
      });
    });
  }
  // A timer of the loop's clock, armed to call `fire` on the loop.
  std::unique_ptr<LoopTimer> make_timer() { return clock_.timer(loop_); }
  // Reconciliation is done and draining has not begun: work may start.
  bool starts_work() const {
    return lifecycle_ == DaemonLifecycle::first_sync || lifecycle_ == DaemonLifecycle::serving;
  }
  bool draining_or_stopped() const {
    return lifecycle_ == DaemonLifecycle::draining || lifecycle_ == DaemonLifecycle::stopped;
  }

  // --- on an API thread ---
  void serve(const ApiRequest& request, ApiReply reply);

  // --- on the loop ---
  void publish(std::shared_ptr<const ReadModel> model);
  void on_signal(int signal);
  void wait_for_signal();
  void reconcile(Result<LeftRunning> left);
  void begin_drain(const std::string& why);
  void finish_if_drained();
  void schedule_tick(std::chrono::milliseconds after);
  void tick();
  void plan_cycle_if_due(UnixSeconds now);
  void reconcile_ended_cli_runs();
  void start_verification(const VerificationRow& row, VerificationStart how);
  // A verification thread's progress: refreshes the read model when the row shows as running and
  // each time its job's standing in a runner's queue changes. Called from that thread.
  VerificationService::Progress show_stages();
  void on_verification_done(std::int64_t id, const Result<std::optional<VerificationRow>>& result);
  void start_calibration_if_planned();
  void on_calibration_done(const Result<CalibrationOutcome>& result);
  nlohmann::json calibration_state() const;
  void refresh();
  void watch_store();
  void sync_sources();
  void rebuild_sources();
  void reload_config();
  void install_dispatcher(std::shared_ptr<const Config> config);
  LogLineFn dispatcher_log();
  void kick_dispatcher();
  void ping_watchdog();
  void accept_trigger(const TriggerRequest& trigger, const TriggerDone& done);

  DaemonOptions options_;
  // The collaborators (daemon.hpp); each is thread-safe on its own.
  Store& store_;
  Runner& runner_;
  LoopClock& clock_;
  std::function<std::unique_ptr<RegistrySource>(const RegistrySourceConfig&)> make_source_;
  std::function<Result<Dispatcher::Senders>(const PagerConfig&)> make_senders_;
  DaemonMetrics metrics_;  // the daemon's own /metrics series; any thread

  // The executors. Declared first, destroyed last: everything below may hold work on them.
  net::io_context loop_;  // run by ONE thread, the caller of run()
  // One per core, each run by one API thread.
  std::vector<std::unique_ptr<net::io_context>> api_ = make_api_workers();
  net::thread_pool pool_{2};  // blocking work; joined before the members below go

  // Shared with the pool and the verification threads; thread-safe on its own.
  std::unique_ptr<VerificationService> service_;
  std::unique_ptr<HttpServer> http_;  // on the api_ io_contexts

  // What the API threads read: swapped by the loop, loaded by every request.
  std::atomic<std::shared_ptr<const ReadModel>> published_;

  // --- loop state: read and written on the loop thread only ---
  DaemonLifecycle lifecycle_ = DaemonLifecycle::reconciling;
  // Keeps loop_.run() running while nothing is queued (its timers need not be Asio's); let go
  // once stopped.
  std::optional<net::executor_work_guard<net::io_context::executor_type>> running_;
  std::shared_ptr<const Config> config_;
  std::shared_ptr<const ReadModel> model_;  // the latest published
  std::unique_ptr<Dispatcher> dispatcher_;
  std::vector<std::unique_ptr<RegistrySource>> sources_;  // lent to the pool while syncing_
  SdNotifier& sd_ = options_.notifier;
  net::signal_set signals_{loop_};
  std::unique_ptr<LoopTimer> tick_ = make_timer(), sync_timer_ = make_timer(),
                             watchdog_timer_ = make_timer(), drain_timer_ = make_timer(),
                             store_watch_ = make_timer();
  std::optional<std::int64_t> data_version_;  // the store's, as the latest read model read it
  std::map<std::int64_t, std::thread> jobs_;  // running verifications
  std::set<std::int64_t> started_;            // started, the read model may still say queued
  // Calibrations of underpowered versions, in spare capacity: the cycle's plan as last built, the
  // one running (it takes one of max_concurrent's slots), and what each finished one of this
  // cycle did (not planned again this cycle; an interrupted one is not listed and resumes).
  struct RunningCalibration {
    std::string model, version;
    UnixSeconds since = 0;
    std::thread thread;
  };
  std::vector<PlannedCalibration> planned_calibrations_;
  std::optional<RunningCalibration> calibration_;
  std::map<std::pair<std::string, std::string>, std::string> calibrated_;
  std::atomic<CalibrationStop> calibration_stop_{CalibrationStop::none};  // + its thread
  // Work in flight, one of each kind at a time (each is independent of the lifecycle):
  bool refreshing_ = false, refresh_again_ = false;  // a read-model build; another one after it
  bool syncing_ = false, sources_stale_ = false;  // a registry sync; the config's sources changed
  bool planning_ = false;                         // a cycle plan
  bool checking_owners_ = false;                  // who owns the `reverify run` rows left running
  bool installing_ = false;  // a new dispatcher is being built; install_next_ waits for it
  std::shared_ptr<const Config> install_next_;
  std::optional<UnixSeconds> planned_period_;
  std::mt19937_64 rng_{std::random_device{}()};  // jitter: seeds each plan's own generator
};

}  // namespace reverify
