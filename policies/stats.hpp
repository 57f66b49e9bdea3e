#pragma once
// Distribution statistics between released (original) and rebuilt predictions. Pure; they use
// both cores (std::thread) for the sorts, nothing else.
//
// Definitions (matched against scipy/numpy by tests/policies/vectors):
// - ks: exact two-sample Kolmogorov-Smirnov statistic sup|F_a - F_b| (scipy.stats.ks_2samp).
// - wasserstein: 1-Wasserstein distance of the empirical distributions
// (scipy.stats.wasserstein_distance).
// - quantiles: numpy.quantile's default ("linear") at p1, p5, p25, p50, p75, p95, p99.
// - psi: population stability index over up to 10 bins whose inner edges are the deciles of
//   both samples pooled: the pooled values at 0-based ranks floor(j N / 10), j = 1..9, kept once
//   each and only above the pooled minimum, so every bin holds at least one pooled value (a pile
//   of equal scores, e.g. probabilities saturated at 0 or 1, is one bin instead of several empty
//   ones). A value x falls in bin #{edges <= x} (numpy searchsorted side="right"). Shares are
//   smoothed by counts, (count + 1/2) / (size + B/2) over the B bins (Jeffreys), before
//   sum((q - p) * ln(q / p)): a bin one sample left empty weighs what half a value would, however
//   small the other sample's share. Symmetric in its two arguments.
// - 2-D scores: ks, psi, wasserstein and quantiles use all scores flattened (ravel()); paired
//   statistics compare element-wise and the flip rate compares each row's argmax (first on ties).
// - paired (same shape, same eval order): max and mean absolute difference, flip rate = share of
//   rows whose decision differs (argmax for 2-D; score >= threshold for 1-D).

#include <array>
#include <cstddef>
#include <optional>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include "core/statistic.hpp"

namespace reverify::stats {

inline constexpr std::size_t kPsiBins = 10;
inline constexpr double kPsiSmoothing = 0.5;  // counts added to every bin
inline constexpr std::array<double, 7> kQuantileLevels{0.01, 0.05, 0.25, 0.50, 0.75, 0.95, 0.99};

// All of the following REQUIRE ascending, non-empty inputs.
double ks_statistic_sorted(std::span<const double> a, std::span<const double> b);
double wasserstein_sorted(std::span<const double> a, std::span<const double> b);
double quantile_sorted(std::span<const double> sorted, double p);
double psi_sorted(std::span<const double> reference, std::span<const double> observed);

struct Paired {
  double max_abs_diff = 0;
  double mean_abs_diff = 0;
  double flip_rate = 0;
};
// REQUIRES: a.size() == b.size(), cols >= 1, a.size() % cols == 0. For 2-D (two_d) argmax rows.
Paired paired_stats(std::span<const double> a, std::span<const double> b, std::size_t cols,
                    bool two_d, double threshold);

struct Comparison {
  double ks = 0;
  double psi = 0;
  double wasserstein = 0;
  std::array<double, 7> quantiles_original{};
  std::array<double, 7> quantiles_rebuilt{};
  std::optional<Paired> paired;  // only when both have the same shape
  std::size_t rows = 0;          // of the original: the flip rate moves in steps of 1 / rows
  std::size_t scores = 0;        // values of the original: KS moves in steps of about 1 / scores
  bool unit_interval = false;    // every score of both sides is in [0, 1]: distances are <= 1
  bool original_unit_interval = false;  // every score of the original is in [0, 1]
};

// The full comparison: copies and sorts both sides (one core each when threads >= 2).
// REQUIRES: both non-empty; original.size() % cols == 0.
Comparison compare(std::span<const double> original, std::span<const double> rebuilt,
                   std::size_t original_cols, std::size_t rebuilt_cols, bool two_d,
                   double threshold, unsigned threads = 2);

// The values of a Comparison that take a calibrated band: ks, psi, wasserstein and, when paired,
// max_abs_diff, mean_abs_diff, flip_rate.
std::vector<std::pair<Statistic, double>> banded_statistics(const Comparison& c);

// The largest value a banded statistic can take: 1 for ks and flip_rate; 1 for the distances
// (wasserstein, max/mean_abs_diff) when every score is in [0, 1]; absent otherwise (psi).
std::optional<double> largest_possible(Statistic statistic, const Comparison& c);

}  // namespace reverify::stats
