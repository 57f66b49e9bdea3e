#include "api/charts.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

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

}  // namespace

std::string short_number(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.6g", value);
  return text;
}

std::string band_chart_svg(const std::string& check, double observed,
                           std::optional<double> reference, const CheckBand& band) {
  constexpr double kWidth = 240, kHeight = 30, kMargin = 8;
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
  const std::string range =
      band.lower ? "[" + short_number(*band.lower) + ", " + short_number(band.upper) + "]"
                 : "at most " + short_number(band.upper);
  const std::string label = check + ": observed " + short_number(observed) +
                            (inside ? ", inside" : ", OUTSIDE") + " the accepted band " + range +
                            (reference ? ", reference " + short_number(*reference) : "");
  std::string svg = "<svg class=\"band\" role=\"img\" width=\"" + px(kWidth) + "\" height=\"" +
                    px(kHeight) + "\" viewBox=\"0 0 " + px(kWidth) + " " + px(kHeight) +
                    "\" aria-label=\"" + escape_html(label) + "\" data-observed=\"" +
                    full_number(observed) + "\" data-upper=\"" + full_number(band.upper) + "\"";
  if (band.lower)
    svg += " data-lower=\"" + full_number(*band.lower) + "\"";
  if (reference)
    svg += " data-reference=\"" + full_number(*reference) + "\"";
  svg += std::string(" data-inside=\"") + (inside ? "true" : "false") + "\"><title>" +
         escape_html(label) + "</title>";
  const double mid = kHeight / 2;
  svg += "<line x1=\"" + px(kMargin) + "\" x2=\"" + px(kWidth - kMargin) + "\" y1=\"" + px(mid) +
         "\" y2=\"" + px(mid) + "\" stroke=\"#999\"/>";
  svg += "<rect class=\"band-area\" x=\"" + px(x(lower)) + "\" y=\"5\" width=\"" +
         px(std::max(x(band.upper) - x(lower), 1.0)) + "\" height=\"" + px(kHeight - 10) +
         "\" fill=\"#cfe0f5\" stroke=\"#3b6ea5\"/>";
  if (reference) {
    svg += "<line class=\"reference\" x1=\"" + px(x(*reference)) + "\" x2=\"" + px(x(*reference)) +
           "\" y1=\"3\" y2=\"" + px(kHeight - 3) +
           "\" stroke=\"#3b6ea5\" stroke-dasharray=\"3 2\"/>";
  }
  // The margin: from the observed value to the nearest edge it must stay within (inside) or the
  // edge it crossed (outside); for an upper bound, only the upper edge counts.
  double edge = band.upper;
  if (band.lower &&
      (observed < *band.lower || (inside && observed - *band.lower < band.upper - observed))) {
    edge = *band.lower;
  }
  const double margin = inside ? std::fabs(edge - observed) : -std::fabs(edge - observed);
  svg += "<line class=\"margin\" data-margin=\"" + full_number(margin) + "\" x1=\"" +
         px(x(observed)) + "\" x2=\"" + px(x(edge)) + "\" y1=\"" + px(mid) + "\" y2=\"" + px(mid) +
         "\" stroke=\"" + (inside ? "#17803a" : "#c00000") +
         "\" stroke-width=\"3\"><title>margin " + short_number(margin) + "</title></line>";
  svg += "<circle class=\"observed\" cx=\"" + px(x(observed)) + "\" cy=\"" + px(mid) +
         "\" r=\"5\" fill=\"" + (inside ? "#17803a" : "#c00000") +
         "\" stroke=\"#fff\" stroke-width=\"1.5\"/></svg>";
  return svg;
}

std::string trend_svg(const std::string& metric, const std::vector<TrendPoint>& points,
                      const std::optional<CheckBand>& band) {
  constexpr double kWidth = 360, kHeight = 110, kLeft = 56, kRight = 12, kTop = 10, kBottom = 20;
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
    spoken += (spoken.empty() ? "" : ", ") + short_number(p.value);
  }
  const std::string label = metric + " across the last " + std::to_string(points.size()) +
                            " verification(s), oldest first: " + spoken;
  std::string svg = "<svg class=\"trend\" role=\"img\" width=\"" + px(kWidth) + "\" height=\"" +
                    px(kHeight) + "\" viewBox=\"0 0 " + px(kWidth) + " " + px(kHeight) +
                    "\" aria-label=\"" + escape_html(label) + "\" data-values=\"" + values +
                    "\"><title>" + escape_html(label) + "</title>";
  if (band) {
    const double top = y(band->upper), bottom = y(band->lower.value_or(0.0));
    svg += "<rect x=\"" + px(kLeft) + "\" y=\"" + px(top) + "\" width=\"" +
           px(kWidth - kLeft - kRight) + "\" height=\"" + px(std::max(bottom - top, 1.0)) +
           "\" fill=\"#cfe0f5\"/>";
  }
  svg += "<line x1=\"" + px(kLeft) + "\" x2=\"" + px(kLeft) + "\" y1=\"" + px(kTop) + "\" y2=\"" +
         px(kHeight - kBottom) + "\" stroke=\"#999\"/>";
  for (double v : {y.hi, y.lo}) {
    svg += "<text x=\"" + px(kLeft - 4) + "\" y=\"" + px(y(v) + 4) + "\" text-anchor=\"end\">" +
           short_number(v) + "</text>";
  }
  std::string line;
  for (std::size_t i = 0; i < points.size(); ++i)
    line += (line.empty() ? "" : " ") + px(x(i)) + "," + px(y(points[i].value));
  if (points.size() > 1)
    svg += "<polyline points=\"" + line + "\" fill=\"none\" stroke=\"#1a1a1a\"/>";
  for (std::size_t i = 0; i < points.size(); ++i) {
    const auto& p = points[i];
    svg += "<circle cx=\"" + px(x(i)) + "\" cy=\"" + px(y(p.value)) +
           "\" r=\"3.5\" fill=\"#1a1a1a\"><title>verification " +
           std::to_string(p.verification_id) + " at " + rfc3339(p.at) + ": " +
           short_number(p.value) + "</title></circle>";
  }
  svg += "<text x=\"" + px(kLeft) + "\" y=\"" + px(kHeight - 5) + "\">oldest</text><text x=\"" +
         px(kWidth - kRight) + "\" y=\"" + px(kHeight - 5) + "\" text-anchor=\"end\">newest</text>";
  return svg + "</svg>";
}

}  // namespace reverify
