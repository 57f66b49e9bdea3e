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

// One row of a plan table: the version it is about, then its cells in column order.
struct PlanRow {
  std::string model, version;
  std::vector<std::string> cells;
};
struct PlanColumn {
  const char* heading;
  bool text = false;  // a sentence (a reason): it wraps anywhere
};

// A table of plan rows: the version linked, then one column per PlanColumn; the first kPlanRows
// rows of `total` (rows.size() unless the caller listed fewer), saying so when there are more.
void plan_table(std::ostream& out, const ReadModel& model, const char* id, const char* label,
                const std::vector<PlanColumn>& columns, const std::vector<PlanRow>& rows,
                std::size_t total = 0) {
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
    out << "<tr><td><a href=\"" << version_href(row.model, row.version) << "\">"
        << escape_html(row.model + "@" + row.version) << "</a></td>";
    for (std::size_t i = 0; i < columns.size() && i < row.cells.size(); ++i) {
      out << "<td" << (columns[i].text ? " class=\"why\"" : "") << " data-label=\""
          << columns[i].heading << "\">" << page_text(model, row.cells[i]) << "</td>";
    }
    out << "</tr>";
  }
  out << "</tbody></table></div>";
  total = std::max(total, rows.size());
  if (total > std::min(rows.size(), kPlanRows))
    out << "<p>First " << std::min(rows.size(), kPlanRows) << " of " << total << " shown.</p>";
}

// Underpowered versions the daemon calibrates in spare capacity: the one running, those planned
// with their reason, and what this cycle's finished ones did (the loop's state, which reverifyd
// adds to the plan).
void calibrations_part(std::ostream& out, const ReadModel& model, const CyclePlan& plan) {
  if (plan.calibrations.empty() && !plan.calibrating && plan.calibrated.empty())
    return;
  out << "<h3 id=\"calibrations-h\">Calibrations of underpowered versions</h3><p>Seed-only reruns "
         "until each band catches its declared <code>tolerance.detect</code>, in capacity the "
         "verifications leave (one at a time; it gives its slot back when a verification is "
         "due).</p>";
  if (const auto& running = plan.calibrating) {
    out << "<p id=\"calibrating\">Calibrating <a href=\""
        << version_href(running->model, running->version) << "\">"
        << escape_html(running->model + "@" + running->version) << "</a> since "
        << escape_html(rfc3339(running->since)) << ".</p>";
  }
  if (!plan.calibrations.empty()) {
    std::vector<PlanRow> rows;
    for (const auto& c : plan.calibrations)
      rows.push_back({c.model, c.version, {c.reason}});
    plan_table(out, model, "calibrations", "Planned calibrations", {{"Why", true}}, rows);
  }
  if (!plan.calibrated.empty()) {
    std::vector<PlanRow> rows;
    for (const auto& c : plan.calibrated)
      rows.push_back({c.model, c.version, {c.outcome}});
    plan_table(out, model, "calibrated", "Calibrations finished this cycle",
               {{"What it did", true}}, rows);
  }
}

// Stored calibrations whose leave-one-out paged more often than the false-page rate allows, as
// `reverify plan` warns: the checks to blame (the held-out runs each failed) and the warning.
void calibration_warnings_part(std::ostream& out, const ReadModel& model, const CyclePlan& plan) {
  if (plan.calibration_warnings.empty())
    return;
  std::vector<PlanRow> rows;
  for (const auto& warning : plan.calibration_warnings) {
    std::string blamed;
    for (const auto& [check, runs] : warning.blamed)
      blamed += (blamed.empty() ? "" : ", ") + check + " (" + std::to_string(runs) + " runs)";
    rows.push_back({warning.model,
                    warning.version,
                    {blamed.empty() ? "no single check" : blamed, warning.text}});
  }
  out << "<h3 id=\"calibration-warnings-h\">Calibrations that page honest reruns</h3><p>Their "
         "leave-one-out (each seed run judged against the others' bands) paged more often than "
         "the false-page rate allows: these bands are narrower than the seed runs' own spread, "
         "and verdicts against them page too often. "
      << command_html(model, "plan") << " shows the same.</p>";
  plan_table(out, model, "calibration-warnings", "Calibrations that page honest reruns",
             {{"To blame", true}, {"Leave-one-out", true}}, rows);
}

// The versions whose model sets a cadence: each mode, how often, its cost, when it is next due
// ("never run" for a mode that never completed) and when it last passed; then each period the
// cycle cannot keep.
void cadence_part(std::ostream& out, const ReadModel& model, const CyclePlan& plan) {
  if (plan.cadence.empty())
    return;
  std::vector<PlanRow> rows;
  for (const auto& version : plan.cadence) {
    if (rows.size() >= kPlanRows)
      break;  // plan_table shows no more
    const auto* view = model.find(version.model, version.version);
    for (const auto& mode : version.modes) {
      std::string last_passed = "never";
      if (view) {
        if (auto pass = view->passed_by_mode.find(mode.mode); pass != view->passed_by_mode.end())
          last_passed = rfc3339(pass->second.finished_at);
      }
      rows.push_back({version.model,
                      version.version,
                      {to_string(mode.mode), duration_text(mode.every_s),
                       number_text(mode.gpu_hours), to_string(mode.cost_basis),
                       mode.next_due ? rfc3339(mode.next_due->time_since_epoch().count())
                                     : std::string("never run"),
                       last_passed}});
    }
  }
  out << "<h3 id=\"cadence-h\">Cadence</h3><p>Models with "
         "<code>models.&lt;name&gt;.cadence</code>: "
         "each mode runs on its own period; a cycle runs the due mode with the longest "
         "period, and each mode at most once.</p>";
  std::size_t total = 0;
  for (const auto& version : plan.cadence)
    total += version.modes.size();
  plan_table(out, model, "cadence", "Cadence per mode",
             {{"Mode"}, {"Every"}, {"GPU-hours"}, {"Cost from"}, {"Next due"}, {"Last passed"}},
             rows, total);
  if (!plan.cadence_warnings.empty()) {
    out << "<ul id=\"cadence-warnings\">";
    for (const auto& warning : plan.cadence_warnings)
      out << "<li>Warning: " << page_text(model, warning.text) << "</li>";
    out << "</ul>";
  }
}

