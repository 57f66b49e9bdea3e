// The server-rendered status page at "/": problems first, then what is running and queued, the
// next cycle's plan, recent verdicts and the inventory. Plain HTML, no scripts, every value
// escaped.

#include <sstream>

#include "api/http_api.hpp"

namespace reverify {
namespace {

std::string escape_html(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

constexpr std::size_t kInventoryRows = 500;  // a page stays readable with 100k versions

const char* css_class(std::optional<VerdictClass> cls) {
  if (!cls)
    return "warn";
  if (*cls == VerdictClass::passed)
    return "ok";
  if (is_failure(*cls))
    return "bad";
  if (is_error(*cls))
    return "err";
  return "warn";
}

void verdict_cell(std::ostream& out, const std::optional<VerdictBrief>& brief) {
  if (!brief) {
    out << "<td>never verified</td><td></td>";
    return;
  }
  out << "<td class=\"" << css_class(brief->cls) << "\">" << to_string(brief->cls) << "</td><td>"
      << rfc3339(brief->finished_at) << "</td>";
}

}  // namespace

std::string render_status_page(const ReadModel& model, UnixSeconds now) {
  std::ostringstream out;
  out << "<!doctype html><html><head><meta charset=\"utf-8\"><title>reverify</title><style>"
         "body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}"
         "td,th{padding:2px 8px;border-bottom:1px solid #ddd;text-align:left}"
         ".ok{color:#070}.bad{color:#b00;font-weight:bold}.err{color:#a60}.warn{color:#666}"
         "</style></head><body><h1>reverify</h1>";
  std::size_t versions = 0, never = 0, invalid = 0;
  std::vector<const VersionView*> problems;
  for (const auto& [name, by_version] : model.models) {
    for (const auto& [version, view] : by_version) {
      if (view.row.removed)
        continue;
      ++versions;
      if (!view.latest)
        ++never;
      if (view.row.manifest_error)
        ++invalid;
      if (view.row.manifest_error || (view.latest && view.latest->cls != VerdictClass::passed)) {
        problems.push_back(&view);
      }
    }
  }
  out << "<p>" << versions << " model versions, " << never << " never verified, " << invalid
      << " with an invalid manifest; " << model.stats.running << " running, " << model.stats.queued
      << " queued. State as of " << rfc3339(model.built_at) << " (now " << rfc3339(now) << ").</p>";

  out << "<h2>Needs attention (" << problems.size()
      << ")</h2><table><tr><th>model@version</th>"
         "<th>owner</th><th>latest</th><th>at</th><th>why</th></tr>";
  for (std::size_t i = 0; i < problems.size() && i < kInventoryRows; ++i) {
    const auto& view = *problems[i];
    out << "<tr><td>" << escape_html(view.row.model + "@" + view.row.version) << "</td><td>"
        << escape_html(view.row.owner) << "</td>";
    verdict_cell(out, view.latest);
    out << "<td>"
        << escape_html(view.row.manifest_error ? "manifest: " + *view.row.manifest_error
                                               : view.latest->explanation)
        << "</td></tr>";
  }
  out << "</table>";

  out << "<h2>Recent verifications</h2><table><tr><th>id</th><th>model@version</th>"
         "<th>state</th><th>class</th><th>mode</th><th>trigger</th><th>queued</th></tr>";
  for (std::size_t i = 0; i < model.recent.size() && i < 50; ++i) {
    const auto& row = model.recent[i];
    const std::string cls = row.cls ? to_string(*row.cls) : "";
    out << "<tr><td><a href=\"/v1/verifications/" << row.id << "\">" << row.id << "</a></td><td>"
        << escape_html(row.model + "@" + row.version) << "</td><td>" << to_string(row.state)
        << "</td><td class=\"" << css_class(row.cls) << "\">" << cls << "</td><td>"
        << to_string(row.mode) << "</td><td>" << to_string(row.trigger) << "</td><td>"
        << rfc3339(row.queued_at) << "</td></tr>";
  }
  out << "</table>";

  if (model.plan.is_object() && model.plan.contains("entries")) {
    out << "<h2>Next cycle</h2><table><tr><th>model@version</th><th>mode</th><th>why</th></tr>";
    for (const auto& entry : model.plan["entries"]) {
      out << "<tr><td>" << escape_html(entry.value("model", "") + "@" + entry.value("version", ""))
          << "</td><td>" << escape_html(entry.value("mode", "")) << "</td><td>"
          << escape_html(entry.value("reason", "")) << "</td></tr>";
    }
    out << "</table>";
  }

  out << "<h2>Inventory</h2><table><tr><th>model@version</th><th>owner</th><th>level</th>"
         "<th>latest</th><th>at</th><th>signed summary</th></tr>";
  std::size_t shown = 0;
  for (const auto& [name, by_version] : model.models) {
    for (const auto& [version, view] : by_version) {
      if (view.row.removed || shown++ >= kInventoryRows)
        continue;
      out << "<tr><td><a href=\"/v1/models/" << escape_html(name) << "/versions/"
          << escape_html(version) << "\">" << escape_html(name + "@" + version) << "</a></td><td>"
          << escape_html(view.row.owner) << "</td><td>" << escape_html(view.row.level) << "</td>";
      verdict_cell(out, view.latest);
      out << "<td>";
      if (view.attestation) {
        out << "<a href=\"/v1/attestations/" << escape_html(name) << "/" << escape_html(version)
            << "\">" << escape_html(view.attestation->result) << " (verification "
            << view.attestation->verification_id << ")</a>";
      }
      out << "</td></tr>";
    }
  }
  out << "</table>";
  if (versions > kInventoryRows) {
    out << "<p>First " << kInventoryRows << " of " << versions
        << " shown; the complete list is at <a href=\"/v1/models\">/v1/models</a>.</p>";
  }
  out << "<p><a href=\"/metrics\">metrics</a> · <a href=\"/v1/models\">models</a> · "
         "<a href=\"/v1/verifications\">verifications</a></p></body></html>\n";
  return out.str();
}

}  // namespace reverify
