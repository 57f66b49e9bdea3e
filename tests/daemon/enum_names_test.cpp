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
#include <vector>

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
#include "policies/job_check.hpp"
#include "policies/lint.hpp"
#include "policies/rotation.hpp"
#include "policies/source_condition.hpp"
#include "policies/verdict_model.hpp"
#include "runners/runner.hpp"
#include "runners/runner_kind.hpp"
#include "runners/slurm_config.hpp"
#include "runners/slurm_records.hpp"
#include "settings/config.hpp"
#include "store/delivery_state.hpp"
#include "store/store.hpp"
#include "tests/support/enum_values.hpp"
#include "verify/cycle_plan.hpp"

namespace reverify {
namespace {

template <class E>
void check_names(const char* enum_name) {
  const std::string enum_type = enum_name;
  CAPTURE(enum_type);
  const auto declared = test::declared_enumerators<E>();
  REQUIRE_FALSE(declared.empty());
  std::set<std::string> names;
  for (E value : declared) {
    CAPTURE(static_cast<int>(value));
    const auto& table = EnumNames<E>::table;
    CHECK(std::any_of(std::begin(table), std::end(table),
                      [value](const auto& row) { return row.value == value; }));
    const std::string name = to_string(value);
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

// The mechanism itself: an enum whose table forgot a value shows that value among its declared
// enumerators, so check_names would fail on it.
enum class Forgotten { first, second, third };

TEST_CASE("an enumerator its table forgot is found") {
  const auto declared = test::declared_enumerators<Forgotten>();
  CHECK(declared == std::vector<Forgotten>{Forgotten::first, Forgotten::second, Forgotten::third});
}

TEST_CASE("every enumerator of every named enum has one name, and each name reads back") {
  CHECK_ENUM_NAMES(Attention);
  CHECK_ENUM_NAMES(BisectInput);
  CHECK_ENUM_NAMES(CalibratedReference);
  CHECK_ENUM_NAMES(CalibrationEnd);
  CHECK_ENUM_NAMES(CalibrationOutcomeKind);
  CHECK_ENUM_NAMES(CheckFamily);
  CHECK_ENUM_NAMES(CheckKind);
  CHECK_ENUM_NAMES(CheckOutcome);
  CHECK_ENUM_NAMES(CheckReading);
  CHECK_ENUM_NAMES(CostBasis);
  CHECK_ENUM_NAMES(DaemonLifecycle);
  CHECK_ENUM_NAMES(DeliveryState);
  CHECK_ENUM_NAMES(ErrorCode);
  CHECK_ENUM_NAMES(FindingStatus);
  CHECK_ENUM_NAMES(GateStatus);
  CHECK_ENUM_NAMES(JobFailure);
  CHECK_ENUM_NAMES(JobNetwork);
  CHECK_ENUM_NAMES(JobQueueState);
  CHECK_ENUM_NAMES(LintSeverity);
  CHECK_ENUM_NAMES(LogLevel);
  CHECK_ENUM_NAMES(MetricScale);
  CHECK_ENUM_NAMES(PageAction);
  CHECK_ENUM_NAMES(PageFault);
  CHECK_ENUM_NAMES(PageLayout);
  CHECK_ENUM_NAMES(ReadPath);
  CHECK_ENUM_NAMES(RebuildMode);
  CHECK_ENUM_NAMES(ReleaseState);
  CHECK_ENUM_NAMES(ReloadOutcome);
  CHECK_ENUM_NAMES(ReproLevel);
  CHECK_ENUM_NAMES(RunnerKind);
  CHECK_ENUM_NAMES(ScoringMetric);
  CHECK_ENUM_NAMES(ScoringTask);
  CHECK_ENUM_NAMES(SenderKind);
  CHECK_ENUM_NAMES(SkipReason);
  CHECK_ENUM_NAMES(SlurmContainerRuntime);
  CHECK_ENUM_NAMES(SlurmJobState);
  CHECK_ENUM_NAMES(SnapshotKind);
  CHECK_ENUM_NAMES(SourceCondition);
  CHECK_ENUM_NAMES(SourceKind);
  CHECK_ENUM_NAMES(Stage);
  CHECK_ENUM_NAMES(StoreUse);
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