void releases_part(std::ostream& out, const ReadModel& model, const CyclePlan& plan) {
  if (plan.at_release.empty())
    return;
  std::vector<PlanRow> rows;
  for (const auto& r : plan.at_release) {
    rows.push_back(
        {r.model,
         r.version,
         {to_string(r.mode), to_string(release_state(r)), rfc3339(plan.expected_at(r)), r.reason}});
  }
  out << "<h3 id=\"at-release-h\">New releases, verified at release</h3><p>On the at-release "
         "budget (<code>schedule.at_release</code>), apart from the rotation's: queued ones "
         "start at their time, one waiting starts when a day has budget or is the next "
         "cycle's first pick.</p>";
  plan_table(out, model, "at-release", "New releases verified at release",
             {{"Mode"}, {"State"}, {"Expected"}, {"Why", true}}, rows);
}

void missing_subsample_part(std::ostream& out, const ReadModel& model, const CyclePlan& plan) {
  if (plan.missing_subsample.empty())
    return;
  std::vector<PlanRow> rows;
  for (const auto& m : plan.missing_subsample) {
    if (rows.size() >= kPlanRows)
      break;
    rows.push_back({m.model, m.version, {m.why_large, m.next_step}});
  }
  out << "<h3 id=\"missing-subsample-h\">Large versions without a subsample reference</h3><p>A "
         "subsample rebuild of these is refused; the cycle runs another due mode or skips "
         "them.</p>";
  plan_table(out, model, "missing-subsample", "Large versions without a subsample reference",
             {{"Large", true}, {"Next step", true}}, rows, plan.missing_subsample.size());
}

void plan_section(std::ostream& out, const ReadModel& model) {
  if (!model.plan)
    return;
  const CyclePlan& plan = *model.plan;
  const std::string command = command_html(model, "plan");
  out << "<section aria-labelledby=\"plan-h\"><h2 id=\"plan-h\">This cycle's plan</h2><p>Cycle "
      << escape_html(rfc3339(plan.cycle_start.time_since_epoch().count())) << " to "
      << escape_html(rfc3339(plan.cycle_end.time_since_epoch().count())) << ": "
      << plan.entries.size()
      << " verification(s) planned by the rotation policy, least recently verified first; "
      << command << " shows the same.</p>";
  if (!plan.entries.empty()) {
    std::vector<PlanRow> rows;
    for (const auto& e : plan.entries)
      rows.push_back({e.model, e.version, {to_string(e.mode), e.reason}});
    plan_table(out, model, "plan", "This cycle&#39;s plan table", {{"Mode"}, {"Why", true}}, rows);
  }
  if (!plan.deferred.empty())
    out << "<p>Deferred to a later cycle: " << plan.deferred.size() << " (see " << command
        << ").</p>";
  releases_part(out, model, plan);
  cadence_part(out, model, plan);
  missing_subsample_part(out, model, plan);
  calibrations_part(out, model, plan);
  calibration_warnings_part(out, model, plan);
  out << "</section>";
}

// One banner per registry source under a platform condition: what happened, that no owner was
// paged, and what the operator does.
void platform_banner(std::ostream& out, const ReadModel& model, UnixSeconds now) {
  for (const auto& c : model.source_conditions) {
    out << "<div class=\"err\" role=\"alert\" id=\"platform-" << escape_html(c.source)
        << "\"><p><strong>Registry source <code>" << escape_html(c.source)
        << "</code> moved: every one of its " << c.versions
        << " versions misses its inputs at once</strong> (" << escape_html(to_string(c.condition))
        << ", found by <a href=\"/verifications/" << c.verification_id << "\">verification "
        << c.verification_id << "</a>, " << duration_text(now - c.since)
        << " ago). The registry moved or a mount is missing: no owner was paged, the versions "
           "keep their last conclusive verdicts (the gate answers as before) and the operator "
           "was alerted once.</p><p>Point <code>sources."
        << escape_html(c.source)
        << ".root</code> (or its <code>url</code>) at the registry's new place together with the "
           "inputs its manifests name relative to it, or restore the mount, then reload "
           "(<code>systemctl reload reverifyd</code>). The next verification of the source that "
           "finds its inputs clears this banner and resolves the alert; <code>reverify trigger "
           "MODEL@VERSION</code> runs one now. "
        << escape_html(c.reason) << ".</p></div>";
  }
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
  platform_banner(out, model, now);
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
