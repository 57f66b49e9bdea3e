#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>

#include "policies/radix_sort.hpp"
#include "policies/stats.hpp"

using namespace reverify;

TEST_CASE("radix sort orders doubles like std::sort, including negatives, zeros and extremes") {
  std::mt19937_64 rng(7);
  std::normal_distribution<double> normal(0, 1e3);
  for (std::size_t n : {0u, 1u, 2u, 100u, 5000u, 100000u}) {
    std::vector<double> v(n);
    for (auto& x : v)
      x = normal(rng);
    if (n > 10) {
      v[0] = -0.0, v[1] = 0.0, v[2] = std::numeric_limits<double>::max(),
      v[3] = -std::numeric_limits<double>::max();
      v[4] = std::numeric_limits<double>::denorm_min(),
      v[5] = -std::numeric_limits<double>::infinity();
    }
    for (unsigned threads : {1u, 2u, 3u}) {
      auto expected = v, got = v;
      std::sort(expected.begin(), expected.end());
      stats::radix_sort(got, threads);
      CHECK(std::equal(got.begin(), got.end(), expected.begin(), expected.end()));
      if (n > 10) {
        const auto zero = std::find(got.begin(), got.end(), 0.0);
        CHECK(std::signbit(*zero));  // -0.0 sorts before +0.0
      }
    }
  }
}

TEST_CASE("radix sort into a second buffer: the same order, the input left as it was") {
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> unit(0, 1);
  // Under 4096, up to one cache-sized leaf (16384), above it (the split through memory), and all
  // equal (no differing bit).
  for (std::size_t n : {1u, 3000u, 16384u, 16385u, 300000u}) {
    std::vector<double> in(n);
    for (auto& x : in)
      x = unit(rng);
    for (const bool constant : {false, true}) {
      if (constant)
        std::fill(in.begin(), in.end(), 0.25);
      const auto before = in;
      auto expected = in;
      std::sort(expected.begin(), expected.end());
      for (unsigned threads : {1u, 2u}) {
        CAPTURE(n);
        CAPTURE(constant);
        const auto buffer = stats::allocate_sort_buffer(n);
        stats::radix_sort(std::span<const double>(in), std::span<double>(buffer.get(), n), threads);
        CHECK(std::equal(buffer.get(), buffer.get() + n, expected.begin(), expected.end()));
        CHECK(in == before);
      }
    }
  }
}

TEST_CASE("radix sort of many exact ties packed a few ulps apart, among values spread wide") {
  // Most values within ~1000 ulps of 0.7, each repeated: a leaf whose keys differ only in their
  // lowest bits, with runs of equal keys (this once recursed without end), and with outliers
  // above them that make its 22 sorting bits useless (insertion then gives way to std::sort).
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> unit(0, 1);
  for (std::size_t n : {20u, 5000u, 16384u, 200000u}) {
    std::vector<double> v(n);
    for (auto& x : v)
      x = unit(rng) < 0.9 ? 0.7 + static_cast<double>(rng() % 1000) * 1e-16 : unit(rng);
    auto expected = v;
    std::sort(expected.begin(), expected.end());
    CAPTURE(n);
    const auto buffer = stats::allocate_sort_buffer(n);
    stats::radix_sort(std::span<const double>(v), std::span<double>(buffer.get(), n), 1);
    CHECK(std::equal(buffer.get(), buffer.get() + n, expected.begin(), expected.end()));
    stats::radix_sort(v, 2);
    CHECK(v == expected);
  }
}

TEST_CASE("radix sort skips constant digits and still sorts values sharing high bits") {
  std::vector<double> v(50000);
  for (std::size_t i = 0; i < v.size(); ++i)
    v[i] = 0.5 + static_cast<double>((i * 7919) % v.size()) * 1e-9;
  auto expected = v;
  std::sort(expected.begin(), expected.end());
  stats::radix_sort(v, 2);
  CHECK(v == expected);
}

