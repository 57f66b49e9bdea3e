#pragma once
// /metrics in the Prometheus text exposition format (version 0.0.4): the read model's series,
// rendered once per read model so a scrape costs a string copy, then the daemon's own
// (api/daemon_metrics.hpp), rendered at the scrape. Checked by `promtool check metrics` in the
// tests; docs/operating.md "Metrics, alert rules and the dashboard" lists every series and its
// labels.
//
// Cardinality is bounded by the inventory and the config: the per-version series exist only for
// the model versions a registry source lists now (removed ones drop out), one line each; other
// labels are enums (verdict class, state, stage, runner, outcome) or configured names (pager
// senders, registry sources). No verification id and no free text is ever a label.

#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>

#include "core/enum_names.hpp"

namespace reverify {

struct ReadModel;
struct VersionView;

inline constexpr const char* kMetricsContentType = "text/plain; version=0.0.4; charset=utf-8";

// Where a listed version stands by its verdicts, for reverify_version_state: the class of the
// verdict the release gate goes by (the latest conclusive one: passed, failed:*, uncalibrated);
// `error` when it has only error:* verdicts, `never` when it has none.
enum class VersionState { passed, failed, uncalibrated, error, never };
template <>
struct EnumNames<VersionState> {
  static constexpr EnumName<VersionState> table[] = {
      {VersionState::passed, "passed"},
      {VersionState::failed, "failed"},
      {VersionState::uncalibrated, "uncalibrated"},
      {VersionState::error, "error"},
      {VersionState::never, "never"},
  };
};
VersionState version_state(const VersionView& view);

std::string render_metrics(const ReadModel& model);

// Pieces of the text format, shared by both renderers.
std::string metric_label_value(std::string_view value);  // escaped for "..."
void metric_header(std::ostream& out, const char* name, const char* type, const char* help);
std::string metric_number(double value);
// A series of one sample without labels: its header, then "name value".
void metric_single(std::ostream& out, const char* name, const char* type, const char* help,
                   std::int64_t value);

}  // namespace reverify
