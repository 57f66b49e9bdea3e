#include "policies/stats.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <thread>
#include <tuple>
#include <utility>

#include "policies/radix_sort.hpp"

namespace reverify::stats {

namespace {

struct MergeStatistics {
  std::uint64_t widest = 0;  // max |i*nb - j*na|
  double area = 0;           // the integral of |i*nb - j*na| over x
};

// One merge over both sorted samples yields both KS and W1: after all values <= x are consumed
// (i from a, j from b), |F_a - F_b| = |i*nb - j*na| / (na*nb), exact in integers up to 2^64; KS
// is its maximum and W1 its integral over the gaps between consecutive distinct values.
// A cursor merges a[i, i_end) with b[j, j_end), every value below those of the ranges after
// them; i and j count from the samples' starts, so ranges merged apart combine by max and sum.
struct MergeCursor {
  std::size_t i = 0, i_end = 0, j = 0, j_end = 0;
  MergeStatistics stats;

  // While both ranges hold a value after the next, one value at a time without branches (which
  // sample the next value comes from is a coin toss the branch predictor loses): the statistic
  // counts where the following value is larger, so a run of ties counts once, after its last
  // value (in between, next - x is 0 and the gap is masked).
  bool can_step() const { return i + 1 < i_end && j + 1 < j_end; }
  void step(std::span<const double> a, std::span<const double> b) {
    const double from_a = a[i], from_b = b[j];
    const bool take_a = from_a <= from_b;
    const double x = take_a ? from_a : from_b;
    i += take_a;
    j += !take_a;
    const double next = std::min(a[i], b[j]);
    const std::uint64_t l = std::uint64_t{i} * b.size(), r = std::uint64_t{j} * a.size();
    const std::uint64_t gap = l > r ? l - r : r - l;
    stats.widest = std::max(stats.widest, next > x ? gap : 0);
    stats.area += static_cast<double>(gap) * (next - x);
  }

