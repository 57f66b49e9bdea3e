#pragma once
// Tolerance bands from seed-to-seed spread (DESIGN, "Verdict" -> tolerance). Pure.
//
// Two-sided band for a metric (primary, segment): a Student-t prediction interval around the mean
// of n seed runs, tol = max(t(n-1, 1 - alpha/2) * s * sqrt(1 + 1/n), floor), where alpha is the
// per-check rate (the policy's false-page rate split over the calibrated checks, Bonferroni).
// One-sided upper bound for a distance (distribution statistics, steps deviation) over k pair
// values: max(mean + t(k-1, 1 - alpha) * s * sqrt(1 + 1/k), max(values)).
// Fewer than kMinSeedRuns values -> no band (the check is uncalibrated).

#include <cstddef>
#include <optional>
#include <span>
#include <string>

#include "core/manifest.hpp"

namespace reverify {

inline constexpr std::size_t kMinSeedRuns = 3;

// The smallest shift caught with 80% probability (DESIGN: "every band reports its power").
struct Power {
  std::optional<double> shift_sigma;  // in seed-run standard deviations; absent when s == 0
  double shift_units = 0;             // in metric units
};

struct Band {
  std::size_t n = 0;  // seed runs (or pair values) it was derived from
  double mean = 0;    // centre: mean of the seed runs (upper bounds: mean of pair values)
  double sd = 0;      // sample standard deviation (n - 1)
  double alpha = 0;   // per-check false-alarm rate used
  double t_quantile = 0;
  double tolerance = 0;        // two-sided: half-width; one-sided: the upper bound itself
  bool floor_applied = false;  // two-sided: the floor was wider than the t band
  bool max_applied = false;    // one-sided: max(values) was above the t bound
  Power power;                 // two-sided bands only (one-sided: shift_units = tolerance - mean)
};

double student_t_quantile(double degrees_of_freedom, double p);

// t * s * sqrt(1 + 1/n) for the runs, before the floor: the band formula without the quantile
// look-up and power, for callers that evaluate many bands at one t (simulations).
double prediction_half_width(std::span<const double> runs, double t_quantile);

// Two-sided band; std::nullopt when runs.size() < kMinSeedRuns. REQUIRES: 0 < alpha < 1, floor >=
// 0.
std::optional<Band> metric_band(std::span<const double> runs, double alpha, double floor = 0);

// One-sided upper bound over pair values; std::nullopt when fewer than kMinSeedRuns values.
std::optional<Band> upper_bound_band(std::span<const double> pair_values, double alpha);

// The power of a two-sided t prediction band (noncentral t; normal approximation when the floor
// binds): smallest shift detected with probability `probability`.
Power band_power(std::size_t n, double sd, double alpha, double tolerance,
                 double probability = 0.8);

// The text every uncalibrated check carries.
std::string how_to_calibrate(const std::string& model_version);

}  // namespace reverify
