#pragma once
// `reverify run` sends the pages its verdict recorded in the outbox, with one pass of the daemon's
// dispatcher: at least once, like the daemon (receivers deduplicate by the page's key). A page
// that cannot be delivered stays in the outbox of a --config state_dir for the daemon to retry.

#include <ostream>

#include "pager/pager_config.hpp"
#include "store/store.hpp"

namespace reverify::cli {

// Prints one summary line ("pages: 1 delivered, 0 to retry, 0 failed"), and the dispatcher's
// lines for each failed attempt. Nothing when no sender is configured.
void deliver_recorded_pages(std::ostream& out, Store& store, const PagerConfig& pager,
                            bool store_is_throwaway);

}  // namespace reverify::cli