  // The rest of the ranges, a distinct value at a time.
  MergeStatistics finish(std::span<const double> a, std::span<const double> b) {
    const std::size_t na = a.size(), nb = b.size();
    while (can_step())
      step(a, b);
    if (i == i_end && j == j_end)
      return stats;
    double x = (i == i_end) ? b[j] : (j == j_end) ? a[i] : std::min(a[i], b[j]);
    for (;;) {
      while (i < i_end && a[i] == x)
        ++i;
      while (j < j_end && b[j] == x)
        ++j;
      const std::uint64_t l = std::uint64_t{i} * nb, r = std::uint64_t{j} * na;
      const std::uint64_t gap = l > r ? l - r : r - l;
      stats.widest = std::max(stats.widest, gap);
      if (i == na && j == nb)
        break;
      const double next = (i == na) ? b[j] : (j == nb) ? a[i] : std::min(a[i], b[j]);
      stats.area += static_cast<double>(gap) * (next - x);
      if (i == i_end && j == j_end)
        break;  // `next` opens the following range
      x = next;
    }
    return stats;
  }
};

// Two merges stepped in turn: each step waits on its own last load, so two chains keep the core
// busy where one leaves it waiting.
std::pair<MergeStatistics, MergeStatistics> merge_two(std::span<const double> a,
                                                      std::span<const double> b, MergeCursor first,
                                                      MergeCursor second) {
  while (first.can_step() && second.can_step()) {
    first.step(a, b);
    second.step(a, b);
  }
  return {first.finish(a, b), second.finish(a, b)};
}

// KS and W1 of two sorted samples, merged as four ranges cut at a's quartiles (two at a time per
// thread; with 2 threads or more, two threads). The cut does not depend on `threads`, so neither
// do the results, to the last bit.
std::pair<double, double> ks_and_wasserstein(std::span<const double> a, std::span<const double> b,
                                             unsigned threads) {
  constexpr std::size_t kRanges = 4;
  const std::size_t na = a.size(), nb = b.size();
  std::array<MergeCursor, kRanges> cursors;
  std::size_t i = 0, j = 0;
  for (std::size_t r = 0; r < kRanges; ++r) {
    std::size_t i_end = na, j_end = nb;
    if (r + 1 < kRanges) {
      const double split = a[(r + 1) * na / kRanges];
      i_end = static_cast<std::size_t>(std::lower_bound(a.begin() + i, a.end(), split) - a.begin());
      j_end = static_cast<std::size_t>(std::lower_bound(b.begin() + j, b.end(), split) - b.begin());
    }
    cursors[r] = MergeCursor{i, i_end, j, j_end, {}};
    i = i_end;
    j = j_end;
  }
  std::pair<MergeStatistics, MergeStatistics> low, high;
  std::thread helper;
  if (threads >= 2)
    helper = std::thread([&] { high = merge_two(a, b, cursors[2], cursors[3]); });
  low = merge_two(a, b, cursors[0], cursors[1]);
  if (helper.joinable())
    helper.join();
  else
    high = merge_two(a, b, cursors[2], cursors[3]);
  MergeStatistics all;
  for (const MergeStatistics& part : {low.first, low.second, high.first, high.second}) {
    all.widest = std::max(all.widest, part.widest);
    all.area += part.area;
  }
  const double scale = static_cast<double>(na) * static_cast<double>(nb);
  return {static_cast<double>(all.widest) / scale, all.area / scale};
}

}  // namespace

double ks_statistic_sorted(std::span<const double> a, std::span<const double> b) {
  return ks_and_wasserstein(a, b, 1).first;
}

double wasserstein_sorted(std::span<const double> a, std::span<const double> b) {
  return ks_and_wasserstein(a, b, 1).second;
}

double quantile_sorted(std::span<const double> sorted, double q) {
  // numpy.quantile(method="linear"), including its virtual index and _lerp formulas, so results
  // agree to the last bits.
  const double n = static_cast<double>(sorted.size());
  const double virtual_index = n * q + (1 + q * (1 - 1 - 1)) - 1;
  const double below = std::floor(virtual_index);
  const double gamma = virtual_index - below;
  const auto last = static_cast<double>(sorted.size() - 1);
  const auto lo = static_cast<std::size_t>(std::clamp(below, 0.0, last));
  const auto hi = static_cast<std::size_t>(std::clamp(below + 1, 0.0, last));
  const double a = sorted[lo], b = sorted[hi];
  const double diff = b - a;
  return gamma >= 0.5 ? b - diff * (1 - gamma) : a + diff * gamma;
}

namespace {

// The k-th smallest (0-based) value of two sorted samples together.
double kth_of_both(std::span<const double> a, std::span<const double> b, std::size_t k) {
  // Take i values from a and k + 1 - i from b: the largest i with a[i-1] <= b[k-i] ... found by
  // binary search on i in [max(0, k + 1 - |b|), min(k + 1, |a|)].
  std::size_t lo = k + 1 > b.size() ? k + 1 - b.size() : 0;
  std::size_t hi = std::min(k + 1, a.size());
  while (lo < hi) {
    const std::size_t i = lo + (hi - lo) / 2;  // i values from a, k + 1 - i from b
    if (a[i] < b[k - i])
      lo = i + 1;
    else
      hi = i;
  }
  const std::size_t i = lo, j = k + 1 - i;
  const double from_a = i > 0 ? a[i - 1] : -std::numeric_limits<double>::infinity();
  const double from_b = j > 0 ? b[j - 1] : -std::numeric_limits<double>::infinity();
  return std::max(from_a, from_b);
}

}  // namespace

double psi_sorted(std::span<const double> reference, std::span<const double> observed) {
  const std::size_t total = reference.size() + observed.size();
  const double smallest = std::min(reference.front(), observed.front());
  std::vector<double> edges;
  for (std::size_t j = 1; j < kPsiBins; ++j) {
    const double edge = kth_of_both(reference, observed, j * total / kPsiBins);
    if (edge > smallest && (edges.empty() || edge > edges.back()))
      edges.push_back(edge);
  }
  const std::size_t bins = edges.size() + 1;
  // Bin k holds x with #{edges <= x} == k, i.e. edges[k-1] <= x < edges[k].
  auto shares = [&](std::span<const double> xs) {
    std::vector<double> out(bins);
    const double denominator =
        static_cast<double>(xs.size()) + kPsiSmoothing * static_cast<double>(bins);
    std::size_t previous = 0;
    for (std::size_t k = 0; k < bins; ++k) {
      const std::size_t upto =
          k + 1 < bins ? static_cast<std::size_t>(std::lower_bound(xs.begin(), xs.end(), edges[k]) -
                                                  xs.begin())
                       : xs.size();
      out[k] = (static_cast<double>(upto - previous) + kPsiSmoothing) / denominator;
      previous = upto;
    }
    return out;
  };
  const auto p = shares(reference), q = shares(observed);
  double psi = 0;
  for (std::size_t k = 0; k < bins; ++k)
    psi += (q[k] - p[k]) * std::log(q[k] / p[k]);
  return psi;
}

Paired paired_stats(std::span<const double> a, std::span<const double> b, std::size_t cols,
                    bool two_d, double threshold) {
  Paired out;
  double sum = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const double d = std::abs(a[i] - b[i]);
    out.max_abs_diff = std::max(out.max_abs_diff, d);
    sum += d;
  }
  out.mean_abs_diff = a.empty() ? 0 : sum / static_cast<double>(a.size());
  const std::size_t rows = a.size() / cols;
  std::size_t flips = 0;
  for (std::size_t r = 0; r < rows; ++r) {
    const auto ra = a.subspan(r * cols, cols), rb = b.subspan(r * cols, cols);
    if (two_d) {
      flips += (std::max_element(ra.begin(), ra.end()) - ra.begin()) !=
               (std::max_element(rb.begin(), rb.end()) - rb.begin());
    } else {
      flips += (ra[0] >= threshold) != (rb[0] >= threshold);
    }
  }
  out.flip_rate = rows == 0 ? 0 : static_cast<double>(flips) / static_cast<double>(rows);
  return out;
}