TEST_CASE("KS and Wasserstein of simple cases") {
  const std::vector<double> a{1, 2, 3, 4}, b{1, 2, 3, 4}, c{5, 6, 7, 8};
  CHECK(stats::ks_statistic_sorted(a, b) == 0);
  CHECK(stats::wasserstein_sorted(a, b) == 0);
  CHECK(stats::ks_statistic_sorted(a, c) == 1);
  CHECK(stats::wasserstein_sorted(a, c) == doctest::Approx(4));
  const std::vector<double> one{0.3}, two{0.7};
  CHECK(stats::ks_statistic_sorted(one, two) == 1);
  CHECK(stats::wasserstein_sorted(one, two) == doctest::Approx(0.4));
}

TEST_CASE("quantiles follow numpy's linear interpolation") {
  const std::vector<double> x{1, 2, 3, 4, 5};
  CHECK(stats::quantile_sorted(x, 0.5) == 3);
  CHECK(stats::quantile_sorted(x, 0.25) == 2);
  CHECK(stats::quantile_sorted(x, 0.1) == doctest::Approx(1.4));
  CHECK(stats::quantile_sorted(x, 1.0) == 5);
  const std::vector<double> single{42};
  CHECK(stats::quantile_sorted(single, 0.99) == 42);
}

TEST_CASE("PSI is 0 for identical samples and finite when one side leaves bins empty") {
  std::vector<double> x(1000);
  for (std::size_t i = 0; i < x.size(); ++i)
    x[i] = static_cast<double>(i);
  CHECK(stats::psi_sorted(x, x) == doctest::Approx(0).epsilon(1e-15));
  std::vector<double> shifted(1000, 5000.0);  // everything lands in the top bin
  const double psi = stats::psi_sorted(x, shifted);
  CHECK(std::isfinite(psi));
  // Pooled deciles 200, 400, 600, 800, 5000 (x4, kept once): 6 bins; x fills the first five with
  // 200 each, `shifted` the last with 1000; shares (count + 1/2) / (1000 + 6/2).
  const double p = 200.5 / 1003, q = 0.5 / 1003, top = 1000.5 / 1003;
  const double expected = 5 * (q - p) * std::log(q / p) + (top - q) * std::log(top / q);
  CHECK(psi == doctest::Approx(expected).epsilon(1e-12));
  CHECK(stats::psi_sorted(shifted, x) == doctest::Approx(psi).epsilon(1e-12));  // symmetric
}

TEST_CASE("PSI: scores piled at one value make one bin, none empty by construction") {
  // 60% of both samples saturated at exactly 1.0 (float32 softmax maxima), the rest spread.
  std::vector<double> a, b;
  for (int i = 0; i < 400; ++i) {
    a.push_back(i < 240 ? 1.0 : 0.5 + 0.001 * i);
    b.push_back(i < 240 ? 1.0 : 0.5 + 0.001 * i + 0.0005);
  }
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  // Reference deciles would repeat 1.0 six times (five empty bins, each floored before): pooled
  // edges keep it once, so the pile is one bin and the spread part is split by the rest.
  const double psi = stats::psi_sorted(a, b);
  CHECK(psi < 0.01);
  CHECK(psi >= 0);
}

TEST_CASE("paired statistics: argmax flips for 2-D, threshold flips for 1-D") {
  const std::vector<double> a{0.9, 0.1, 0.2, 0.8}, b{0.4, 0.6, 0.2, 0.8};
  const auto two_d = stats::paired_stats(a, b, 2, true, 0.5);
  CHECK(two_d.flip_rate == 0.5);
  CHECK(two_d.max_abs_diff == doctest::Approx(0.5));
  CHECK(two_d.mean_abs_diff == doctest::Approx(0.25));
  const std::vector<double> s{0.49, 0.5, 0.7}, t{0.5, 0.5, 0.2};
  const auto one_d = stats::paired_stats(s, t, 1, false, 0.5);
  CHECK(one_d.flip_rate == doctest::Approx(2.0 / 3));
}

