#pragma once
// Building blocks of the server-rendered HTML pages (status_page.cpp, version_page.cpp): one page
// shell (lang, viewport, refresh, landmarks, navigation, the JSON twin of the page, the style
// sheet: light and dark colours, tables that become cards on a narrow screen), escaping, human
// times. Plain HTML and CSS, no scripts: every page works without JavaScript.
//
// Tables: a table with class "cards" turns into one box per row up to 1100 px; each cell is
// labelled there by its data-label attribute (its column's name); a cell without one is the card's
// title, and an empty cell is left out. Cells of long text (explanations, reasons, paths) carry
// class "why": they wrap anywhere.

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>

#include "core/unix_time.hpp"
#include "core/verdict_class.hpp"

namespace reverify {

struct ReadModel;

// A page's own address and whether it reloads itself. Reloading is opt-in (?refresh=S): an
// automatic refresh fails WCAG 2.2.1 (axe "meta-refresh", critical), since it moves a screen
// reader or a keyboard user away from where they were; a wall display asks for it.
struct PageFrame {
  std::string path;   // "/", "/models/m/v", ...: the target of the refresh on/off link
  int refresh_s = 0;  // 0: no <meta http-equiv="refresh">
};
inline constexpr int kSuggestedRefreshS = 30;
inline constexpr int kMinRefreshS = 5, kMaxRefreshS = 86'400;

std::string escape_html(std::string_view text);

// "3 min ago" (or "in 3 min" for a time ahead of now), with the exact UTC time as a tooltip.
std::string when_html(UnixSeconds t, UnixSeconds now);

// The CSS class that colours a verdict: ok (passed), bad (failed:*), err (error:*), warn.
const char* verdict_css(std::optional<VerdictClass> cls);
// A verdict class as a coloured label, linked to its verification's page when id > 0.
std::string verdict_html(VerdictClass cls, std::int64_t id = 0);

// "/models/digits-mlp/2026.11.1" (names are [A-Za-z0-9._-], safe in a path as they are).
std::string version_href(std::string_view model, std::string_view version);
std::string verification_href(std::int64_t id);

// <!doctype html> ... <main>: `title` is the <title> and the <h1>; `json_href` names the same
// data as JSON under /v1 (linked from the page). close_page ends <main> and adds the footer with
// the state's age and the link that turns reloading on or off.
void open_page(std::ostream& out, const PageFrame& frame, std::string_view title,
               std::string_view json_href);
void close_page(std::ostream& out, const PageFrame& frame, const ReadModel& model, UnixSeconds now);

}  // namespace reverify
