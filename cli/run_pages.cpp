#include "cli/run_pages.hpp"

#include "pager/dispatcher.hpp"
#include "pager/senders.hpp"

namespace reverify::cli {

void deliver_recorded_pages(std::ostream& out, Store& store, const PagerConfig& pager,
                            bool store_is_throwaway) {
  if (pager.senders.empty())
    return;
  auto notifiers = make_notifiers(pager);
  if (!notifiers.ok()) {
    out << "pages not sent: " << notifiers.error().message << "\n";
    return;
  }
  store.set_outbox_retry(pager.retry);
  // The report's own lines: `reverify run` prints its pages where it prints the rest.
  Dispatcher dispatcher(store, std::move(*notifiers),
                        [&out](LogLevel level, const std::string& line, const LogFields&) {
                          out << to_string(level) << ": " << line << "\n";
                        });
  auto stats = dispatcher.drain_once(PageClock::now());
  if (!stats.ok()) {
    out << "pages not sent: " << stats.error().message << "\n";
    return;
  }
  out << "pages: " << stats->delivered << " delivered, " << stats->retrying << " to retry, "
      << stats->failed << " failed";
  if (stats->retrying > 0) {
    out << (store_is_throwaway ? " (no --config: nothing keeps the undelivered ones)"
                               : " (kept in the outbox; reverifyd retries them)");
  }
  out << "\n";
}

}  // namespace reverify::cli
