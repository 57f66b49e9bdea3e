#pragma once
// Where one model version stands, as the gate and the status page see it: the gate's decision,
// the attention rank (policies/attention.hpp) and the verdicts behind them, from the read model.

#include <cstdint>
#include <unordered_map>

#include "api/snapshot.hpp"
#include "policies/attention.hpp"
#include "policies/gate.hpp"

namespace reverify {

// The verdict the gate goes by: the latest conclusive one, or with `mode` that mode's; null if
// none. Points into `view` (no copy on the gate's path).
const VerdictBrief* conclusive_in(const VersionView& view, std::optional<RebuildMode> mode);
// What the config says about every gate decision: gate.require_power, and the daemon's
// --config for the commands a reason suggests. Points into `model`'s config.
struct GatePolicy {
  bool require_power = false;
  std::string_view command_scope;
};
GatePolicy gate_policy(const ReadModel& model);
// The gate's facts about a listed version (listed = false for a removed one), under `policy`;
// with `mode`, only that mode's verdicts count (the gate's ?mode=).
GateFacts gate_facts(const VersionView& view, const GatePolicy& policy,
                     std::optional<RebuildMode> mode = std::nullopt);

struct VersionStatus {
  const VersionView* view = nullptr;
  GateDecision gate;
  Attention attention = Attention::fresh;
  bool underpowered = false;  // the conclusive verdict's bands cannot catch the declared shift
  // The newest verdict when it is error:* and newer than the conclusive one (else null): shown
  // beside the answer, never counted.
  const VerdictBrief* newer_error = nullptr;
  // The conclusive verdict's headline and counts (summary_text of its stored summary) when it is
  // not a pass: the status page's short why, in place of the gate's full reason.
  std::string headline;
};

// The recent verifications by id (ReadModel::find_verification scans; a page over 100,000
// versions looks up one per version).
class RecentIndex {
 public:
  explicit RecentIndex(const ReadModel& model);
  const VerificationRow* find(std::int64_t id) const;

 private:
  std::unordered_map<std::int64_t, const VerificationRow*> rows_;
};

// REQUIRES: max_age_s >= 0. Reads the verdicts' stored summaries only, never their checks.
VersionStatus version_status(const VersionView& view, std::int64_t max_age_s, UnixSeconds now,
                             const GatePolicy& policy);

}  // namespace reverify
