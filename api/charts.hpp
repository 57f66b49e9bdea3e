#pragma once
// Inline SVG charts for the HTML pages (no scripts, no external files): a check's observed value
// against its accepted band, and a metric's trend across verifications. Each chart is an
// <svg role="img"> with a text alternative that states the numbers, and carries them as data-*
// attributes (full precision) for tests and tools. Each has its axes: round ticks (1, 2 or 5
// times a power of ten) labelled in the check's unit (the last part of its name: accuracy, ks,
// loss), and on the trend the verifications' dates. Colours are classes the page's style sheet
// sets (light and dark); the fill and stroke attributes are the fallback without it. Charts
// scale down with their box (the style sheet sets width 100%, height auto).

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/unix_time.hpp"
#include "policies/verdict_model.hpp"

namespace reverify {

// The band (shaded), the reference (dashed, when given), the observed value (a dot: green inside
// the band, red outside) and its margin (a bar from the dot to the nearest edge, or to the edge it
// crossed), over a value axis. An upper bound only (band.lower absent) is drawn from 0. A note
// (policies/headline.hpp) is drawn in grey on either side: it decides nothing, so it is never a
// failure's red.
std::string band_chart_svg(const std::string& check, double observed,
                           std::optional<double> reference, const CheckBand& band,
                           bool note = false);

struct TrendPoint {
  std::int64_t verification_id = 0;
  UnixSeconds at = 0;
  double value = 0;
};

// `points` oldest first, evenly spaced, up to five of them dated on the time axis (with the time
// of day when two share a date); `band` (optional) is shaded behind them: the latest verdict's
// band.
std::string trend_svg(const std::string& metric, const std::vector<TrendPoint>& points,
                      const std::optional<CheckBand>& band);

// A number as the pages print it ("0.9611", "1.2e-05"): 6 significant digits.
std::string short_number(double value);

}  // namespace reverify
