// Every named enum of every layer (core/enum_names.hpp): each enumerator the enum DECLARES has
// exactly one name in its table, the name reads back as that value, names are unique, and the
// table holds no row for a value the enum does not declare. The enumerators come from the enum
// itself (tests/support/enum_values.hpp), not from the table, so a value added to an enum and
// forgotten in its table fails here. A new named enum is added to the list below (this file
// sits in tests/daemon/ because daemon/ may include every layer).
#include <doctest/doctest.h>

#include <algorithm>
#include <set>
#include <string>

#include "api/daemon_metrics.hpp"
#include "api/metrics.hpp"
#include "attest/vsa.hpp"
#include "core/hashing_paths.hpp"
#include "core/log.hpp"
#include "core/manifest.hpp"
#include "core/rebuild_mode.hpp"
#include "core/result.hpp"
#include "core/statistic.hpp"
#include "core/verdict_class.hpp"
#include "core/verification_state.hpp"
#include "daemon/daemon.hpp"
#include "pager/notifier.hpp"
#include "pager/pager_config.hpp"
#include "policies/attention.hpp"
#include "policies/bands.hpp"
#include "policies/bisect.hpp"
#include "policies/gate.hpp"
#include "policies/headline.hpp"
#include "policies/lint.hpp"
#include "policies/rotation.hpp"
#include "policies/verdict_model.hpp"
#include "runners/runner_kind.hpp"
#include "store/store.hpp"
#include "tests/support/enum_values.hpp"

namespace reverify {
namespace {

template <class E>
void check_names(const char* enum_name) {
  CAPTURE(enum_name);
  const auto declared = test::declared_enumerators<E>();
  REQUIRE_FALSE(declared.empty());
  std::set<std::string> names;
  for (E value : declared) {
    const std::string name = to_string(value);
    CAPTURE(static_cast<int>(value));
    CHECK(name != "unknown");
    CHECK(names.insert(name).second);  // unique
    CHECK(enum_from_string<E>(name) == value);
  }
  std::size_t rows = 0;
  for (const auto& row : EnumNames<E>::table) {
    ++rows;
    CAPTURE(row.name);
    CHECK(std::find(declared.begin(), declared.end(), row.value) != declared.end());
  }
  CHECK(rows == declared.size());
  CHECK_FALSE(enum_from_string<E>("no such name").has_value());
}

#define CHECK_ENUM_NAMES(E) check_names<E>(#E)

TEST_CASE("every enumerator of every named enum has one name, and each name reads back") {
  CHECK_ENUM_NAMES(Attention);
  CHECK_ENUM_NAMES(BisectInput);
  CHECK_ENUM_NAMES(CalibrationEnd);
  CHECK_ENUM_NAMES(CalibrationOutcomeKind);
  CHECK_ENUM_NAMES(CheckFamily);
  CHECK_ENUM_NAMES(CheckKind);
  CHECK_ENUM_NAMES(CheckOutcome);
  CHECK_ENUM_NAMES(CheckReading);
  CHECK_ENUM_NAMES(CostBasis);
  CHECK_ENUM_NAMES(DaemonLifecycle);
  CHECK_ENUM_NAMES(ErrorCode);
  CHECK_ENUM_NAMES(GateStatus);
  CHECK_ENUM_NAMES(LintSeverity);
  CHECK_ENUM_NAMES(LogLevel);
  CHECK_ENUM_NAMES(MetricScale);
  CHECK_ENUM_NAMES(PageAction);
  CHECK_ENUM_NAMES(PageFault);
  CHECK_ENUM_NAMES(PageLayout);
  CHECK_ENUM_NAMES(ReadPath);
  CHECK_ENUM_NAMES(RebuildMode);
  CHECK_ENUM_NAMES(ReloadOutcome);
  CHECK_ENUM_NAMES(ReproLevel);
  CHECK_ENUM_NAMES(RunnerKind);
  CHECK_ENUM_NAMES(ScoringMetric);
  CHECK_ENUM_NAMES(ScoringTask);
  CHECK_ENUM_NAMES(SenderKind);
  CHECK_ENUM_NAMES(SkipReason);
  CHECK_ENUM_NAMES(SnapshotKind);
  CHECK_ENUM_NAMES(Stage);
  CHECK_ENUM_NAMES(Statistic);
  CHECK_ENUM_NAMES(SummaryMode);
  CHECK_ENUM_NAMES(SummaryResult);
  CHECK_ENUM_NAMES(VerdictClass);
  CHECK_ENUM_NAMES(VerificationState);
  CHECK_ENUM_NAMES(VerificationTrigger);
  CHECK_ENUM_NAMES(VersionState);
}

}  // namespace
}  // namespace reverify
