#pragma once
// daemon/: the reverifyd process (main, this loop, registry sources, sd_notify; it logs through
// core/log.hpp). The top layer: it may include every layer below it; nothing includes daemon/.
//
// reverifyd's threads, and what each may touch (STYLE.md):
//   - the LOOP: one io_context run by one thread (the caller of run()). It owns every piece of
//     the daemon's state: the config, the scheduler's bookkeeping, the job table, the timers and
//     signals, the registry sources between syncs, the pager dispatcher, the random generator.
//     Nothing else reads or writes them, so they need no lock.
//   - the API threads: a second io_context run by one thread per core, for the HTTP listener and
//     its connections. A request reads only the immutable ReadModel that the loop publishes
//     through one atomic shared_ptr (api/snapshot.hpp); a manual trigger is handed to the loop,
//     and its 202 is sent once the loop has the row committed.
//   - the POOL: a small thread pool for blocking work (SQLite writes and reads, read-model builds,
//     registry syncs, config loads, cycle plans, building pager senders). Each task gets copies
//     of what it needs from the loop and posts its result back to the loop. A registry sync
//     parses its manifests on up to 8 threads of its own, joined before the sync returns.
//   - one thread per running verification (it blocks on the runner for hours); it gets its
//     settings from the loop when it starts and posts its verdict back.
//   - at most one calibration thread (seed-only reruns of an underpowered version, for hours);
//     it gets its settings from the loop when it starts, reads one atomic the loop writes (stop
//     before the next run: a verification needs the slot, or the daemon is stopping) and posts
//     its outcome back.
//   - the pager dispatcher's own thread (libcurl), kicked from the loop (pager/dispatcher.hpp).
// The store (one SQLite connection behind its own mutex) is the state these threads share.
// Lifecycle:
//   start: migrate the store, listen (answering 503 "starting" until the first read model),
//          build the first read model from the store (READY=1 once it is published), reconcile
//          verifications left running (reattach or error:runner-lost + retry), then sync the
//          registry sources; nothing new starts before the reconciliation is done;
//   loop:  sync every sync_interval, plan each new cycle once (the plan and its queued
//          verifications in one transaction), start due verifications up to max_concurrent,
//          manual triggers first; with a slot free and no verification due, the cycle's next
//          planned calibration (schedule.calibrations_per_cycle), which holds one of the
//          max_concurrent slots and gives it back after its current run when a verification
//          becomes due (its runs kept, resumed later); WATCHDOG=1 from the loop itself; every
//          second, SQLite's data_version: a commit by another process (`reverify run --config`
//          on the same state_dir) rebuilds the read model at once;
//   SIGHUP: reload the config (an invalid one, or one changing what applies only at start:
//          state_dir, work_dir, listen address, runner, keeps the old, logged);
//   SIGTERM/SIGINT: stop starting work, let running verifications finish for up to
//          stop_timeout (a calibration stops after its current run, keeping its runs), then exit;
//          a verification still running is left to its runner and reconciled on the next start
//          (a second signal exits at once); a calibration cut off this way loses the run in
//          flight only (it stores its runs one by one) and is planned again.

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>

#include "core/result.hpp"
#include "core/unix_time.hpp"
#include "settings/config.hpp"

namespace reverify {

struct DaemonOptions {
  std::filesystem::path config_path;  // re-read on SIGHUP
  ClockFn clock = system_now;         // called from every thread: must be thread-safe
  // Called once listening, with the bound port (tests use port 0).
  std::function<void(std::uint16_t port)> on_listening;
};

class DaemonImpl;

class Daemon {
 public:
  static Result<std::unique_ptr<Daemon>> create(Config config, DaemonOptions options);
  ~Daemon();
  // Runs the loop on the calling thread until SIGTERM/SIGINT (or stop()) and the drain end.
  // Returns the process exit status.
  int run();
  void stop();  // from any thread: behaves like SIGTERM

 private:
  explicit Daemon(std::unique_ptr<DaemonImpl> impl);
  std::unique_ptr<DaemonImpl> impl_;
};

}  // namespace reverify
