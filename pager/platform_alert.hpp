#pragma once
// The operator-level alert of a platform condition (policies/source_condition.hpp): one page per
// registry source that moved as a whole, instead of one owner page per version. Pure: no I/O.
//
// It is routed as a page of `pager.operator_owner` (that owner's route, else the "*" route) and
// grouped under dedup_key "reverify/source/<source>": the trigger when the condition is found,
// the resolve when a verification of the source finds its inputs again. Its model field reads
// "source:<source>" and its version the condition ("inputs-moved"), so receivers that group by
// model and version (Alertmanager's labels) keep one alert per source. details.fault is "system".

#include <cstdint>
#include <string>

#include "pager/notifier.hpp"
#include "policies/source_condition.hpp"

namespace reverify {

struct PlatformAlertInput {
  std::string source;
  SourceCondition condition = SourceCondition::inputs_moved;
  PageAction action = PageAction::trigger;  // trigger: found; resolve: the inputs are found again
  std::string owner;                        // pager.operator_owner: whose route takes it
  std::int64_t versions = 0;                // the source's versions when it was found
  std::string reason;                       // the rule's, when found
  std::string public_url;                   // base of links; "" = no links
  std::int64_t verification_id = 0;         // the verification that found it (or cleared it)
  std::string created_at;                   // RFC 3339 UTC
};

// "reverify/source/<source>".
std::string platform_alert_dedup_key(const std::string& source);

PageEvent build_platform_alert(const PlatformAlertInput& input);

}  // namespace reverify
