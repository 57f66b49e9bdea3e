#include "api/html.hpp"

#include "api/snapshot.hpp"
#include "core/page_links.hpp"
#include "core/version.hpp"

namespace reverify {
namespace {

// The pages' one style sheet. Colours come from variables: the light set, and a dark one under
// prefers-color-scheme: dark, each pair of text and background at WCAG AA contrast (4.5:1) or
// better. Up to 1100 px a table becomes a stack of cards (kCards), so nothing scrolls sideways
// on a phone; wider, cells wrap (long texts anywhere) so no column is clipped. Charts scale to
// their cell.
constexpr const char* kStyle =
    ":root{color-scheme:light dark;--fg:#1a1a1a;--bg:#fff;--muted:#555;--line:#d0d0d0;"
    "--head:#f1f1f1;--link:#0645ad;--code:#f4f4f4;--ok-fg:#0b5d1e;--ok-bg:#e3f4e6;"
    "--bad-fg:#8b0000;--bad-bg:#fde7e7;--err-fg:#7a3e00;--err-bg:#fdf0dc;--warn-fg:#3d3d3d;"
    "--warn-bg:#ececec;--band:#cfe0f5;--band-edge:#3b6ea5;--axis:#767676;--pass:#17803a;"
    "--fail:#c00000;--dot-edge:#fff}"
    "@media (prefers-color-scheme:dark){:root{--fg:#e6e6e6;--bg:#141619;--muted:#b0b6bd;"
    "--line:#454a50;--head:#22262b;--link:#8ab4f8;--code:#1f2327;--ok-fg:#8fe3a9;"
    "--ok-bg:#14331e;--bad-fg:#ffaaaa;--bad-bg:#421717;--err-fg:#ffc98a;--err-bg:#3b2708;"
    "--warn-fg:#dcdcdc;--warn-bg:#33373c;--band:#27415f;--band-edge:#7fa7d6;--axis:#9aa0a6;"
    "--pass:#4cc777;--fail:#ff6b6b;--dot-edge:#141619}}"
    "body{font:15px/1.45 system-ui,sans-serif;margin:0;color:var(--fg);background:var(--bg);"
    "overflow-wrap:break-word}"
    "header,main,footer{padding:0 1.2rem}header{border-bottom:1px solid var(--line);display:flex;"
    "gap:0 1.5rem;align-items:baseline;flex-wrap:wrap}header p{margin:.6rem 0;font-weight:700}"
    "nav a{margin-right:1rem;display:inline-block}a{color:var(--link)}"
    "h1{font-size:1.5rem;margin:.8rem 0 .3rem}h2{font-size:1.15rem;margin:1.4rem 0 .4rem}"
    "code{background:var(--code);padding:0 .2rem;border-radius:3px}"
    ".wrap{overflow-x:auto}table{border-collapse:collapse;width:100%}"
    "th,td{padding:.3rem .5rem;border-bottom:1px solid var(--line);text-align:left;"
    "vertical-align:top;overflow-wrap:break-word}td.why{overflow-wrap:anywhere;min-width:10rem}"
    "thead th{background:var(--head)}"
    "td.num{font-variant-numeric:tabular-nums;white-space:nowrap}td.range{white-space:normal}"
    ".tag{display:inline-block;max-width:100%;padding:0 .35rem;border-radius:3px;"
    "font-weight:600;white-space:nowrap}.ok{color:var(--ok-fg);background:var(--ok-bg)}"
    ".bad{color:var(--bad-fg);background:var(--bad-bg)}"
    ".err{color:var(--err-fg);background:var(--err-bg)}"
    ".warn{color:var(--warn-fg);background:var(--warn-bg)}"
    ".note{color:var(--fg);background:var(--code);font-weight:400;font-style:italic}"
    "dl{display:grid;grid-template-columns:max-content minmax(0,1fr);gap:.15rem 1rem}"
    "dt{font-weight:600}dd{margin:0;overflow-wrap:anywhere}"
    ".muted{color:var(--muted)}.summary{font-size:1.05rem}"
    "pre{background:var(--code);padding:.6rem;overflow:auto;max-height:24rem}"
    "svg{max-width:100%;height:auto}svg.band{width:100%;min-width:8rem;max-width:16rem}td.chart{"
    "width:12rem}"
    "svg text{font:11px system-ui,sans-serif;fill:var(--fg)}"
    "svg .band-area{fill:var(--band);stroke:var(--band-edge)}"
    "svg .reference{stroke:var(--band-edge)}svg .axis{stroke:var(--axis)}"
    "svg .inside{fill:var(--pass);stroke:var(--pass)}svg .outside{fill:var(--fail);"
    "stroke:var(--fail)}svg .note{fill:var(--axis);stroke:var(--axis)}"
    "svg circle.observed{stroke:var(--dot-edge)}"
    "svg .trend-line{stroke:var(--fg);fill:none}svg .trend-point{fill:var(--fg)}"
    "footer{border-top:1px solid var(--line);margin-top:2rem;padding-bottom:1rem;"
    "color:var(--muted)}";

// Tables become cards up to 1100 px: wider, each fits its page with every cell at its smallest
// (the browser test checks the width right above). A card is a row in a box, each cell a line
// led by its column's name (data-label), the column headings visually hidden but still read.
constexpr const char* kCards =
    "@media (max-width:1100px){table.cards,.cards thead,.cards tbody,.cards tr,.cards th,"
    ".cards td{display:block}"
    ".cards thead{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0)}"
    ".cards tr{border:1px solid var(--line);border-radius:6px;margin:0 0 .8rem;"
    "padding:.35rem .6rem}"
    ".cards td,.cards tbody th{border:0;padding:.15rem 0 .15rem 8.5rem;position:relative;"
    "min-height:1.2em;overflow-wrap:anywhere;min-width:0}.cards .tag{white-space:normal}"
    ".cards td::before,.cards tbody th::before{content:attr(data-label);position:absolute;"
    "left:0;width:8rem;font-weight:600;color:var(--muted);overflow-wrap:anywhere}"
    ".cards td:not([data-label]),.cards tbody th:not([data-label]){padding-left:0;"
    "font-weight:600}.cards td:empty{display:none}}";

}  // namespace

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
  // The link is the label itself: a label box inside a link's line box overlaps it where the
  // label wraps, and its contrast can then not be checked.
  const std::string css = std::string("tag ") + verdict_css(cls);
  if (id <= 0)
    return "<span class=\"" + css + "\">" + to_string(cls) + "</span>";
  return "<a class=\"" + css + "\" href=\"" + verification_href(id) + "\">" + to_string(cls) +
         "</a>";
}

std::string version_href(std::string_view model, std::string_view version) {
  return escape_html(version_page_url("", model, version));
}

std::string verification_href(std::int64_t id) {
  return verification_page_url("", id);
}

void open_page(std::ostream& out, const PageFrame& frame, std::string_view title,
               std::string_view json_href) {
  out << "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
         "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">";
  if (frame.refresh_s > 0) {
    out << "<meta http-equiv=\"refresh\" content=\"" << frame.refresh_s
        << "; url=" << escape_html(frame.path) << "?refresh=" << frame.refresh_s << "\">";
  }
  out << "<title>" << escape_html(title) << " · reverify</title><style>" << kStyle << kCards
      << "</style></head><body><header><p><a href=\"/\">reverify</a></p>"
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
