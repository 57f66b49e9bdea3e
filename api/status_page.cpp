// The status page at "/" (pages.hpp): what needs attention first, what runs now, what starts
// next and why, and the cycle's plan.

#include <map>
#include <sstream>

#include "api/html.hpp"
#include "api/page_parts.hpp"
#include "api/pages.hpp"
#include "policies/number_text.hpp"
#include "verify/schedule.hpp"

namespace reverify {
namespace {

constexpr std::size_t kAttentionRows = 200;  // the rest are on /models, in the same order
constexpr std::size_t kQueueRows = 100;
constexpr std::size_t kPlanRows = 100;

// Why a queued verification is queued, in words.
std::string queued_because(const ReadModel& model, const VerificationRow& row) {
  switch (row.trigger) {
    case VerificationTrigger::manual:
      return "manual trigger";
    case VerificationTrigger::cli:
      return "reverify run";
    case VerificationTrigger::release:
      return "new release, verified at release";
    case VerificationTrigger::retry: {
      std::string why = "retry, attempt " + std::to_string(row.attempt);
      if (const auto* view = model.find(row.model, row.version);
          view && view->latest && is_error(view->latest->cls)) {
        why += std::string(" after ") + to_string(view->latest->cls);
      }
      return why;
    }
    case VerificationTrigger::schedule:
      break;
  }
  return row.cycle_id ? "this cycle's rotation" : "scheduled";
}

// The queue in the order the daemon starts it: due ones as next_to_start picks them (manual
// triggers first), then the others by the time they become due.
std::vector<const VerificationRow*> start_order(const ReadModel& model, UnixSeconds now) {
  std::vector<VerificationRow> due;
  std::vector<const VerificationRow*> later, order;
  for (const auto& row : model.unfinished) {
    if (row.state != VerificationState::queued)
      continue;
    if (row.not_before <= now)
      due.push_back(row);
    else
      later.push_back(&row);
  }
  while (order.size() < kQueueRows) {
    auto next = next_to_start(due, now);
    if (!next)
      break;
    for (const auto& row : model.unfinished) {
      if (row.id == next->id)
        order.push_back(&row);
    }
    std::erase_if(due, [&](const VerificationRow& row) { return row.id == next->id; });
  }
  std::stable_sort(later.begin(), later.end(),
                   [](const auto* a, const auto* b) { return a->not_before < b->not_before; });
  for (const auto* row : later) {
    if (order.size() >= kQueueRows)
      break;
    order.push_back(row);
  }
  return order;
}

void running_section(std::ostream& out, const ReadModel& model, UnixSeconds now) {
  out << "<section aria-labelledby=\"running-h\"><h2 id=\"running-h\">Running now ("
      << model.stats.running << ")</h2>";
  if (model.stats.running == 0) {
    out << "<p>Nothing is running.</p></section>";
    return;
  }
  out << "<div class=\"wrap\" role=\"region\" tabindex=\"0\" aria-label=\"Running verifications "
         "table\"><table id=\"running\" class=\"cards\"><thead><tr><th scope=\"col\">Verification"
         "</th><th scope=\"col\">Model version</th><th scope=\"col\">Mode</th><th scope=\"col\">"
         "Why</th><th scope=\"col\">Started</th><th scope=\"col\">Runner</th></tr></thead><tbody>";
  for (const auto& row : model.unfinished) {
    if (row.state != VerificationState::running)
      continue;
    out << "<tr><td><a href=\"" << verification_href(row.id) << "\">Verification " << row.id
        << "</a></td><td data-label=\"Model version\"><a href=\""
        << version_href(row.model, row.version) << "\">"
        << escape_html(row.model + "@" + row.version) << "</a></td><td data-label=\"Mode\">"
        << to_string(row.mode) << "</td><td data-label=\"Why\">"
        << escape_html(queued_because(model, row)) << "</td><td data-label=\"Started\">"
        << (row.started_at ? when_html(*row.started_at, now) : "starting")
        << "</td><td class=\"why\" data-label=\"Runner\">" << page_text(model, runner_text(row))
        << "</td></tr>";
  }
  out << "</tbody></table></div></section>";
}

void queue_section(std::ostream& out, const ReadModel& model, UnixSeconds now) {
  out << "<section aria-labelledby=\"queued-h\"><h2 id=\"queued-h\">Next: queued verifications ("
      << model.stats.queued << ")</h2>";
  const auto order = start_order(model, now);
  if (order.empty()) {
    out << "<p>Nothing is queued.</p></section>";
    return;
  }
  out << "<p class=\"muted\">In the order the daemon starts them: due ones first, manual triggers "
         "ahead of the rest, as slots free up.</p><div class=\"wrap\" role=\"region\" "
         "tabindex=\"0\" aria-label=\"Queued verifications table\"><table id=\"queued\" "
         "class=\"cards\"><thead>"
         "<tr><th scope=\"col\">#</th><th scope=\"col\">Verification</th><th scope=\"col\">Model "
         "version</th><th scope=\"col\">Why</th><th scope=\"col\">Mode</th><th scope=\"col\">"
         "Starts</th></tr></thead><tbody>";
  std::size_t position = 0;
  for (const auto* row : order) {
    out << "<tr data-verification=\"" << row->id << "\"><td data-label=\"#\">" << ++position
        << "</td><td data-label=\"Verification\"><a href=\"" << verification_href(row->id) << "\">"
        << row->id << "</a></td><td data-label=\"Model version\"><a href=\""
        << version_href(row->model, row->version) << "\">"
        << escape_html(row->model + "@" + row->version) << "</a></td><td data-label=\"Why\">"
        << escape_html(queued_because(model, *row)) << "</td><td data-label=\"Mode\">"
        << to_string(row->mode) << "</td><td data-label=\"Starts\">"
        << (row->not_before > now ? when_html(row->not_before, now)
                                  : std::string("when a slot is free"))
        << "</td></tr>";
  }
  out << "</tbody></table></div>";
  if (model.stats.queued > static_cast<std::int64_t>(order.size()))
    out << "<p>First " << order.size() << " shown.</p>";
  out << "</section>";
}

// A table of plan rows (JSON objects with "model" and "version"): the version linked, then one
// column per (heading, key); the first kPlanRows rows, saying so when there are more.
struct PlanColumn {
  const char* heading;
  const char* key;
  bool text = false;  // a sentence (a reason): it wraps anywhere
};
void plan_table(std::ostream& out, const ReadModel& model, const char* id, const char* label,
                const std::vector<PlanColumn>& columns, const nlohmann::json& rows) {
  out << "<div class=\"wrap\" role=\"region\" tabindex=\"0\" aria-label=\"" << label
      << "\"><table id=\"" << id
      << "\" class=\"cards\"><thead><tr><th scope=\"col\">Model version</th>";
  for (const auto& column : columns)
    out << "<th scope=\"col\">" << column.heading << "</th>";
  out << "</tr></thead><tbody>";
  std::size_t shown = 0;
  for (const auto& row : rows) {
    if (shown++ >= kPlanRows)
      break;
    const std::string m = string_field(row, "model"), v = string_field(row, "version");
    out << "<tr><td><a href=\"" << version_href(m, v) << "\">" << escape_html(m + "@" + v)
        << "</a></td>";
    for (const auto& column : columns) {
      out << "<td" << (column.text ? " class=\"why\"" : "") << " data-label=\"" << column.heading
          << "\">" << page_text(model, string_field(row, column.key)) << "</td>";
    }
    out << "</tr>";
  }
  out << "</tbody></table></div>";
  if (rows.size() > kPlanRows)
    out << "<p>First " << kPlanRows << " of " << rows.size() << " shown.</p>";
}

// The array at object[key], or an empty one.
const nlohmann::json& array_at(const nlohmann::json& object, const char* key) {
  static const nlohmann::json none = nlohmann::json::array();
  return object.is_object() && object.contains(key) && object[key].is_array() ? object[key] : none;
}

// Underpowered versions the daemon calibrates in spare capacity: the one running, those planned
// with their reason, and what this cycle's finished ones did ("calibrating", which reverifyd adds
// to the plan: the loop's state).
void calibrations_part(std::ostream& out, const ReadModel& model) {
  const auto& plan = model.plan;
  const auto& planned = array_at(plan, "calibrations");
  const nlohmann::json state = plan.contains("calibrating") && plan["calibrating"].is_object()
                                   ? plan["calibrating"]
                                   : nlohmann::json::object();
  const nlohmann::json running = state.contains("running") ? state["running"] : nlohmann::json();
  const auto& done = array_at(state, "done");
  if (planned.empty() && !running.is_object() && done.empty())
    return;
  out << "<h3 id=\"calibrations-h\">Calibrations of underpowered versions</h3><p>Seed-only reruns "
         "until each band catches its declared <code>tolerance.detect</code>, in capacity the "
         "verifications leave (one at a time; it gives its slot back when a verification is "
         "due).</p>";
  if (running.is_object()) {
    const std::string m = string_field(running, "model"), v = string_field(running, "version");
    out << "<p id=\"calibrating\">Calibrating <a href=\"" << version_href(m, v) << "\">"
        << escape_html(m + "@" + v) << "</a> since " << escape_html(string_field(running, "since"))
        << ".</p>";
  }
  if (!planned.empty())
    plan_table(out, model, "calibrations", "Planned calibrations", {{"Why", "reason", true}},
               planned);
  if (!done.empty()) {
    plan_table(out, model, "calibrated", "Calibrations finished this cycle",
               {{"What it did", "outcome", true}}, done);
  }
}

// Stored calibrations whose leave-one-out paged more often than the false-page rate allows, as
// `reverify plan` warns: the checks to blame (the held-out runs each failed) and the warning.
void calibration_warnings_part(std::ostream& out, const ReadModel& model) {
  const auto& warnings = array_at(model.plan, "calibration_warnings");
  if (warnings.empty())
    return;
  auto rows = nlohmann::json::array();
  for (const auto& warning : warnings) {
    auto row = warning;
    std::string blamed;
    for (const auto& b : array_at(warning, "blamed")) {
      const bool counted = b.is_object() && b.contains("runs") && b["runs"].is_number_integer() &&
                           b["runs"].get<std::int64_t>() >= 0;
      blamed += (blamed.empty() ? "" : ", ") + string_field(b, "check") +
                (counted ? " (" + std::to_string(b["runs"].get<std::int64_t>()) + " runs)" : "");
    }
    row["blamed_text"] = blamed.empty() ? "no single check" : blamed;
    rows.push_back(std::move(row));
  }
  out << "<h3 id=\"calibration-warnings-h\">Calibrations that page honest reruns</h3><p>Their "
         "leave-one-out (each seed run judged against the others' bands) paged more often than "
         "the false-page rate allows: these bands are narrower than the seed runs' own spread, "
         "and verdicts against them page too often. "
      << command_html(model, "plan") << " shows the same.</p>";
  plan_table(out, model, "calibration-warnings", "Calibrations that page honest reruns",
             {{"To blame", "blamed_text", true}, {"Leave-one-out", "leave_one_out", true}}, rows);
}

// The versions whose model sets a cadence: each mode, how often, its cost, when it is next due
// and when it last passed.
void cadence_part(std::ostream& out, const ReadModel& model) {
  const auto& cadence = array_at(model.plan, "cadence");
  if (cadence.empty())
    return;
  auto rows = nlohmann::json::array();
  for (const auto& version : cadence) {
    const std::string m = string_field(version, "model"), v = string_field(version, "version");
    const auto* view = model.find(m, v);
    for (const auto& mode : array_at(version, "modes")) {
      auto row = mode;
      row["model"] = m;
      row["version"] = v;
      row["gpu_hours"] = number_text(mode.value("gpu_hours", 0.0));
      row["last_passed"] = "never";
      const auto which = enum_from_string<RebuildMode>(string_field(mode, "mode"));
      if (view && which) {
        if (auto pass = view->passed_by_mode.find(*which); pass != view->passed_by_mode.end())
          row["last_passed"] = rfc3339(pass->second.finished_at);
      }
      rows.push_back(std::move(row));
    }
  }
  out << "<h3 id=\"cadence-h\">Cadence</h3><p>Models with "
         "<code>models.&lt;name&gt;.cadence</code>: "
         "each mode runs on its own period; a cycle runs the due mode with the longest "
         "period.</p>";
  plan_table(out, model, "cadence", "Cadence per mode",
             {{"Mode", "mode"},
              {"Every", "every"},
              {"GPU-hours", "gpu_hours"},
              {"Cost from", "cost_basis"},
              {"Next due", "next_due"},
              {"Last passed", "last_passed"}},
             rows);
}

void plan_section(std::ostream& out, const ReadModel& model) {
  const auto& plan = model.plan;
  if (!plan.is_object() || !plan.contains("entries") || !plan["entries"].is_array())
    return;
  const auto& entries = plan["entries"];
  const std::string command = command_html(model, "plan");
  out << "<section aria-labelledby=\"plan-h\"><h2 id=\"plan-h\">This cycle's plan</h2><p>Cycle "
      << escape_html(string_field(plan, "cycle_start")) << " to "
      << escape_html(string_field(plan, "cycle_end")) << ": " << entries.size()
      << " verification(s) planned by the rotation policy, least recently verified first; "
      << command << " shows the same.</p>";
  if (!entries.empty()) {
    plan_table(out, model, "plan", "This cycle&#39;s plan table",
               {{"Mode", "mode"}, {"Why", "reason", true}}, entries);
  }
  if (const auto& deferred = array_at(plan, "deferred"); !deferred.empty()) {
    out << "<p>Deferred to a later cycle: " << deferred.size() << " (see " << command << ").</p>";
  }
  if (const auto& releases = array_at(plan, "at_release"); !releases.empty()) {
    out << "<h3 id=\"at-release-h\">New releases, verified at release</h3><p>On the at-release "
           "budget (<code>schedule.at_release</code>), apart from the rotation's: queued ones "
           "start at their time, one waiting starts when a day has budget or is the next "
           "cycle's first pick.</p>";
    plan_table(out, model, "at-release", "New releases verified at release",
               {{"Mode", "mode"},
                {"State", "state"},
                {"Expected", "expected_at"},
                {"Why", "reason", true}},
               releases);
  }
  cadence_part(out, model);
  if (const auto& missing = array_at(plan, "missing_subsample"); !missing.empty()) {
    out << "<h3 id=\"missing-subsample-h\">Large versions without a subsample reference</h3><p>A "
           "subsample rebuild of these is refused; the cycle runs another due mode or skips "
           "them.</p>";
    plan_table(out, model, "missing-subsample", "Large versions without a subsample reference",
               {{"Large", "large", true}, {"Next step", "next_step", true}}, missing);
  }
  calibrations_part(out, model);
  calibration_warnings_part(out, model);
  out << "</section>";
}

}  // namespace

std::string render_status_page(const PageFrame& frame, const ReadModel& model, UnixSeconds now) {
  const auto standing = standing_at(model, now);
  const auto& statuses = *standing;
  std::map<std::int64_t, const VerificationRow*> active;
  for (const auto& row : model.unfinished)
    active.emplace(row.id, &row);
  std::size_t attention = 0, fresh = 0, blocked = 0;
  for (const auto& s : statuses) {
    attention += needs_attention(s.attention);
    fresh += s.gate.status == GateStatus::fresh;
    blocked += s.gate.status != GateStatus::fresh;
  }
  std::ostringstream out;
  open_page(out, frame, "Status", "/v1/models");
  out << "<p class=\"summary\">" << statuses.size() << " model version(s): <strong>" << blocked
      << " not passing the gate</strong> (max age " << duration_text(default_max_age_s(model))
      << "), " << fresh << " verified and fresh. " << model.stats.running << " running, "
      << model.stats.queued << " queued.</p>";

  out << "<section aria-labelledby=\"attention-h\"><h2 id=\"attention-h\">Needs attention ("
      << attention << ")</h2>";
  if (statuses.empty()) {
    out << "<p>No model versions yet: no registry source has listed any. Check the config's "
           "<code>sources</code> (<code>reverifyd --config FILE --check-config</code>) and the "
           "daemon's log.</p>";
  } else if (attention == 0) {
    out << "<p>Nothing: every model version is verified and fresh.</p>";
  } else {
    out << "<p class=\"muted\">What the release gate goes by, most urgent first: failures, invalid "
           "manifests, versions the system cannot verify, uncalibrated or underpowered bands, "
           "outdated passes, never verified; last, verified versions whose newest attempt "
           "errored (an error never fails the gate).</p><div class=\"wrap\" role=\"region\" "
           "tabindex=\"0\" aria-label=\"Needs attention table\"><table id=\"attention\" "
           "class=\"cards\">";
    version_status_header(out);
    out << "<tbody>";
    std::size_t shown = 0;
    for (const auto& s : statuses) {
      if (!needs_attention(s.attention) || shown >= kAttentionRows)
        continue;
      ++shown;
      const auto it = s.view->active_id ? active.find(*s.view->active_id) : active.end();
      version_status_row(out, model, s, it == active.end() ? nullptr : it->second, now);
    }
    out << "</tbody></table></div>";
    if (attention > shown) {
      out << "<p>First " << shown << " of " << attention
          << " shown; <a href=\"/models\">all model versions</a> lists the rest in the same "
             "order.</p>";
    }
  }
  out << "</section>";
  running_section(out, model, now);
  queue_section(out, model, now);
  plan_section(out, model);
  close_page(out, frame, model, now);
  return out.str();
}

}  // namespace reverify
