#include "daemon/loop_clock.hpp"

#include <boost/asio/steady_timer.hpp>

namespace reverify {
namespace {

class SteadyLoopTimer final : public LoopTimer {
 public:
  explicit SteadyLoopTimer(boost::asio::io_context& loop) : timer_(loop) {}

  void arm(std::chrono::milliseconds after, std::function<void()> fire) override {
    const auto armed = ++generation_;
    timer_.expires_after(after);  // a pending wait ends with operation_aborted
    timer_.async_wait([this, armed, fire = std::move(fire)](boost::system::error_code ec) {
      // An expired wait whose handler was already queued is not aborted by a re-arm or a
      // cancel: the generation tells it apart.
      if (!ec && armed == generation_)
        fire();
    });
  }
  void cancel() override {
    ++generation_;
    timer_.cancel();
  }

 private:
  boost::asio::steady_timer timer_;
  std::uint64_t generation_ = 0;  // loop thread only
};

}  // namespace

std::unique_ptr<LoopTimer> SystemLoopClock::timer(boost::asio::io_context& loop) {
  return std::make_unique<SteadyLoopTimer>(loop);
}

}  // namespace reverify
