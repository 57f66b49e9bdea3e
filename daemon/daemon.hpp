#pragma once
// daemon/: the reverifyd process (main, this loop, its clock, registry sources, sd_notify; it
// logs through core/log.hpp). The top layer: it may include every layer below it; nothing
// includes daemon/.
//
// What the daemon talks to comes through Daemon::create (DaemonCollaborators): the store, the
// runner, the loop's clock, and factories for the registry sources and the pager's senders, each
// made anew from the config at start and on every accepted reload. reverifyd's main makes the
// real ones from the config; the in-process tests give fakes and a manual clock
// (tests/daemon/loop_test.cpp).
//
// reverifyd's threads, and what each may touch:
//   - the LOOP: one io_context run by one thread (the caller of run()). It owns every piece of
//     the daemon's state: the config, its lifecycle, the scheduler's bookkeeping, the job table,
//     the timers and signals, the registry sources between syncs, the pager dispatcher, the
//     random generator. Nothing else reads or writes them, so they need no lock.
//   - the API threads: one per core, each running an io_context of its own, for the HTTP
//     listener and its connections (api/http_server.hpp hands each connection to one of them). A
//     request reads only the immutable ReadModel that the loop publishes through one atomic
//     shared_ptr (api/snapshot.hpp); a manual trigger is handed to the loop, and its 202 is sent
//     once the loop has the row committed.
//   - the POOL: a small thread pool for blocking work (SQLite writes and reads, read-model builds,
//     registry syncs, config loads, cycle plans, building pager senders, checking who owns a
//     `reverify run`, checking the store). Each task gets copies of what it needs from the loop and
//     posts its result back to the loop. A registry sync parses its manifests on up to 8 threads of
//     its own, joined before the sync returns.
//   - one thread per running verification (it blocks on the runner for hours); it gets its
//     settings from the loop when it starts and posts its verdict back.
//   - at most one calibration thread (seed-only reruns of an underpowered version, for hours);
//     it gets its settings from the loop when it starts, reads one atomic the loop writes (stop
//     before the next run: a verification needs the slot, or the daemon is stopping) and posts
//     its outcome back.
//   - the pager dispatcher's own thread (libcurl), kicked from the loop (pager/dispatcher.hpp).
// The store (one SQLite connection behind its own mutex) is the state these threads share.
//
// Thread failures. An exception is a bug, never an expected failure (core/result.hpp). One that
// escapes a task of the loop, an API thread, a pool task, a verification's or the calibration's
// thread is caught where that thread runs it, logged as one error line naming the thread and what
// it was doing ("internal error on the thread of verification 12 (m@v): ..."), and the process
// ends at once with exit status 70, without draining: the state is no longer trusted, so nothing
// more is written. Its running verifications are left to their runners and reconciled on the next
// start, as after a kill -9; systemd restarts it (Restart=on-failure). Any other thread (the
// pager dispatcher's) ends the same way through the terminate handler install_crash_handler()
// sets, which reverifyd's main installs first thing.
//
// Lifecycle (one state, DaemonLifecycle below; every transition happens on the loop, and the
// STATUS= reverifyd sends systemd with each new read model names it):
//   reconciling: (the caller holds the state_dir's lock and opened its store) listen, answering
//          503 "starting" until the first read model; build the first read
//          model from the store (READY=1 once it is published), and reconcile the verifications
//          left running: reverifyd's own (reattach, or error:runner-lost + retry) and those of a
//          `reverify run` whose process is gone (verify/state_dir.hpp); a `reverify run` still
//          alive keeps its row, which is reconciled once its owner is gone. Nothing new starts;
//   first_sync: due verifications start; no cycle is planned over an inventory the registry
//          sources have not listed yet;
//   serving: sync every sync_interval, plan each new cycle once (the plan and its queued
//          verifications in one transaction), start due verifications up to max_concurrent,
//          manual triggers first; with a slot free and no verification due, the cycle's next
//          planned calibration (schedule.calibrations_per_cycle), which holds one of the
//          max_concurrent slots and gives it back after its current run when a verification
//          becomes due (its runs kept, resumed later); every tick, the rows of `reverify run`
//          processes that ended without a verdict are reconciled; WATCHDOG=1 from the loop
//          itself; every second, SQLite's data_version: a commit by another process (`reverify
//          run --config` on the same state_dir) rebuilds the read model at once; every 10 s, a
//          check that the store works (its file is the one opened and whole, and a write
//          commits: Store::check_health). That check, the read-model builds and the loop's own
//          writes (triggers) set whether the store is failing (DaemonMetrics::store_used):
//          /healthz answers 503 with the reason and reverify_store_ok is 0 until the failing
//          kind of use works again; the loop logs the change both ways, once. Nothing else
//          changes: a daemon whose store fails keeps serving what it last read;
//   SIGHUP (or reload()): reload the config (an invalid one, or one changing what applies only
//          at start: state_dir, work_dir, listen address, runner, keeps the old, logged); what
//          --check-config would report about the new one is logged as warnings, as at start;
//   draining: SIGTERM/SIGINT (or stop()): nothing new starts, running verifications get up to
//          stop_timeout to finish (a calibration stops after its current run, keeping its runs),
//          then the process exits; a verification still running is left to its runner and
//          reconciled on the next start (a second signal exits at once); a calibration cut off
//          this way loses the run in flight only (it stores its runs one by one) and is planned
//          again;
//   stopped: drained; no timer is armed again, the loop runs out of work and run() returns 0.

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>

