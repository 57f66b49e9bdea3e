#include "api/page_parts.hpp"

#include <algorithm>
#include <limits>

#include "api/charts.hpp"
#include "api/html.hpp"
#include "core/redact.hpp"
#include "core/suggested_command.hpp"
#include "policies/headline.hpp"
#include "policies/verdict_model.hpp"

namespace reverify {
namespace {

constexpr std::int64_t kDefaultMaxAgeS = 40 * 86'400;  // ApiConfig's default

// When the version's problem began, for "newest problem first" within a rank.
UnixSeconds problem_time(const VersionStatus& status) {
  if (status.newer_error)
    return status.newer_error->finished_at;
  const auto& view = *status.view;
  if (view.conclusive)
    return view.conclusive->finished_at;
  return view.row.first_seen_at;
}

// A number cell of the checks table; `label` names its column in the narrow-screen cards.
std::string number_cell(const std::optional<double>& value, const char* label) {
  return std::string("<td class=\"num\" data-label=\"") + label + "\">" +
         (value ? short_number(*value) : std::string("–")) + "</td>";
}

// A check's name, escaped, free to wrap after each ':' ("segment:<wbr>digit=8:<wbr>accuracy"),
// so a long name does not widen its column.
std::string breakable_name(const std::string& name) {
  std::string out;
  for (char c : escape_html(name)) {
    out += c;
    if (c == ':')
      out += "<wbr>";
  }
  return out;
}

}  // namespace

std::int64_t default_max_age_s(const ReadModel& model) {
  return model.api ? model.api->default_max_age_s : kDefaultMaxAgeS;
}

std::vector<VersionStatus> statuses_by_attention(const ReadModel& model, UnixSeconds now) {
  const std::int64_t max_age = default_max_age_s(model);
  const GatePolicy policy = gate_policy(model);
  std::vector<VersionStatus> out;
  for (const auto& [name, versions] : model.models) {
    for (const auto& [version, view] : versions) {
      if (!view.row.removed)
        out.push_back(version_status(view, max_age, now, policy));
    }
  }
  std::stable_sort(out.begin(), out.end(), [](const VersionStatus& a, const VersionStatus& b) {
    if (a.attention != b.attention)
      return a.attention < b.attention;
    return problem_time(a) > problem_time(b);
  });
  return out;
}

void attach_standing(ReadModel& model, UnixSeconds now) {
  auto statuses =
      std::make_shared<const std::vector<VersionStatus>>(statuses_by_attention(model, now));
  const std::int64_t max_age = default_max_age_s(model);
  UnixSeconds until = std::numeric_limits<UnixSeconds>::max();
  for (const auto& status : *statuses) {
    if (status.gate.status == GateStatus::fresh && status.view->conclusive)
      until = std::min(until, status.view->conclusive->finished_at + max_age + 1);
  }
  model.standing = std::move(statuses);
  model.standing_until = until;
}

std::shared_ptr<const std::vector<VersionStatus>> standing_at(const ReadModel& model,
                                                              UnixSeconds now) {
  if (model.standing && now >= model.built_at && now < model.standing_until)
    return model.standing;
  return std::make_shared<const std::vector<VersionStatus>>(statuses_by_attention(model, now));
}

std::string string_field(const nlohmann::json& object, const char* key) {
  if (!object.is_object())
    return {};
  auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

std::string page_text(const ReadModel& model, const std::string& text) {
  if (!model.api || model.api->secrets.empty())
    return escape_html(text);
  return escape_html(redact(text, model.api->secrets));
}

std::string runner_text(const VerificationRow& row) {
  std::string text = row.runner_kind ? to_string(*row.runner_kind) : "";
  if (row.runner_ref)
    text += (text.empty() ? "" : " ") + *row.runner_ref;
  if (!row.runner_standing)
    return text;
  const JobStanding& standing = *row.runner_standing;
  if (row.state != VerificationState::done)
    return text + ": " + standing.text();
  // After the verdict the latest standing says where the job ran, or where it last waited.
  if (standing.state == JobQueueState::running)
    return text + ": ran in partition " + standing.queue +
           (standing.nodes.empty() ? "" : " on " + standing.nodes);
  return text + ": last " + standing.text();
}

std::string command_html(const ReadModel& model, const std::string& args) {
  const std::string scope = model.api ? model.api->command_scope : std::string();
  return "<code>" + page_text(model, reverify_command(args, scope)) + "</code>";
}

std::string attention_html(Attention attention) {
  const char* css = "warn";
  const char* label = "";
  switch (attention) {
    case Attention::failed:
      css = "bad", label = "failed";
      break;
    case Attention::manifest_invalid:
      css = "bad", label = "manifest invalid";
      break;
    case Attention::error:
      css = "err", label = "cannot verify";
      break;
    case Attention::uncalibrated:
      label = "uncalibrated";
      break;
    case Attention::outdated:
      label = "outdated";
      break;
    case Attention::never_verified:
      label = "never verified";
      break;
    case Attention::fresh_with_error:
      css = "ok", label = "verified; newest attempt errored";
      break;
    case Attention::fresh:
      css = "ok", label = "verified and fresh";
      break;
  }
  return std::string("<span class=\"tag ") + css + "\">" + label + "</span>";
}

std::string attention_html(const VersionStatus& status) {
  if (status.underpowered && status.attention == Attention::uncalibrated &&
      status.view->conclusive && status.view->conclusive->cls == VerdictClass::passed) {
    return "<span class=\"tag warn\">underpowered</span>";
  }
  return attention_html(status.attention);
}

void version_status_header(std::ostream& out) {
  out << "<thead><tr><th scope=\"col\">Model version</th><th scope=\"col\">Owner</th>"
         "<th scope=\"col\">Gate</th><th scope=\"col\">Verdict the gate goes by</th>"
         "<th scope=\"col\">Last pass</th><th scope=\"col\">Newest attempt, if an error</th>"
         "<th scope=\"col\">Now</th></tr></thead>";
}

void version_status_row(std::ostream& out, const ReadModel& model, const VersionStatus& status,
                        const VerificationRow* active, UnixSeconds now) {
  const auto& view = *status.view;
  const std::string id = view.row.model + "@" + view.row.version;
  out << "<tr data-version=\"" << escape_html(id) << "\" data-attention=\""
      << to_string(status.attention) << "\"><td><a href=\""
      << version_href(view.row.model, view.row.version) << "\">" << escape_html(id)
      << "</a></td><td data-label=\"Owner\">" << page_text(model, view.row.owner)
      << "</td><td class=\"why\" data-label=\"Gate\">" << attention_html(status) << " "
      << page_text(model, status.headline.empty() ? status.gate.reason : status.headline)
      << "</td><td data-label=\"Gate goes by\">";
  if (view.conclusive) {
    out << verdict_html(view.conclusive->cls, view.conclusive->id) << " "
        << when_html(view.conclusive->finished_at, now);
  } else {
    out << "none yet";
  }
  out << "</td><td data-label=\"Last pass\">";
  if (view.passed) {
    out << when_html(view.passed->finished_at, now);
    if (now - view.passed->finished_at > default_max_age_s(model))
      out << " <span class=\"tag warn\">older than the max age</span>";
  } else {
    out << "never";
  }
  out << "</td><td class=\"why\" data-label=\"Newest error\">";
  if (const auto* error = status.newer_error) {
    out << verdict_html(error->cls, error->id) << " " << when_html(error->finished_at, now)
        << "<br><span class=\"muted\">" << page_text(model, error->explanation) << "</span>";
  }
  out << "</td><td data-label=\"Now\">";
  if (active) {
    out << "<a href=\"" << verification_href(active->id) << "\">" << to_string(active->state)
        << " (verification " << active->id << ")</a>";
    if (active->state == VerificationState::queued && active->not_before > now)
      out << ", not before " << when_html(active->not_before, now);
  }
  out << "</td></tr>";
}

namespace {

// A check's label as its verdict reads it (reading_text): a note is never tagged as a failure.
std::string reading_tag(const Verdict& verdict, const CheckResult& check) {
  const char* css = "warn";
  switch (reading_of(verdict, check)) {
    case CheckReading::failure:
      css = "bad";
      break;
    case CheckReading::passed:
      css = "ok";
      break;
    case CheckReading::note:
      css = "note";
      break;
    default:
      break;
  }
  return std::string("<span class=\"tag ") + css + "\">" + reading_text(verdict, check) + "</span>";
}

}  // namespace

void verdict_headline_html(std::ostream& out, const ReadModel& model, const VerificationRow& row) {
  out << "<p id=\"headline\" class=\"summary\">"
      << (row.cls ? verdict_html(*row.cls, row.id) : std::string()) << " ";
  if (row.cls) {
    const VerdictSummary summary = summary_of(row);
    out << "<strong>" << page_text(model, summary.headline) << "</strong></p>";
    if (!(summary.counts == CheckCounts{}))
      out << "<p id=\"check-counts\">Checks: " << counts_text(summary.counts) << ".</p>";
    if (!row.explanation.empty() && row.explanation != summary.headline) {
      out << "<details id=\"explanation\"><summary>The verdict in full</summary><p>"
          << page_text(model, row.explanation) << "</p></details>";
    }
  } else {
    out << page_text(model, row.explanation) << "</p>";
  }
}

namespace {

// Where a failed check's evidence is listed in full, on the verification's page: the tensors
// that differ, the files of a moved input. "" when it has none there.
std::string evidence_link(const VerificationRow& row, const CheckResult& check) {
  const std::string page = verification_href(row.id);
  if (check.kind == CheckKind::weights && check.observed) {
    const auto n = static_cast<std::int64_t>(*check.observed);
    return " <a href=\"" + page + "#tensors-differing\">The " + std::to_string(n) +
           (n == 1 ? " tensor" : " tensors") + " that differ</a>.";
  }
  if (check.kind == CheckKind::input && check.evidence.contains("moved"))
    return " <a href=\"" + page + "#evidence-h\">The files that moved</a>.";
  return "";
}

}  // namespace

void checks_table(std::ostream& out, const ReadModel& model, const VerificationRow& row) {
  const Verdict& verdict = *row.verdict;
  if (verdict.checks.empty()) {
    out << "<p>No checks were recorded (the verification ended before comparing anything).</p>";
    return;
  }
  out << "<div class=\"wrap\" role=\"region\" tabindex=\"0\" aria-label=\"Checks table\"><table "
         "id=\"checks\" class=\"cards\"><thead><tr><th scope=\"col\">Check</th>"
         "<th scope=\"col\">Outcome</th><th scope=\"col\">Observed</th><th scope=\"col\">"
         "Reference</th><th scope=\"col\">Accepted band</th><th scope=\"col\">Observed against "
         "the band</th><th scope=\"col\">Margin</th><th scope=\"col\">Explanation</th></tr>"
         "</thead><tbody>";
  for (const auto* check : reading_order(verdict)) {
    const std::string& name = check->name;
    const CheckReading reading = reading_of(verdict, *check);
    out << "<tr data-check=\"" << escape_html(name) << "\" data-reading=\"" << to_string(reading)
        << "\"><th scope=\"row\">" << breakable_name(name) << "</th><td data-label=\"Outcome\">"
        << reading_tag(verdict, *check) << "</td>" << number_cell(check->observed, "Observed")
        << number_cell(check->reference, "Reference")
        << "<td class=\"num range\" data-label=\"Accepted band\">";
    const auto& band = check->band;
    if (band) {
      out << (band->lower ? "[" + short_number(*band->lower) + ", " : "[–, ")
          << short_number(band->upper) << "]";
    } else {
      out << "–";
    }
    out << "</td><td class=\"chart\" data-label=\"Against the band\">";
    if (band && check->observed)
      out << band_chart_svg(name, *check->observed, check->reference, *band,
                            reading == CheckReading::note);
    out << "</td>" << number_cell(check->margin, "Margin")
        << "<td class=\"why\" data-label=\"Explanation\">" << page_text(model, check->explanation)
        << (reading == CheckReading::failure ? evidence_link(row, *check) : std::string())
        << "</td></tr>";
  }
  out << "</tbody></table></div>";
}

void pagination(std::ostream& out, const std::string& path, std::size_t page, std::size_t total,
                std::size_t per_page) {
  const std::size_t pages = std::max<std::size_t>(1, (total + per_page - 1) / per_page);
  if (pages <= 1)
    return;
  out << "<nav aria-label=\"Pagination\"><p>Page " << page << " of " << pages << ". ";
  if (page > 1)
    out << "<a href=\"" << path << "?page=" << page - 1 << "\">Previous</a> ";
  if (page < pages)
    out << "<a href=\"" << path << "?page=" << page + 1 << "\">Next</a>";
  out << "</p></nav>";
}

}  // namespace reverify
