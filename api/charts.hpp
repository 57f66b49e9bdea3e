#pragma once
// Inline SVG charts for the HTML pages (no scripts, no external files): a check's observed value
// against its accepted band, and a metric's trend across verifications. Each chart is an
// <svg role="img"> with a text alternative that states the numbers, and carries them as data-*
// attributes (full precision) for tests and tools.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/unix_time.hpp"
#include "policies/verdict_model.hpp"

namespace reverify {

// The band (shaded), the reference (dashed, when given), the observed value (a dot: green inside
// the band, red outside) and its margin (a bar from the dot to the nearest edge, or to the edge it
// crossed). An upper bound only (band.lower absent) is drawn from 0.
std::string band_chart_svg(const std::string& check, double observed,
                           std::optional<double> reference, const CheckBand& band);

struct TrendPoint {
  std::int64_t verification_id = 0;
  UnixSeconds at = 0;
  double value = 0;
};

// `points` oldest first; `band` (optional) is shaded behind them: the latest verdict's band.
std::string trend_svg(const std::string& metric, const std::vector<TrendPoint>& points,
                      const std::optional<CheckBand>& band);

// A number as the pages print it ("0.9611", "1.2e-05"): 6 significant digits.
std::string short_number(double value);

}  // namespace reverify
