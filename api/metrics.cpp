#include "api/metrics.hpp"

#include <cstdio>
#include <sstream>

#include "api/page_parts.hpp"
#include "api/snapshot.hpp"
#include "core/verdict_class.hpp"
#include "core/version.hpp"

namespace reverify {
namespace {

constexpr VerdictClass kAllClasses[] = {
    VerdictClass::passed,
    VerdictClass::failed_input_drift,
    VerdictClass::failed_out_of_tolerance,
    VerdictClass::failed_distribution_shift,
    VerdictClass::error_manifest_invalid,
    VerdictClass::error_provision,
    VerdictClass::error_job,
    VerdictClass::error_runner_lost,
    VerdictClass::error_infra,
    VerdictClass::uncalibrated,
};

// `{model="m",version="v"` (unclosed: callers add labels and the brace).
std::string version_labels(const std::string& model, const std::string& version) {
  return "{model=\"" + metric_label_value(model) + "\",version=\"" + metric_label_value(version) +
         "\"";
}

// The per-version series (one line each per listed version), and how many versions are in each
// state.
void version_series(std::ostream& out, const ReadModel& model) {
  std::string state_lines, conclusive_lines, seen_lines, passed_lines, error_lines;
  std::int64_t by_state[std::size(EnumNames<VersionState>::table)] = {};
  for (const auto& [name, by_version] : model.models) {
    for (const auto& [version, view] : by_version) {
      if (view.row.removed)
        continue;
      const std::string labels = version_labels(name, version);
      const VersionState state = version_state(view);
      ++by_state[static_cast<std::size_t>(state)];
      state_lines += "reverify_version_state" + labels + ",owner=\"" +
                     metric_label_value(view.row.owner) + "\",state=\"" + to_string(state) +
                     "\"} 1\n";
      conclusive_lines += "reverify_version_last_conclusive_timestamp_seconds" + labels + "} " +
                          std::to_string(view.conclusive ? view.conclusive->finished_at : 0) + "\n";
      // A version's freshness runs from its last pass, or, never passed, from its listing: one
      // of the two, never both (a line fewer per version at 100,000 versions).
      if (view.passed) {
        passed_lines += "reverify_last_verified_timestamp_seconds" + labels + "} " +
                        std::to_string(view.passed->finished_at) + "\n";
      } else {
        seen_lines += "reverify_version_first_seen_timestamp_seconds" + labels + "} " +
                      std::to_string(view.row.first_seen_at) + "\n";
      }
      const auto& latest = view.latest;
      if (latest && is_error(latest->cls) &&
          (!view.conclusive || latest->id != view.conclusive->id))
        error_lines += "reverify_version_newest_error" + labels + ",class=\"" +
                       to_string(latest->cls) + "\"} 1\n";
    }
  }
  metric_header(out, "reverify_versions", "gauge",
                "Listed model versions by state (as reverify_version_state counts them).");
  for (const auto& entry : EnumNames<VersionState>::table) {
    out << "reverify_versions{state=\"" << entry.name << "\"} "
        << by_state[static_cast<std::size_t>(entry.value)] << "\n";
  }
  const struct {
    const char* name;
    const char* help;
    const std::string& lines;
  } per_version[] = {
      {"reverify_version_state",
       "1 for each listed model version, labelled with its owner and its state: the class of the "
       "verdict the gate goes by (passed, failed, uncalibrated), error when it has only error:* "
       "verdicts, never when it has none.",
       state_lines},
      {"reverify_version_last_conclusive_timestamp_seconds",
       "Unix time of each listed version's latest conclusive verdict (passed, failed:*, "
       "uncalibrated); 0 when it has none (never verified, or only errors).",
       conclusive_lines},
      {"reverify_version_first_seen_timestamp_seconds",
       "Unix time a registry source first listed each listed version that never passed (the "
       "others have reverify_last_verified_timestamp_seconds).",
       seen_lines},
      {"reverify_version_newest_error",
       "1 for each listed version whose newest verdict is error:* (newer than its conclusive "
       "one), labelled with that class.",
       error_lines},
      {"reverify_last_verified_timestamp_seconds",
       "Unix time of the latest passed verification of each listed version that has one.",
       passed_lines},
  };
  for (const auto& family : per_version) {
    metric_header(out, family.name, "gauge", family.help);
    out << family.lines;
  }
}

}  // namespace

std::string metric_label_value(std::string_view value) {
  std::string out;
  out.reserve(value.size());
  for (char c : value) {
    if (c == '\\' || c == '"') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

void metric_header(std::ostream& out, const char* name, const char* type, const char* help) {
  out << "# HELP " << name << " " << help << "\n# TYPE " << name << " " << type << "\n";
}

void metric_single(std::ostream& out, const char* name, const char* type, const char* help,
                   std::int64_t value) {
  metric_header(out, name, type, help);
  out << name << " " << value << "\n";
}

std::string metric_number(double value) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", value);
  return buf;
}

VersionState version_state(const VersionView& view) {
  if (view.conclusive) {
    if (view.conclusive->cls == VerdictClass::passed)
      return VersionState::passed;
    if (is_failure(view.conclusive->cls))
      return VersionState::failed;
    return VersionState::uncalibrated;
  }
  return view.latest ? VersionState::error : VersionState::never;
}

namespace {

// Page deliveries per sender (pager.senders), so an alert can name the receiver that stopped
// accepting pages.
void page_delivery_series(std::ostream& out, const DeliveryCounts& deliveries) {
  const struct {
    const char *name, *type, *help;
    std::int64_t DeliveryCounts::Counts::*count;
  } page_series[] = {
      {"reverify_pages_sent_total", "counter", "Pages accepted by a receiver, by sender.",
       &DeliveryCounts::Counts::sent},
      {"reverify_pages_failed_total", "counter",
       "Pages given up on (rejected, or out of attempts), by sender.",
       &DeliveryCounts::Counts::failed},
      {"reverify_pages_pending", "gauge", "Pages waiting for a (re)try, by sender.",
       &DeliveryCounts::Counts::pending},
      {"reverify_page_delivery_attempts_total", "counter",
       "Delivery attempts recorded, by sender: every failed one and each page's accepted one.",
       &DeliveryCounts::Counts::attempts},
      {"reverify_page_delivery_failures_total", "counter",
       "Delivery attempts that failed, by sender: every one (a retried page counts each "
       "failure), not only give-ups.",
       &DeliveryCounts::Counts::failed_attempts},
  };
  for (const auto& series : page_series) {
    metric_header(out, series.name, series.type, series.help);
    for (const auto& [sender, counts] : deliveries.by_sender) {
      out << series.name << "{sender=\"" << metric_label_value(sender) << "\"} "
          << counts.*series.count << "\n";
    }
  }
}

}  // namespace

std::string render_metrics(const ReadModel& model) {
  std::ostringstream out;
  const auto& stats = model.stats;

  metric_header(out, "reverify_verifications_total", "counter",
                "Finished verifications by verdict class.");
  for (auto cls : kAllClasses) {
    auto it = stats.by_class.find(cls);
    out << "reverify_verifications_total{class=\"" << to_string(cls) << "\"} "
        << (it == stats.by_class.end() ? 0 : it->second) << "\n";
  }

  metric_header(out, "reverify_verification_duration_seconds", "histogram",
                "Wall time of finished verifications, from start to verdict.");
  for (std::size_t i = 0; i < stats.duration_buckets.size(); ++i) {
    out << "reverify_verification_duration_seconds_bucket{le=\""
        << metric_number(kDurationBucketsS[i]) << "\"} " << stats.duration_buckets[i] << "\n";
  }
  out << "reverify_verification_duration_seconds_bucket{le=\"+Inf\"} " << stats.duration_count
      << "\nreverify_verification_duration_seconds_sum " << metric_number(stats.duration_sum_s)
      << "\nreverify_verification_duration_seconds_count " << stats.duration_count << "\n";

  metric_single(out, "reverify_queue_depth", "gauge", "Verifications queued and not yet started.",
                stats.queued);
  metric_single(out, "reverify_verifications_running", "gauge", "Verifications running now.",
                stats.running);

  page_delivery_series(out, model.deliveries);

  std::int64_t versions = 0, invalid = 0;
  for (const auto& [name, by_version] : model.models) {
    for (const auto& [version, view] : by_version) {
      if (view.row.removed)
        continue;
      ++versions;
      if (view.row.manifest_error)
        ++invalid;
    }
  }
  metric_single(out, "reverify_model_versions", "gauge",
                "Model versions known from the registry sources.", versions);
  metric_single(out, "reverify_model_versions_invalid", "gauge",
                "Model versions whose manifest does not validate.", invalid);
  metric_single(out, "reverify_gate_max_age_seconds", "gauge",
                "The gate's max_age when a caller gives none (api.default_max_age): how old a "
                "pass may be and still count.",
                default_max_age_s(model));
  version_series(out, model);

  metric_header(out, "reverify_build_info", "gauge",
                "Always 1; the version label says which reverifyd serves these metrics.");
  out << "reverify_build_info{version=\"" << metric_label_value(reverify_version()) << "\"} 1\n";
  metric_single(out, "reverify_read_model_timestamp_seconds", "gauge",
                "Unix time the served state was last read from the store.", model.built_at);
  return out.str();
}

}  // namespace reverify
