#pragma once
// The daemon loop's time, given to it like its other collaborators (daemon.hpp): the wall clock
// the loop and its tasks read (cycle periods, not_before, the read model's "now", jitter, the
// heartbeat) and the loop's timers (the tick, the registry sync, the store watch, the watchdog,
// the drain limit). The times the store records (a verification's queued, started and finished
// times, a verdict's) come from the store's own clock (store/store.hpp, Store::open's ClockFn),
// which reverifyd's main and the in-process tests set to the same time as this one. reverifyd runs
// on SystemLoopClock (the system clock and Asio's steady timers); the in-process tests on a manual
// clock that fires the timers when the test moves it on (ManualClock in
// tests/daemon/loop_harness.hpp, also given to the store), so they never wait for real time to
// pass.

#include <chrono>
#include <functional>
#include <memory>

#include <boost/asio/io_context.hpp>

#include "core/unix_time.hpp"

namespace reverify {

// Loop thread only.
class LoopTimer {
 public:
  virtual ~LoopTimer() = default;
  // `fire` runs on the loop once `after` has passed, unless the timer is armed again or
  // cancelled first: a wait that was replaced or cancelled never fires, even when its time
  // had already come.
  virtual void arm(std::chrono::milliseconds after, std::function<void()> fire) = 0;
  virtual void cancel() = 0;
};

class LoopClock {
 public:
  virtual ~LoopClock() = default;
  virtual UnixSeconds now() const = 0;  // any thread
  // A timer whose callbacks run on `loop`; destroyed before `loop` is.
  virtual std::unique_ptr<LoopTimer> timer(boost::asio::io_context& loop) = 0;
};

class SystemLoopClock final : public LoopClock {
 public:
  UnixSeconds now() const override { return system_now(); }
  std::unique_ptr<LoopTimer> timer(boost::asio::io_context& loop) override;
};

}  // namespace reverify
