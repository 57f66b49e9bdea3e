#include "api/charts.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>

#include "api/html.hpp"

namespace reverify {
namespace {

std::string full_number(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.17g", value);
  return text;
}

std::string px(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f", value);
  return text;
}

// Maps [lo, hi] (widened by a margin, never empty) onto [from, to] pixels.
struct Scale {
  double lo, hi, from, to;
  Scale(double low, double high, double from_px, double to_px) : from(from_px), to(to_px) {
    double span = high - low;
    if (!(span > 0))
      span = std::max(std::fabs(high) * 0.02, 1e-9);
    lo = low - span * 0.12;
    hi = high + span * 0.12;
  }
  double operator()(double v) const { return from + (v - lo) / (hi - lo) * (to - from); }
};

// Round values (a step of 1, 2 or 5 times a power of ten) inside [lo, hi], about `target` of
// them, and the step.
std::pair<std::vector<double>, double> nice_ticks(double lo, double hi, int target) {
  const double raw = (hi - lo) / target;
  if (!(raw > 0) || !std::isfinite(raw))
    return {{lo}, 0};
  const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  const double norm = raw / magnitude;
  const double step = (norm < 1.5 ? 1 : norm < 3 ? 2 : norm < 7 ? 5 : 10) * magnitude;
  std::vector<double> ticks;
  for (double t = std::ceil(lo / step) * step; t <= hi + step * 1e-9; t += step)
    ticks.push_back(std::fabs(t) < step * 1e-9 ? 0.0 : t);
  return {ticks, step};
}

// A tick's label: as many decimals as the step needs.
std::string tick_text(double value, double step) {
  char text[32];
  const int decimals =
      step > 0 ? std::max(0, -static_cast<int>(std::floor(std::log10(step) + 1e-9))) : 3;
  if (std::fabs(value) >= 1e6 || (value != 0 && std::fabs(value) < 1e-4) || decimals > 6)
    std::snprintf(text, sizeof text, "%.3g", value);
  else
    std::snprintf(text, sizeof text, "%.*f", decimals, value);
  return text;
}

// What a check's values are measured in, from its name: "primary:accuracy" -> "accuracy",
// "segment:digit=8:accuracy" -> "accuracy", "distribution:ks" -> "ks".
std::string unit_of(const std::string& check) {
  const auto colon = check.rfind(':');
  return colon == std::string::npos ? check : check.substr(colon + 1);
}

std::string svg_open(const char* css, double width, double height, const std::string& label) {
  return std::string("<svg class=\"") + css + "\" role=\"img\" width=\"" + px(width) +
         "\" height=\"" + px(height) + "\" viewBox=\"0 0 " + px(width) + " " + px(height) +
         "\" aria-label=\"" + escape_html(label) + "\"";
}

}  // namespace

std::string short_number(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.6g", value);
  return text;
}

std::string band_chart_svg(const std::string& check, double observed,
                           std::optional<double> reference, const CheckBand& band, bool note) {
  // The band's row (y 3-23), then the value axis: its line, ticks and their labels, the unit.
  constexpr double kWidth = 240, kHeight = 58, kMargin = 12;
  constexpr double kBandTop = 3, kBandBottom = 23, kAxis = 28;
  const double lower = band.lower.value_or(0.0);
  double lo = std::min({lower, band.upper, observed}), hi = std::max({lower, band.upper, observed});
  if (reference) {
    lo = std::min(lo, *reference);
    hi = std::max(hi, *reference);
  }
  if (!band.lower)
    lo = std::min(lo, 0.0);
  const Scale x(lo, hi, kMargin, kWidth - kMargin);
  const bool inside = observed <= band.upper && (!band.lower || observed >= *band.lower);
  const std::string side = std::string(inside ? "inside" : "outside") + (note ? " note" : "");
  const std::string unit = unit_of(check);
  const std::string range =
      band.lower ? "[" + short_number(*band.lower) + ", " + short_number(band.upper) + "]"
                 : "at most " + short_number(band.upper);
  const std::string label = check + ": observed " + short_number(observed) +
                            (inside ? ", inside" : ", OUTSIDE") + " the accepted band " + range +
                            (reference ? ", reference " + short_number(*reference) : "") + " (" +
                            unit + ")";
  std::string svg = svg_open("band", kWidth, kHeight, label) + " data-observed=\"" +
                    full_number(observed) + "\" data-upper=\"" + full_number(band.upper) + "\"";
  if (band.lower)
    svg += " data-lower=\"" + full_number(*band.lower) + "\"";
  if (reference)
    svg += " data-reference=\"" + full_number(*reference) + "\"";
  svg += std::string(" data-inside=\"") + (inside ? "true" : "false") + "\"><title>" +
         escape_html(label) + "</title>";
  const double mid = (kBandTop + kBandBottom) / 2;
  svg += "<rect class=\"band-area\" x=\"" + px(x(lower)) + "\" y=\"" + px(kBandTop) +
         "\" width=\"" + px(std::max(x(band.upper) - x(lower), 1.0)) + "\" height=\"" +
         px(kBandBottom - kBandTop) + "\" fill=\"#cfe0f5\" stroke=\"#3b6ea5\"/>";
  if (reference) {
    svg += "<line class=\"reference\" x1=\"" + px(x(*reference)) + "\" x2=\"" + px(x(*reference)) +
           "\" y1=\"1\" y2=\"" + px(kBandBottom + 2) +
           "\" stroke=\"#3b6ea5\" stroke-dasharray=\"3 2\"/>";
  }
  // The value axis, with round ticks labelled in the check's own unit.
  svg += "<g class=\"x-axis\"><line class=\"axis\" x1=\"" + px(kMargin) + "\" x2=\"" +
         px(kWidth - kMargin) + "\" y1=\"" + px(kAxis) + "\" y2=\"" + px(kAxis) +
         "\" stroke=\"#767676\"/>";
  const auto [ticks, step] = nice_ticks(x.lo, x.hi, 3);
  for (double t : ticks) {
    svg += "<line class=\"axis\" x1=\"" + px(x(t)) + "\" x2=\"" + px(x(t)) + "\" y1=\"" +
           px(kAxis) + "\" y2=\"" + px(kAxis + 4) +
           "\" stroke=\"#767676\"/><text class=\"tick\" x=\"" + px(x(t)) + "\" y=\"" +
           px(kAxis + 14) + "\" text-anchor=\"middle\">" + tick_text(t, step) + "</text>";
  }
  svg += "<text class=\"unit\" x=\"" + px(kWidth - kMargin) + "\" y=\"" + px(kHeight - 2) +
         "\" text-anchor=\"end\">" + escape_html(unit) + "</text></g>";
  // The margin: from the observed value to the nearest edge it must stay within (inside) or the
  // edge it crossed (outside); for an upper bound, only the upper edge counts.
  double edge = band.upper;
  if (band.lower &&
      (observed < *band.lower || (inside && observed - *band.lower < band.upper - observed))) {
    edge = *band.lower;
  }
  const double margin = inside ? std::fabs(edge - observed) : -std::fabs(edge - observed);
  const std::string colour = note ? "#767676" : inside ? "#17803a" : "#c00000";
  svg += std::string("<line class=\"margin ") + side + "\" data-margin=\"" + full_number(margin) +
         "\" x1=\"" + px(x(observed)) + "\" x2=\"" + px(x(edge)) + "\" y1=\"" + px(mid) +
         "\" y2=\"" + px(mid) + "\" stroke=\"" + colour + "\" stroke-width=\"3\"><title>margin " +
         short_number(margin) + "</title></line>";
  svg += std::string("<circle class=\"observed ") + side + "\" cx=\"" + px(x(observed)) +
         "\" cy=\"" + px(mid) + "\" r=\"5\" fill=\"" + colour +
         "\" stroke=\"#fff\" stroke-width=\"1.5\"/></svg>";
  return svg;
}

std::string trend_svg(const std::string& metric, const std::vector<TrendPoint>& points,
                      const std::optional<CheckBand>& band) {
  // The metric's axis on the left (round ticks, light grid lines, the metric's name above it);
  // the verifications oldest to newest, each labelled with its date below when there is room.
  constexpr double kWidth = 520, kHeight = 170, kLeft = 56, kRight = 16, kTop = 22, kBottom = 36;
  constexpr std::size_t kMaxDateLabels = 5;
  if (points.empty())
    return {};
  double lo = points.front().value, hi = lo;
  for (const auto& p : points) {
    lo = std::min(lo, p.value);
    hi = std::max(hi, p.value);
  }
  if (band) {
    lo = std::min(lo, band->lower.value_or(0.0));
    hi = std::max(hi, band->upper);
  }
  const Scale y(lo, hi, kHeight - kBottom, kTop);
  const auto x = [&](std::size_t i) {
    return points.size() == 1
               ? (kLeft + kWidth - kRight) / 2
               : kLeft + double(i) * (kWidth - kLeft - kRight) / double(points.size() - 1);
  };
  std::string values, spoken;
  for (const auto& p : points) {
    values += (values.empty() ? "" : " ") + full_number(p.value);
    spoken += (spoken.empty() ? "" : ", ") + short_number(p.value) + " (" +
              rfc3339(p.at).substr(0, 10) + ")";
  }
  const std::string label = metric + " across the last " + std::to_string(points.size()) +
                            " verification(s), oldest first: " + spoken;
  std::string svg = svg_open("trend", kWidth, kHeight, label) + " data-values=\"" + values +
                    "\"><title>" + escape_html(label) + "</title>";
  if (band) {
    const double top = y(band->upper), bottom = y(band->lower.value_or(0.0));
    svg += "<rect class=\"band-area\" x=\"" + px(kLeft) + "\" y=\"" + px(top) + "\" width=\"" +
           px(kWidth - kLeft - kRight) + "\" height=\"" + px(std::max(bottom - top, 1.0)) +
           "\" fill=\"#cfe0f5\" stroke=\"none\"/>";
  }
  // The value axis: ticks, grid lines and labels; the metric's name over it.
  svg += "<g class=\"y-axis\"><line class=\"axis\" x1=\"" + px(kLeft) + "\" x2=\"" + px(kLeft) +
         "\" y1=\"" + px(kTop) + "\" y2=\"" + px(kHeight - kBottom) + "\" stroke=\"#767676\"/>";
  const auto [ticks, step] = nice_ticks(y.lo, y.hi, 4);
  for (double t : ticks) {
    svg += "<line class=\"axis\" x1=\"" + px(kLeft - 4) + "\" x2=\"" + px(kWidth - kRight) +
           "\" y1=\"" + px(y(t)) + "\" y2=\"" + px(y(t)) +
           "\" stroke=\"#767676\" stroke-opacity=\"0.35\"/><text class=\"tick\" x=\"" +
           px(kLeft - 6) + "\" y=\"" + px(y(t) + 4) + "\" text-anchor=\"end\">" +
           tick_text(t, step) + "</text>";
  }
  svg += "<text class=\"unit\" x=\"" + px(kLeft - 6) + "\" y=\"" + px(kTop - 10) +
         "\" text-anchor=\"start\">" + escape_html(metric) + "</text></g>";
  // The time axis: the dates of up to kMaxDateLabels verifications, evenly picked, first and last
  // always; with the time of day too when two picked ones share a date.
  svg += "<g class=\"x-axis\"><line class=\"axis\" x1=\"" + px(kLeft) + "\" x2=\"" +
         px(kWidth - kRight) + "\" y1=\"" + px(kHeight - kBottom) + "\" y2=\"" +
         px(kHeight - kBottom) + "\" stroke=\"#767676\"/>";
  std::vector<std::size_t> labelled;
  const std::size_t n = points.size();
  const std::size_t shown = std::min(n, kMaxDateLabels);
  for (std::size_t k = 0; k < shown; ++k) {
    const std::size_t i = shown == 1 ? 0 : k * (n - 1) / (shown - 1);
    if (labelled.empty() || labelled.back() != i)
      labelled.push_back(i);
  }
  std::set<std::string> dates;
  for (std::size_t i : labelled)
    dates.insert(rfc3339(points[i].at).substr(0, 10));
  const bool with_time = dates.size() < labelled.size();
  for (std::size_t k = 0; k < labelled.size(); ++k) {
    const std::size_t i = labelled[k];
    const std::string when = rfc3339(points[i].at);  // 2026-11-30T12:52:32Z
    const std::string text =
        with_time ? when.substr(5, 5) + " " + when.substr(11, 5) : when.substr(0, 10);
    const char* anchor = labelled.size() == 1       ? "middle"
                         : k == 0                   ? "start"
                         : k + 1 == labelled.size() ? "end"
                                                    : "middle";
    svg += "<line class=\"axis\" x1=\"" + px(x(i)) + "\" x2=\"" + px(x(i)) + "\" y1=\"" +
           px(kHeight - kBottom) + "\" y2=\"" + px(kHeight - kBottom + 4) +
           "\" stroke=\"#767676\"/><text class=\"date\" x=\"" + px(x(i)) + "\" y=\"" +
           px(kHeight - kBottom + 16) + "\" text-anchor=\"" + anchor + "\">" + text + "</text>";
  }
  svg += "<text class=\"unit\" x=\"" + px(kWidth - kRight) + "\" y=\"" + px(kHeight - 4) +
         "\" text-anchor=\"end\">verified (UTC), oldest to newest</text></g>";
  std::string line;
  for (std::size_t i = 0; i < points.size(); ++i)
    line += (line.empty() ? "" : " ") + px(x(i)) + "," + px(y(points[i].value));
  if (points.size() > 1) {
    svg +=
        "<polyline class=\"trend-line\" points=\"" + line + "\" fill=\"none\" stroke=\"#1a1a1a\"/>";
  }
  for (std::size_t i = 0; i < points.size(); ++i) {
    const auto& p = points[i];
    svg += "<circle class=\"trend-point\" cx=\"" + px(x(i)) + "\" cy=\"" + px(y(p.value)) +
           "\" r=\"3.5\" fill=\"#1a1a1a\"><title>verification " +
           std::to_string(p.verification_id) + " at " + rfc3339(p.at) + ": " +
           short_number(p.value) + "</title></circle>";
  }
  return svg + "</svg>";
}

}  // namespace reverify
