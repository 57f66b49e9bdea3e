#pragma once
// `reverify run` outside the daemon: the verdict's page goes straight to the senders the
// configured route picks (one attempt each, no outbox), so a foreground run pages like the daemon.

#include <ostream>

#include "daemon/pager/pager_config.hpp"
#include "daemon/pipeline.hpp"

namespace reverify::cli {

// Prints one line per delivery ("page trigger -> sink: delivered"). Nothing when no route.
void deliver_pages(std::ostream& out, const PagerConfig& pager, const Manifest& manifest,
                   const VerificationOutcome& outcome);

}  // namespace reverify::cli
