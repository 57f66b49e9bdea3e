#pragma once
// Tolerance bands from seed-to-seed spread (DESIGN, "Verdict" -> tolerance). Pure.
//
// Property 1: an honest rebuild (a draw from the distribution the seed runs come from) falls
// outside a band with probability at most `alpha`, the band's share of the verification's
// false-page rate (policies/tolerance_alpha.hpp). Property 2: every band states the smallest
// shift it catches with 80% probability (`power_shift`, metric units).
//
// Two-sided metric bands (primary and segment metrics), from n >= kMinSeedRuns seed runs:
// - scale `proportion` (the metric reports k examples and every seed run is a count / k): a
//   Student-t prediction interval on Anscombe's angular scale asin(sqrt((c + 3/8) / (k + 3/4))),
//   t(n-1, 1 - alpha/2) * s * sqrt(1 + 1/n) around the mean, joined with the rare-change
//   allowance: the count may move j examples from the runs' median count, where j is the
//   (1 - alpha) quantile of the negative binomial predictive of |c - median| (tolerance_math.hpp).
//   The t part models smooth spread, the allowance the discreteness (runs that all agree still
//   get a band of whole examples; a band is never 0 wide).
// - scale `unit` (every seed run in [0, 1], no k): the t interval on the angular scale asin(sqrt
// x),
//   which makes bounded, skewed metrics (accuracy near 1) near symmetric.
// - scale `real`: the t interval on the metric itself.
// The band is then widened to centre +- floor when a floor is set; a continuous metric whose
// runs all agree has no band without a floor (its spread gives no scale).
// power_shift: the shift of the metric, in the direction that needs more, at which a rebuild
// leaves the band with 80% probability: distance from the seed mean to the band edge plus
// z(0.8) predictive standard deviations (normal approximation); directions the metric cannot
// move in (the band reaches 0 or 1 of a bounded metric) are not counted.
//
// One-sided upper bounds for distances (distribution statistics between the release and each
// seed run, the steps deviation of same-seed reruns): n values, modelled as log-normal with a
// Cornish-Fisher correction for right skew: y = log(v + resolution/2),
//   upper = exp(mean(y) + (t(n-1, 1 - alpha) + g (z^2 - 1) / 6) * s' * sqrt(1 + 1/n))
//           - resolution/2,
// s' = max(sd(y), upper semi-deviation of y), z = z(1 - alpha), g = the larger of the sample
// skewness of y and 2 - 3 s' (a statistic may be chi-square shaped, skewness 2, and the log takes
// only about 3 s' of that away), clamped to [0, 2]; never below max(values). Counts (flip rate:
// flips / rows; KS: the values on the wrong side / scores) also get the rare-change allowance
// over the counts. power_shift = upper - the 20th percentile of the fitted distribution.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "core/enum_names.hpp"

namespace reverify {

inline constexpr std::size_t kMinSeedRuns = 3;
// Projections of "seed runs needed" stop here: beyond it a target counts as unreachable.
inline constexpr std::size_t kMaxProjectedRuns = 1000;

enum class MetricScale { real, unit, proportion };
template <>
struct EnumNames<MetricScale> {
  static constexpr EnumName<MetricScale> table[] = {
      {MetricScale::real, "real"},
      {MetricScale::unit, "unit"},
      {MetricScale::proportion, "proportion"},
  };
};

struct MetricBandSpec {
  double alpha = 0.01;                   // two-sided, for this check
  double floor = 0;                      // smallest half-width, metric units (tolerance.floor)
  std::optional<std::int64_t> examples;  // k: the metric is a proportion over k examples
};

struct MetricBand {
  std::size_t n = 0;
  MetricScale scale = MetricScale::real;
  std::optional<std::int64_t> examples;
  double center = 0;  // mean of the seed runs, metric units
  double lower = 0;   // accepted observed values: lower <= x <= upper
  double upper = 0;
  double alpha = 0;
  double spread = 0;         // seed-run standard deviation, metric units
  double predictive_sd = 0;  // of an honest rebuild around the centre, metric units
  bool floor_applied = false;
  bool discrete_applied = false;      // proportion: the rare-change allowance widened the band
  std::optional<double> power_shift;  // absent: no shift the metric can make is caught

  bool contains(double x) const;
  double margin(double x) const;  // distance to the nearest edge, negative outside
  // The smallest shift the metric can make that is at least `shift`: a proportion moves in whole
  // examples (a declared detect of 0.02 over 391 examples is a shift of 8 examples, 0.0205).
  double attainable(double shift) const;
};

struct MetricBandResult {
  std::optional<MetricBand> band;
  std::string no_band_reason;  // when band is absent
};

MetricBandResult metric_band(std::span<const double> runs, const MetricBandSpec& spec);

// Seed runs (in all) with which this band's power shift would reach `detect` (attainable), the
// spread as measured; absent when no number up to kMaxProjectedRuns does. REQUIRES: a band exists.
std::optional<std::size_t> metric_runs_for(std::span<const double> runs, const MetricBandSpec& spec,
                                           double detect);

struct UpperBoundSpec {
  double alpha = 0.01;    // one-sided, for this check
  double resolution = 0;  // the statistic's smallest step (flip rate: 1 / rows); 0: continuous
  bool counts = false;    // values are counts * resolution: add the rare-change allowance
  double floor = 0;       // smallest bound (tolerance.floor)
};

struct UpperBound {
  std::size_t n = 0;
  double upper = 0;
  double alpha = 0;
  double typical = 0;   // exp(mean(y)) - resolution / 2: the geometric-mean value
  double log_sd = 0;    // s' above
  double skewness = 0;  // g above
  bool max_applied = false;
  bool count_applied = false;
  bool floor_applied = false;
  std::optional<double> power_shift;

  double margin(double x) const { return upper - x; }
};

struct UpperBoundResult {
  std::optional<UpperBound> bound;
  std::string no_band_reason;
};

UpperBoundResult upper_bound(std::span<const double> values, const UpperBoundSpec& spec);

std::optional<std::size_t> upper_bound_runs_for(std::span<const double> values,
                                                const UpperBoundSpec& spec, double detect);

// The text every uncalibrated check carries.
std::string how_to_calibrate(const std::string& model_version);

}  // namespace reverify
