// The HTML pages of one model version, of one verification, and the two lists (pages.hpp).

#include <algorithm>
#include <map>
#include <sstream>

#include "api/charts.hpp"
#include "api/html.hpp"
#include "api/page_parts.hpp"
#include "api/pages.hpp"
#include "core/text.hpp"
#include "policies/headline.hpp"
#include "policies/verdict_model.hpp"

namespace reverify {
namespace {

constexpr std::size_t kVersionsPerPage = 500;
constexpr std::size_t kVerificationsPerPage = 100;

// A duration as `--max-age` takes it, in its largest whole unit: "40d", "36h", "90s".
std::string duration_argument(std::int64_t seconds) {
  for (const auto& [unit, size] : {std::pair{"d", 86'400}, {"h", 3'600}, {"m", 60}}) {
    if (seconds > 0 && seconds % size == 0)
      return std::to_string(seconds / size) + unit;
  }
  return std::to_string(seconds) + "s";
}

void fact(std::ostream& out, const char* term, const std::string& html) {
  out << "<dt>" << term << "</dt><dd>" << html << "</dd>";
}

void history_table(std::ostream& out, const ReadModel& model,
                   const std::vector<const VerificationRow*>& rows, UnixSeconds now,
                   bool with_version) {
  out << "<div class=\"wrap\" role=\"region\" tabindex=\"0\" aria-label=\"Verifications "
         "table\"><table id=\"history\" class=\"cards\"><thead><tr><th scope=\"col\">"
         "Verification</th>";
  if (with_version)
    out << "<th scope=\"col\">Model version</th>";
  out << "<th scope=\"col\">State</th><th scope=\"col\">Verdict</th><th scope=\"col\">Mode</th>"
         "<th scope=\"col\">Why it ran</th><th scope=\"col\">Queued</th><th scope=\"col\">"
         "Finished</th><th scope=\"col\">What it says</th></tr></thead><tbody>";
  for (const auto* row : rows) {
    out << "<tr data-verification=\"" << row->id << "\"><td><a href=\""
        << verification_href(row->id) << "\">Verification " << row->id << "</a></td>";
    if (with_version) {
      out << "<td data-label=\"Model version\"><a href=\"" << version_href(row->model, row->version)
          << "\">" << escape_html(row->model + "@" + row->version) << "</a></td>";
    }
    out << "<td data-label=\"State\">" << to_string(row->state)
        << "</td><td data-label=\"Verdict\">"
        << (row->cls ? verdict_html(*row->cls) : std::string()) << "</td><td data-label=\"Mode\">"
        << to_string(row->mode) << "</td><td data-label=\"Why it ran\">" << to_string(row->trigger);
    if (row->attempt > 1)
      out << " (attempt " << row->attempt << ")";
    out << "</td><td data-label=\"Queued\">" << when_html(row->queued_at, now)
        << "</td><td data-label=\"Finished\">"
        << (row->finished_at ? when_html(*row->finished_at, now) : std::string())
        << "</td><td class=\"why\" data-label=\"What it says\">"
        << page_text(model, row->cls ? summary_text(summary_of(*row)) : row->explanation)
        << "</td></tr>";
  }
  out << "</tbody></table></div>";
}

// Up to kListed names of a JSON array as a list, and how many more there are.
void name_list(std::ostream& out, const ReadModel& model, const nlohmann::json& names,
               const char* suffix = "") {
  constexpr std::size_t kListed = 50;
  out << "<ul>";
  std::size_t shown = 0;
  for (const auto& name : names) {
    if (!name.is_string())
      continue;
    if (shown++ == kListed) {
      out << "<li>and " << names.size() - kListed << " more</li>";
      break;
    }
    out << "<li><code>" << page_text(model, name.get<std::string>()) << "</code>" << suffix
        << "</li>";
  }
  out << "</ul>";
}

// What the verdict's evidence names, on the page itself: the files of a moved input, the tensors
// that differ from the released weights. The work folder they came from is gone by now.
void evidence_section(std::ostream& out, const ReadModel& model, const VerificationRow& row) {
  std::ostringstream body;
  if (row.verdict) {
    for (const auto& check : row.verdict->checks) {
      const auto moved = check.evidence.find("moved");
      if (check.kind != CheckKind::input || moved == check.evidence.end() || !moved->is_object())
        continue;
      body << "<h3>" << escape_html(check.name) << ": files that moved since release</h3>";
      if (const auto why = string_field(*moved, "unavailable"); !why.empty())
        body << "<p>Unknown: " << page_text(model, why) << "</p>";
      for (const char* kind : {"changed", "added", "removed"}) {
        const auto files = moved->find(kind);
        if (files != moved->end() && files->is_array() && !files->empty()) {
          body << "<p>" << kind << " (" << files->size() << "):</p>";
          name_list(body, model, *files);
        }
      }
    }
  }
  const nlohmann::json* outputs = row.evidence.is_object() && row.evidence.contains("outputs")
                                      ? &row.evidence["outputs"]
                                      : nullptr;
  if (outputs && outputs->is_object() && outputs->contains("tensors_differing")) {
    const auto& tensors = (*outputs)["tensors_differing"];
    body << "<h3>Tensors that differ from the released weights</h3>";
    if (row.mode == RebuildMode::steps) {
      body << "<p>A steps rebuild stops before the release's last step, so its weights differ "
              "as they must: steps mode judges the curve, not the tensors.</p>";
    } else if (tensors.is_array()) {
      body << "<p id=\"tensors-differing\">" << tensors.size()
           << " tensor(s) differ (their bytes, or dtype, or present on one side only):</p>";
      name_list(body, model, tensors);
    } else if (tensors.is_string()) {
      body << "<p>Not known: " << page_text(model, tensors.get<std::string>()) << "</p>";
    }
  }
  if (body.tellp() <= 0)
    return;
  out << "<section aria-labelledby=\"evidence-h\"><h2 id=\"evidence-h\">Evidence</h2>" << body.str()
      << "</section>";
}

// What moved in the version's manifest since the manifest verification `moved.verification_id`
// verified (kept by the registry sync): the reason the gate says it changed, field by field.
void manifest_moved_section(std::ostream& out, const ReadModel& model, const ManifestMoved& moved) {
  out << "<section aria-labelledby=\"moved-h\"><h2 id=\"moved-h\">What moved in the manifest "
         "since verification "
      << moved.verification_id << "</h2><p id=\"manifest-moved\">";
  if (moved.inputs_moved.empty()) {
    out << "No training input moved";
  } else {
    out << "Inputs moved: " << escape_html(joined(moved.inputs_moved));
  }
  out << ". The new manifest is not verified yet.</p><ul>";
  for (const auto& line : moved.lines)
    out << "<li><code>" << page_text(model, line) << "</code></li>";
  out << "</ul></section>";
}

}  // namespace

std::string render_version_page(const PageFrame& frame, const ReadModel& model,
                                const VersionView& view, UnixSeconds now) {
  const RecentIndex recent(model);
  const std::int64_t max_age = default_max_age_s(model);
  const VersionStatus status = version_status(view, max_age, now, gate_policy(model));
  const auto& row = view.row;
  const std::string id = row.model + "@" + row.version;
  std::ostringstream out;
  open_page(out, frame, id, "/v1/models/" + row.model + "/versions/" + row.version);

  // The verdict the gate goes by (else the newest one with checks), led by the same headline as
  // its verification's page.
  std::vector<const VerificationRow*> history;
  for (const auto& r : model.recent) {
    if (r.model == row.model && r.version == row.version)
      history.push_back(&r);
  }
  const VerificationRow* shown = view.conclusive ? recent.find(view.conclusive->id) : nullptr;
  if (shown && !shown->verdict)
    shown = nullptr;  // a row read without its verdict has no checks to show: the newest that has
  if (!shown) {
    for (const auto* r : history) {
      if (r->verdict) {
        shown = r;
        break;
      }
    }
  }
  if (shown) {
    out << "<section aria-labelledby=\"verdict-h\"><h2 id=\"verdict-h\">Verdict of verification "
        << shown->id << ", "
        << (shown->finished_at ? when_html(*shown->finished_at, now) : std::string()) << "</h2>";
    verdict_headline_html(out, model, *shown);
    out << "</section>";
  }

  out << "<section aria-labelledby=\"gate-h\"><h2 id=\"gate-h\">Release gate (max age "
      << duration_text(max_age) << ")</h2><p id=\"gate\" data-gate=\""
      << (status.gate.status == GateStatus::fresh ? "fresh" : "blocked") << "\">"
      << attention_html(status) << " " << page_text(model, status.gate.reason)
      << (status.gate.reason.ends_with('.') ? "" : ".") << "</p>";
  if (const auto* error = status.newer_error) {
    out << "<p id=\"newer-error\">The newest attempt, " << verdict_html(error->cls, error->id)
        << " " << when_html(error->finished_at, now)
        << ", verified nothing and does not count against the gate: "
        << page_text(model, error->explanation) << "</p>";
  }
  out << "<p class=\"muted\">Ask the gate: "
      << command_html(model, "gate " + id + " --max-age " + duration_argument(max_age))
      << " or <a href=\"/v1/gate/" << escape_html(row.model) << "/" << escape_html(row.version)
      << "\">/v1/gate/" << escape_html(row.model) << "/" << escape_html(row.version)
      << "</a>.</p></section>";
  if (view.manifest_moved)
    manifest_moved_section(out, model, *view.manifest_moved);

  out << "<section aria-labelledby=\"facts-h\"><h2 id=\"facts-h\">Release</h2><dl>";
  fact(out, "Owner", page_text(model, row.owner));
  fact(out, "Level", escape_html(row.level.empty() ? "unknown" : row.level));
  fact(out, "Source", page_text(model, row.source));
  fact(out, "Manifest", page_text(model, row.location));
  if (row.manifest_error)
    fact(out, "Manifest error", page_text(model, *row.manifest_error));
  if (row.released_at)
    fact(out, "Released", when_html(*row.released_at, now));
  fact(out, "Last pass",
       view.passed ? verdict_html(VerdictClass::passed, view.passed->id) + " " +
                         when_html(view.passed->finished_at, now)
                   : std::string("never"));
  // Each mode's last pass, every mode named (a cadence asks for each on its own period; the
  // gate's --mode counts only its own).
  for (const auto& entry : EnumNames<RebuildMode>::table) {
    auto pass = view.passed_by_mode.find(entry.value);
    fact(out, ("Last " + std::string(entry.name) + " pass").c_str(),
         pass != view.passed_by_mode.end() ? verdict_html(VerdictClass::passed, pass->second.id) +
                                                 " " + when_html(pass->second.finished_at, now)
                                           : std::string("never"));
  }
  if (view.attestation) {
    fact(out, "Signed summary",
         "<a href=\"/v1/attestations/" + escape_html(row.model) + "/" + escape_html(row.version) +
             "\">" + escape_html(view.attestation->result) + " (verification " +
             std::to_string(view.attestation->verification_id) + ")</a>");
  }
  if (view.active_id) {
    fact(out, "Now",
         "<a href=\"" + verification_href(*view.active_id) + "\">verification " +
             std::to_string(*view.active_id) + " is " + to_string(view.active_state) + "</a>");
  }
  out << "</dl></section>";

  out << "<section aria-labelledby=\"checks-h\"><h2 id=\"checks-h\">Checks";
  if (shown) {
    out << " of verification " << shown->id << "</h2>";
    checks_table(out, model, *shown);
  } else {
    out << "</h2><p>No verdict with checks among the recent verifications.</p>";
  }
  out << "</section>";

  // The primary metric across this version's verifications, oldest first.
  std::vector<TrendPoint> points;
  std::string metric;
  std::optional<CheckBand> band;
  for (auto it = history.rbegin(); it != history.rend(); ++it) {
    const auto* check = (*it)->verdict ? (*it)->verdict->primary() : nullptr;
    if (!check)
      continue;
    metric = check->name;
    band = check->band;
    points.push_back({(*it)->id, (*it)->finished_at.value_or((*it)->queued_at), *check->observed});
  }
  if (!points.empty()) {
    out << "<section aria-labelledby=\"trend-h\"><h2 id=\"trend-h\">" << escape_html(metric)
        << " across verifications</h2><p class=\"muted\">The shaded area is the newest verdict's "
           "accepted band.</p>"
        << trend_svg(metric, points, band) << "</section>";
  }

  out << "<section aria-labelledby=\"history-h\"><h2 id=\"history-h\">Verifications ("
      << history.size() << " recent)</h2>";
  history_table(out, model, history, now, false);
  out << "</section>";
  close_page(out, frame, model, now);
  return out.str();
}

std::string render_verification_page(const PageFrame& frame, const ReadModel& model,
                                     const VerificationRow& row, UnixSeconds now) {
  std::ostringstream out;
  open_page(out, frame,
            "Verification " + std::to_string(row.id) + ": " + row.model + "@" + row.version,
            "/v1/verifications/" + std::to_string(row.id));
  out << "<section aria-labelledby=\"verdict-h\"><h2 id=\"verdict-h\">Verdict</h2>";
  if (row.cls) {
    verdict_headline_html(out, model, row);
  } else {
    out << "<p><span class=\"tag warn\">" << to_string(row.state) << "</span> "
        << page_text(model, row.explanation) << "</p>";
  }
  out << "</section><section aria-labelledby=\"checks-h\"><h2 id=\"checks-h\">Checks</h2>";
  if (row.verdict) {
    checks_table(out, model, row);
  } else {
    out << "<p>No verdict yet.</p>";
  }
  out << "</section>";
  evidence_section(out, model, row);
  if (const auto* view = model.find(row.model, row.version);
      view && view->manifest_moved && view->manifest_moved->verification_id == row.id)
    manifest_moved_section(out, model, *view->manifest_moved);
  out << "<section aria-labelledby=\"run-h\"><h2 id=\"run-h\">The run</h2><dl>";
  fact(out, "Model version",
       "<a href=\"" + version_href(row.model, row.version) + "\">" +
           escape_html(row.model + "@" + row.version) + "</a>");
  fact(out, "Mode", to_string(row.mode));
  fact(out, "Why it ran",
       std::string(to_string(row.trigger)) +
           (row.attempt > 1 ? " (attempt " + std::to_string(row.attempt) + ")" : ""));
  if (row.runner_kind)
    fact(out, "Runner", page_text(model, runner_text(row)));
  fact(out, "Queued", when_html(row.queued_at, now));
  if (row.started_at)
    fact(out, "Started", when_html(*row.started_at, now));
  if (row.finished_at) {
    fact(out, "Finished", when_html(*row.finished_at, now));
    if (row.started_at)
      fact(out, "Took", duration_text(*row.finished_at - *row.started_at));
  }
  out << "</dl></section>";
  if (!row.log_tail.empty()) {
    out << "<section aria-labelledby=\"log-h\"><h2 id=\"log-h\">End of the job's log</h2><pre "
           "tabindex=\"0\">"
        << page_text(model, row.log_tail) << "</pre></section>";
  }
  close_page(out, frame, model, now);
  return out.str();
}

std::string render_versions_page(const PageFrame& frame, const ReadModel& model, UnixSeconds now,
                                 std::size_t page) {
  const auto standing = standing_at(model, now);
  const auto& statuses = *standing;
  std::map<std::int64_t, const VerificationRow*> active;
  for (const auto& row : model.unfinished)
    active.emplace(row.id, &row);
  std::ostringstream out;
  open_page(out, frame, "All model versions", "/v1/models");
  out << "<p>" << statuses.size()
      << " model version(s), most urgent first (the status page's order).</p>";
  const std::size_t first = (page - 1) * kVersionsPerPage;
  out << "<div class=\"wrap\" role=\"region\" tabindex=\"0\" aria-label=\"Model versions "
         "table\"><table id=\"versions\" class=\"cards\">";
  version_status_header(out);
  out << "<tbody>";
  for (std::size_t i = first; i < statuses.size() && i < first + kVersionsPerPage; ++i) {
    const auto& s = statuses[i];
    const auto it = s.view->active_id ? active.find(*s.view->active_id) : active.end();
    version_status_row(out, model, s, it == active.end() ? nullptr : it->second, now);
  }
  out << "</tbody></table></div>";
  pagination(out, "/models", page, statuses.size(), kVersionsPerPage);
  close_page(out, frame, model, now);
  return out.str();
}

std::string render_verifications_page(const PageFrame& frame, const ReadModel& model,
                                      UnixSeconds now, std::size_t page) {
  std::ostringstream out;
  open_page(out, frame, "Verifications", "/v1/verifications");
  out << "<p>The " << model.recent.size() << " most recent verifications, newest first.</p>";
  std::vector<const VerificationRow*> rows;
  const std::size_t first = (page - 1) * kVerificationsPerPage;
  for (std::size_t i = first; i < model.recent.size() && i < first + kVerificationsPerPage; ++i)
    rows.push_back(&model.recent[i]);
  history_table(out, model, rows, now, true);
  pagination(out, "/verifications", page, model.recent.size(), kVerificationsPerPage);
  close_page(out, frame, model, now);
  return out.str();
}

}  // namespace reverify