#include "core/result.hpp"
#include "daemon/loop_clock.hpp"
#include "daemon/registry_source.hpp"
#include "daemon/sd_notify.hpp"
#include "pager/dispatcher.hpp"
#include "runners/runner.hpp"
#include "settings/config.hpp"
#include "store/store.hpp"

namespace reverify {

// Where the daemon is in its life (above, "Lifecycle").
enum class DaemonLifecycle { reconciling, first_sync, serving, draining, stopped };
template <>
struct EnumNames<DaemonLifecycle> {
  static constexpr EnumName<DaemonLifecycle> table[] = {
      {DaemonLifecycle::reconciling, "reconciling"}, {DaemonLifecycle::first_sync, "first_sync"},
      {DaemonLifecycle::serving, "serving"},         {DaemonLifecycle::draining, "draining"},
      {DaemonLifecycle::stopped, "stopped"},
  };
};

// What the daemon talks to. The store, runner and clock must outlive the Daemon; the store is
// the state_dir's, opened (and that state_dir locked) by the caller.
struct DaemonCollaborators {
  Store& store;
  Runner& runner;
  LoopClock& clock;
  // One registry source per config `sources:` entry; called on the loop (no I/O).
  std::function<std::unique_ptr<RegistrySource>(const RegistrySourceConfig&)> make_source;
  // The pager's senders for a config; called on the pool (they read their secret files).
  std::function<Result<Dispatcher::Senders>(const PagerConfig&)> make_senders;
};

struct DaemonOptions {
  std::filesystem::path config_path;  // re-read on SIGHUP and reload()
  // Called once listening, with the bound port (tests use port 0).
  std::function<void(std::uint16_t port)> on_listening;
  bool handle_signals = true;  // SIGTERM, SIGINT, SIGHUP; in-process tests call stop()/reload()
  SdNotifier notifier;  // READY=1, RELOADING=1, STATUS=, WATCHDOG=1 ($NOTIFY_SOCKET by default)
};

class DaemonImpl;

class Daemon {
 public:
  // Listens (config api.address/port) and makes the first sources and senders; run() does the
  // rest. Errors: the listen address cannot be bound.
  static Result<std::unique_ptr<Daemon>> create(Config config, DaemonCollaborators with,
                                                DaemonOptions options);
  ~Daemon();
  // Runs the loop on the calling thread until SIGTERM/SIGINT (or stop()) and the drain end.
  // Returns the process exit status.
  int run();
  void stop();    // from any thread: behaves like SIGTERM
  void reload();  // from any thread: behaves like SIGHUP

 private:
  explicit Daemon(std::unique_ptr<DaemonImpl> impl);
  std::unique_ptr<DaemonImpl> impl_;
};

// Makes std::terminate (an exception no thread caught) log one error line and end the process
// with status 70, as every thread failure does (above, "Thread failures").
void install_crash_handler();

}  // namespace reverify