TEST_CASE("compare: different shapes give no paired statistics") {
  const std::vector<double> a{0.1, 0.2, 0.3}, b{0.1, 0.2};
  const auto c = stats::compare(a, b, 1, 1, false, 0.5);
  CHECK_FALSE(c.paired.has_value());
  CHECK(stats::banded_statistics(c).size() == 3);
  const auto same = stats::compare(a, a, 1, 1, false, 0.5);
  REQUIRE(same.paired.has_value());
  CHECK(stats::banded_statistics(same).size() == 6);
  CHECK(same.ks == 0);
}

// KS and W1 by their definitions, over the pooled distinct values: the reference for the merge.
std::pair<double, double> ks_and_w1_by_definition(std::vector<double> a, std::vector<double> b) {
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  std::vector<double> pooled(a);
  pooled.insert(pooled.end(), b.begin(), b.end());
  std::sort(pooled.begin(), pooled.end());
  pooled.erase(std::unique(pooled.begin(), pooled.end()), pooled.end());
  const auto cdf = [](const std::vector<double>& xs, double x) {
    return static_cast<double>(std::upper_bound(xs.begin(), xs.end(), x) - xs.begin()) /
           static_cast<double>(xs.size());
  };
  double ks = 0, w1 = 0;
  for (std::size_t k = 0; k < pooled.size(); ++k) {
    const double gap = std::abs(cdf(a, pooled[k]) - cdf(b, pooled[k]));
    ks = std::max(ks, gap);
    if (k + 1 < pooled.size())
      w1 += gap * (pooled[k + 1] - pooled[k]);
  }
  return {ks, w1};
}

TEST_CASE(
    "compare: the merge in four ranges cut at a's quartiles, ties across the cuts included, "
    "gives the definitions' KS and W1, the same to the last bit on 1 thread or 2") {
  std::mt19937_64 rng(7);
  std::uniform_int_distribution<int> few(0, 9);  // heavy ties, the cut values repeated
  std::uniform_real_distribution<double> unit(0, 1);
  for (const bool ties : {true, false}) {
    for (std::size_t na : {1u, 2u, 3u, 4u, 5u, 10u, 1001u}) {
      for (std::size_t nb : {1u, 7u, 500u}) {
        std::vector<double> a(na), b(nb);
        for (auto& v : a)
          v = ties ? few(rng) * 0.5 : unit(rng);
        for (auto& v : b)
          v = ties ? few(rng) * 0.5 + 0.25 * (nb % 2) : unit(rng);
        CAPTURE(ties);
        CAPTURE(na);
        CAPTURE(nb);
        const auto one = stats::compare(a, b, 1, 1, false, 0.5, 1);
        const auto two = stats::compare(a, b, 1, 1, false, 0.5, 2);
        CHECK(two.ks == one.ks);
        CHECK(two.wasserstein == one.wasserstein);
        const auto [ks, w1] = ks_and_w1_by_definition(a, b);
        CHECK(one.ks == doctest::Approx(ks).epsilon(1e-15));
        CHECK(one.wasserstein == doctest::Approx(w1).epsilon(1e-12));
      }
    }
  }
}

TEST_CASE("the largest value each banded statistic can take") {
  const std::vector<double> probabilities{0.1, 0.9, 0.4, 0.6};
  auto c = stats::compare(probabilities, probabilities, 1, 1, false, 0.5, 1);
  CHECK(c.unit_interval);
  for (auto statistic : {Statistic::ks, Statistic::flip_rate, Statistic::wasserstein,
                         Statistic::max_abs_diff, Statistic::mean_abs_diff})
    CHECK(stats::largest_possible(statistic, c) == 1.0);
  CHECK_FALSE(stats::largest_possible(Statistic::psi, c).has_value());
  const std::vector<double> logits{-2.0, 3.0, 0.5, 0.7};
  c = stats::compare(probabilities, logits, 1, 1, false, 0.5, 1);
  CHECK_FALSE(c.unit_interval);
  CHECK(stats::largest_possible(Statistic::ks, c) == 1.0);
  CHECK(stats::largest_possible(Statistic::flip_rate, c) == 1.0);
  CHECK_FALSE(stats::largest_possible(Statistic::wasserstein, c).has_value());
  CHECK_FALSE(stats::largest_possible(Statistic::max_abs_diff, c).has_value());
}
