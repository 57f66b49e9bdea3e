#include "pager/platform_alert.hpp"

#include "pager/page_builder.hpp"

namespace reverify {

std::string platform_alert_dedup_key(const std::string& source) {
  return truncate_utf8("reverify/source/" + source, kMaxDedupKeyChars);
}

PageEvent build_platform_alert(const PlatformAlertInput& input) {
  PageEvent event;
  event.dedup_key = platform_alert_dedup_key(input.source);
  event.action = input.action;
  event.model = "source:" + input.source;
  event.version = to_string(input.condition);
  event.owner = input.owner;
  event.verification_id = input.verification_id;
  event.cls = VerdictClass::error_infra;
  event.fault = PageFault::system;
  event.created_at = input.created_at;
  if (input.action == PageAction::resolve) {
    event.summary = "reverify: registry source " + input.source +
                    " finds its inputs again (verification " +
                    std::to_string(input.verification_id) + "); its versions are verified as usual";
  } else {
    event.summary = "reverify: registry source " + input.source + " moved: all " +
                    std::to_string(input.versions) +
                    " of its versions miss their inputs at once (the registry moved or a mount "
                    "is missing). No owner was paged; the versions keep their last verdicts. "
                    "Point sources." +
                    input.source + " at the registry's new place, or restore the mount.";
  }
  event.summary = truncate_utf8(event.summary, kMaxSummaryChars);
  event.explanation = input.reason;
  event.details = {{"source", input.source},
                   {"condition", to_string(input.condition)},
                   {"versions", input.versions},
                   {"fault", to_string(PageFault::system)}};
  if (!input.public_url.empty()) {
    if (input.verification_id > 0)
      event.links.push_back(
          {"verification " + std::to_string(input.verification_id),
           input.public_url + "/verifications/" + std::to_string(input.verification_id)});
    event.links.push_back({"status page", input.public_url + "/"});
  }
  return event;
}

}  // namespace reverify