Comparison compare(std::span<const double> original, std::span<const double> rebuilt,
                   std::size_t original_cols, std::size_t rebuilt_cols, bool two_d,
                   double threshold, unsigned threads) {
  Comparison c;
  // The sorts read the inputs once and write sorted copies on 2 MiB pages (no copy pass, few
  // faults). With two threads or more, one sorts the original while this one computes the paired
  // statistics and sorts the rebuild: the two sorts dominate and are independent.
  const SortBuffer original_buffer = allocate_sort_buffer(original.size());
  const SortBuffer rebuilt_buffer = allocate_sort_buffer(rebuilt.size());
  const std::span<double> sorted_original(original_buffer.get(), original.size());
  const std::span<double> sorted_rebuilt(rebuilt_buffer.get(), rebuilt.size());
  const unsigned per_sort = std::max(1u, threads / 2);
  std::thread helper;
  if (threads >= 2)
    helper = std::thread([&] { radix_sort(original, sorted_original, per_sort); });
  if (original.size() == rebuilt.size() && original_cols == rebuilt_cols)
    c.paired = paired_stats(original, rebuilt, original_cols, two_d, threshold);
  radix_sort(rebuilt, sorted_rebuilt, per_sort);
  if (helper.joinable())
    helper.join();
  else
    radix_sort(original, sorted_original, 1);
  std::tie(c.ks, c.wasserstein) = ks_and_wasserstein(sorted_original, sorted_rebuilt, threads);
  c.psi = psi_sorted(sorted_original, sorted_rebuilt);
  c.rows = original.size() / original_cols;
  c.scores = original.size();
  c.original_unit_interval = sorted_original.front() >= 0 && sorted_original.back() <= 1;
  c.unit_interval =
      c.original_unit_interval && sorted_rebuilt.front() >= 0 && sorted_rebuilt.back() <= 1;
  for (std::size_t k = 0; k < kQuantileLevels.size(); ++k) {
    c.quantiles_original[k] = quantile_sorted(sorted_original, kQuantileLevels[k]);
    c.quantiles_rebuilt[k] = quantile_sorted(sorted_rebuilt, kQuantileLevels[k]);
  }
  return c;
}

std::vector<std::pair<Statistic, double>> banded_statistics(const Comparison& c) {
  std::vector<std::pair<Statistic, double>> out{
      {Statistic::ks, c.ks}, {Statistic::psi, c.psi}, {Statistic::wasserstein, c.wasserstein}};
  if (c.paired) {
    out.emplace_back(Statistic::max_abs_diff, c.paired->max_abs_diff);
    out.emplace_back(Statistic::mean_abs_diff, c.paired->mean_abs_diff);
    out.emplace_back(Statistic::flip_rate, c.paired->flip_rate);
  }
  return out;
}

std::optional<double> largest_possible(Statistic statistic, const Comparison& c) {
  switch (statistic) {
    case Statistic::ks:
    case Statistic::flip_rate:
      return 1.0;
    case Statistic::wasserstein:
    case Statistic::max_abs_diff:
    case Statistic::mean_abs_diff:
      return c.unit_interval ? std::optional(1.0) : std::nullopt;
    case Statistic::psi:
      return std::nullopt;
  }
  return std::nullopt;
}

}  // namespace reverify::stats
