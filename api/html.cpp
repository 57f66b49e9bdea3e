#include "api/html.hpp"

#include "api/snapshot.hpp"
#include "core/version.hpp"

namespace reverify {

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

std::string duration_text(std::int64_t seconds) {
  if (seconds < 0)
    seconds = -seconds;
  if (seconds < 120)
    return std::to_string(seconds) + " s";
  if (seconds < 7200)
    return std::to_string(seconds / 60) + " min";
  if (seconds < 2 * 86400)
    return std::to_string(seconds / 3600) + " h";
  return std::to_string(seconds / 86400) + " d";
}

std::string when_html(UnixSeconds t, UnixSeconds now) {
  const std::string exact = rfc3339(t);
  const std::string relative =
      t <= now ? duration_text(now - t) + " ago" : "in " + duration_text(t - now);
  return "<time datetime=\"" + exact + "\" title=\"" + exact + "\">" + relative + "</time>";
}

const char* verdict_css(std::optional<VerdictClass> cls) {
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

std::string verdict_html(VerdictClass cls, std::int64_t id) {
  std::string label =
      std::string("<span class=\"tag ") + verdict_css(cls) + "\">" + to_string(cls) + "</span>";
  if (id <= 0)
    return label;
  return "<a href=\"" + verification_href(id) + "\">" + label + "</a>";
}

std::string version_href(std::string_view model, std::string_view version) {
  return "/models/" + escape_html(model) + "/" + escape_html(version);
}

std::string verification_href(std::int64_t id) {
  return "/verifications/" + std::to_string(id);
}

void open_page(std::ostream& out, const PageFrame& frame, std::string_view title,
               std::string_view json_href) {
  out << "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
         "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">";
  if (frame.refresh_s > 0) {
    out << "<meta http-equiv=\"refresh\" content=\"" << frame.refresh_s
        << "; url=" << escape_html(frame.path) << "?refresh=" << frame.refresh_s << "\">";
  }
  out << "<title>" << escape_html(title)
      << " · reverify</title><style>"
         "body{font:15px/1.45 system-ui,sans-serif;margin:0;color:#1a1a1a;background:#fff}"
         "header,main,footer{padding:0 1.2rem}header{border-bottom:1px solid #ccc;display:flex;"
         "gap:1.5rem;align-items:baseline;flex-wrap:wrap}header p{margin:.6rem 0;font-weight:700}"
         "nav a{margin-right:1rem}a{color:#0645ad}h1{font-size:1.5rem;margin:.8rem 0 .3rem}"
         "h2{font-size:1.15rem;margin:1.4rem 0 .4rem}"
         ".wrap{overflow-x:auto}table{border-collapse:collapse;min-width:60%}"
         "th,td{padding:.3rem .6rem;border-bottom:1px solid #ddd;text-align:left;"
         "vertical-align:top}th{background:#f3f3f3}td.num{font-variant-numeric:tabular-nums}"
         ".tag{display:inline-block;padding:0 .35rem;border-radius:3px;font-weight:600;"
         "white-space:nowrap}.ok{color:#0b5d1e;background:#e3f4e6}"
         ".bad{color:#8b0000;background:#fde7e7}.err{color:#7a3e00;background:#fdf0dc}"
         ".warn{color:#3d3d3d;background:#ececec}.why{color:#333;max-width:48rem}"
         "dl{display:grid;grid-template-columns:max-content 1fr;gap:.15rem 1rem}dt{font-weight:600}"
         "dd{margin:0}#checks "
         ".why{min-width:20rem}.muted{color:#555}.summary{font-size:1.05rem}pre{background:#f6f6f6;"
         "padding:.6rem;"
         "overflow-x:auto;max-height:24rem}svg text{font:11px system-ui,sans-serif;fill:#333}"
         "footer{border-top:1px solid #ccc;margin-top:2rem;padding-bottom:1rem;color:#555}"
         "</style></head><body><header><p><a href=\"/\">reverify</a></p>"
         "<nav aria-label=\"Pages\"><a href=\"/\">Status</a><a href=\"/models\">All model "
         "versions</a><a href=\"/verifications\">Verifications</a></nav></header><main><h1>"
      << escape_html(title) << "</h1>";
  if (!json_href.empty()) {
    out << "<p class=\"muted\">As JSON: <a href=\"" << escape_html(json_href) << "\">"
        << escape_html(json_href) << "</a></p>";
  }
}

void close_page(std::ostream& out, const PageFrame& frame, const ReadModel& model,
                UnixSeconds now) {
  out << "</main><footer><p>State read from the store " << when_html(model.built_at, now) << ". ";
  if (frame.refresh_s > 0) {
    out << "This page reloads every " << frame.refresh_s << " s: <a href=\""
        << escape_html(frame.path) << "\">stop reloading</a>.";
  } else {
    out << "<a href=\"" << escape_html(frame.path) << "?refresh=" << kSuggestedRefreshS
        << "\">Reload this page every " << kSuggestedRefreshS << " s</a>.";
  }
  out << "</p><p>reverifyd " << reverify_version()
      << " · <a href=\"/metrics\">/metrics</a> · <a href=\"/healthz\">/healthz</a> · "
         "<a href=\"/v1/models\">/v1/models</a> · <a href=\"/v1/verifications\">"
         "/v1/verifications</a></p></footer></body></html>\n";
}

}  // namespace reverify
