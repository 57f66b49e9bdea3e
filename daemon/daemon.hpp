#pragma once
// daemon/: the reverifyd process (main, this loop, registry sources, sd_notify, logging). The top
// layer: it may include every layer below it; nothing includes daemon/.
//
// reverifyd's orchestrator (STYLE.md): ONE io_context on one thread owns the scheduler state,
// the job table, the read model and the HTTP handlers. Blocking work goes elsewhere:
//   - a small thread pool for SQLite writes, registry syncs and read-model builds;
//   - one thread per running verification (it blocks on the runner for hours);
//   - the pager dispatcher's own thread (libcurl).
// Each posts its result back to the io_context. Lifecycle:
//   start: migrate the store, reconcile verifications left running (reattach or
//          error:runner-lost + retry), sync the registry sources, listen, READY=1;
//   loop:  sync every sync_interval, plan each new cycle once (the plan and its queued
//          verifications in one transaction), start due verifications up to max_concurrent,
//          manual triggers first; WATCHDOG=1 from the loop itself;
//   SIGHUP: reload the config (an invalid one keeps the old, logged);
//   SIGTERM/SIGINT: stop starting work, let running verifications finish for up to
//          stop_timeout, then exit; what is still running is reconciled on the next start.

#include <filesystem>
#include <memory>

#include "core/result.hpp"
#include "core/unix_time.hpp"
#include "settings/config.hpp"

namespace reverify {

struct DaemonOptions {
  std::filesystem::path config_path;  // re-read on SIGHUP
  ClockFn clock = system_now;
  // Called once listening, with the bound port (tests use port 0).
  std::function<void(std::uint16_t port)> on_listening;
};

class DaemonImpl;

class Daemon {
 public:
  static Result<std::unique_ptr<Daemon>> create(Config config, DaemonOptions options);
  ~Daemon();
  // Blocks until SIGTERM/SIGINT (or stop()). Returns the process exit status.
  int run();
  void stop();  // thread-safe: behaves like SIGTERM

 private:
  explicit Daemon(std::unique_ptr<DaemonImpl> impl);
  std::unique_ptr<DaemonImpl> impl_;
};

}  // namespace reverify
