#include "api/metrics.hpp"

#include <cstdio>
#include <sstream>

#include "api/snapshot.hpp"
#include "core/verdict_class.hpp"
#include "core/version.hpp"

namespace reverify {
namespace {

std::string escape_label(const std::string& value) {
  std::string out;
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

void header(std::ostream& out, const char* name, const char* type, const char* help) {
  out << "# HELP " << name << " " << help << "\n# TYPE " << name << " " << type << "\n";
}

std::string number(double value) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", value);
  return buf;
}

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

}  // namespace

std::string render_metrics(const ReadModel& model) {
  std::ostringstream out;
  const auto& stats = model.stats;

  header(out, "reverify_verifications_total", "counter",
         "Finished verifications by verdict class.");
  for (auto cls : kAllClasses) {
    auto it = stats.by_class.find(cls);
    out << "reverify_verifications_total{class=\"" << to_string(cls) << "\"} "
        << (it == stats.by_class.end() ? 0 : it->second) << "\n";
  }

  header(out, "reverify_verification_duration_seconds", "histogram",
         "Wall time of finished verifications, from start to verdict.");
  for (std::size_t i = 0; i < stats.duration_buckets.size(); ++i) {
    out << "reverify_verification_duration_seconds_bucket{le=\"" << number(kDurationBucketsS[i])
        << "\"} " << stats.duration_buckets[i] << "\n";
  }
  out << "reverify_verification_duration_seconds_bucket{le=\"+Inf\"} " << stats.duration_count
      << "\nreverify_verification_duration_seconds_sum " << number(stats.duration_sum_s)
      << "\nreverify_verification_duration_seconds_count " << stats.duration_count << "\n";

  header(out, "reverify_queue_depth", "gauge", "Verifications queued and not yet started.");
  out << "reverify_queue_depth " << stats.queued << "\n";
  header(out, "reverify_verifications_running", "gauge", "Verifications running now.");
  out << "reverify_verifications_running " << stats.running << "\n";

  // Per sender (pager.senders), so an alert can name the receiver that stopped accepting pages.
  const struct {
    const char *name, *type, *help;
    std::int64_t DeliveryCounts::Counts::*count;
  } page_series[] = {
      {"reverify_pages_sent_total", "counter", "Page deliveries accepted by a receiver, by sender.",
       &DeliveryCounts::Counts::sent},
      {"reverify_pages_failed_total", "counter",
       "Page deliveries given up (rejected, or out of attempts), by sender.",
       &DeliveryCounts::Counts::failed},
      {"reverify_pages_pending", "gauge", "Page deliveries waiting for a (re)try, by sender.",
       &DeliveryCounts::Counts::pending},
  };
  for (const auto& series : page_series) {
    header(out, series.name, series.type, series.help);
    for (const auto& [sender, counts] : model.deliveries.by_sender) {
      out << series.name << "{sender=\"" << escape_label(sender) << "\"} " << counts.*series.count
          << "\n";
    }
  }

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
  header(out, "reverify_model_versions", "gauge",
         "Model versions known from the registry sources.");
  out << "reverify_model_versions " << versions << "\n";
  header(out, "reverify_model_versions_invalid", "gauge",
         "Model versions whose manifest does not validate.");
  out << "reverify_model_versions_invalid " << invalid << "\n";

  header(out, "reverify_last_verified_timestamp_seconds", "gauge",
         "Unix time of the latest passed verification of each model version.");
  for (const auto& [name, by_version] : model.models) {
    for (const auto& [version, view] : by_version) {
      if (!view.passed || view.row.removed)
        continue;
      out << "reverify_last_verified_timestamp_seconds{model=\"" << escape_label(name)
          << "\",version=\"" << escape_label(version) << "\"} " << view.passed->finished_at << "\n";
    }
  }
  header(out, "reverify_build_info", "gauge",
         "Always 1; the version label says which reverifyd serves these metrics.");
  out << "reverify_build_info{version=\"" << escape_label(reverify_version()) << "\"} 1\n";
  header(out, "reverify_read_model_timestamp_seconds", "gauge",
         "Unix time the served state was last read from the store.");
  out << "reverify_read_model_timestamp_seconds " << model.built_at << "\n";
  return out.str();
}

}  // namespace reverify
