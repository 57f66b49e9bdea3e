#include "cli/run_pages.hpp"

#include "daemon/daemon_time.hpp"
#include "daemon/pager/page_builder.hpp"
#include "daemon/pager/router.hpp"
#include "daemon/pager/senders.hpp"
#include "daemon/pipeline_pages.hpp"

namespace reverify::cli {

void deliver_pages(std::ostream& out, const PagerConfig& pager, const Manifest& manifest,
                   const VerificationOutcome& outcome) {
  if (pager.senders.empty() || !find_route(pager, manifest.owner))
    return;
  PageInput input;
  input.model = manifest.model;
  input.version = manifest.version;
  input.owner = manifest.owner;
  input.verdict = outcome.verdict;
  input.moved_inputs = moved_inputs(outcome);
  input.evidence = outcome.evidence;
  input.log_tail = outcome.log_tail;
  input.public_url = pager.public_url;
  input.created_at = rfc3339(system_now());
  PageEvent event = build_page(input);
  auto senders = route_page(pager, event);
  if (!senders.ok()) {
    out << "page not sent: " << senders.error().message << "\n";
    return;
  }
  auto notifiers = make_notifiers(pager);
  if (!notifiers.ok()) {
    out << "page not sent: " << notifiers.error().message << "\n";
    return;
  }
  for (const auto& name : *senders) {
    auto it = notifiers->find(name);
    if (it == notifiers->end())
      continue;
    DeliveryResult result = it->second->deliver(event);
    out << "page " << to_string(event.action) << " " << event.dedup_key << " -> " << name << ": "
        << (result.delivered ? "delivered" : "NOT delivered (" + result.detail + ")") << "\n";
  }
}

}  // namespace reverify::cli
