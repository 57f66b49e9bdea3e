// Statistical property of the tolerance rule (DESIGN, "Verdict" -> tolerance): when the seed runs
// and an honest rebuild come from the same distribution, a verification with m calibrated checks
// pages falsely at most alpha of the time. Seeded, pure, no clock. Prints the tables (ctest -V).
#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <random>

#include "policies/tolerance.hpp"

using namespace reverify;

namespace {

constexpr int kVerifications = 20000;
constexpr double kAlpha = 0.01;

struct NormalMetric {
  const char* name = "normal";
  double sigma = 0.002;
  double operator()(std::mt19937_64& rng) const {
    return std::normal_distribution<double>(0.96, sigma)(rng);
  }
};

// An accuracy-like skewed metric: Beta(a, b) sampled as X / (X + Y) with X ~ Gamma(a), Y ~
// Gamma(b).
struct BetaMetric {
  const char* name;
  double a, b, sigma;
  BetaMetric(const char* n, double a_, double b_)
      : name(n),
        a(a_),
        b(b_),
        sigma(std::sqrt(a_ * b_ / ((a_ + b_) * (a_ + b_) * (a_ + b_ + 1)))) {}
  double operator()(std::mt19937_64& rng) const {
    const double x = std::gamma_distribution<double>(a, 1)(rng);
    const double y = std::gamma_distribution<double>(b, 1)(rng);
    return x / (x + y);
  }
};

// Page rates of one simulation: the t band vs the naive `1 x range` band, for an honest rebuild
// and for rebuilds shifted by 4 and 8 true standard deviations on one check (common random
// numbers).
struct Rates {
  double t_honest = 0, range_honest = 0, t_4 = 0, range_4 = 0, t_8 = 0, range_8 = 0, t_custom = 0;
};

template <class Draw>
Rates simulate(const Draw& draw, int n, int m, std::uint64_t seed, double custom_shift_sigma = 0) {
  std::mt19937_64 rng(seed);
  const double t = student_t_quantile(n - 1, 1 - kAlpha / (2.0 * m));
  std::vector<double> runs(n);
  Rates r;
  for (int v = 0; v < kVerifications; ++v) {
    bool th = false, rh = false, t4 = false, r4 = false, t8 = false, r8 = false, tc = false;
    for (int check = 0; check < m; ++check) {
      double mean = 0, lo = 1e300, hi = -1e300;
      for (auto& x : runs) {
        x = draw(rng);
        mean += x / n;
        lo = std::min(lo, x);
        hi = std::max(hi, x);
      }
      const double honest = draw(rng) - mean;
      const double band = prediction_half_width(runs, t), range = hi - lo;
      const double s4 = check == 0 ? 4 * draw.sigma : 0, s8 = check == 0 ? 8 * draw.sigma : 0;
      const double sc = check == 0 ? custom_shift_sigma * draw.sigma : 0;
      th |= std::abs(honest) > band;
      rh |= std::abs(honest) > range;
      t4 |= std::abs(honest + s4) > band;
      r4 |= std::abs(honest + s4) > range;
      t8 |= std::abs(honest + s8) > band;
      r8 |= std::abs(honest + s8) > range;
      tc |= std::abs(honest + sc) > band;
    }
    r.t_honest += th, r.range_honest += rh, r.t_4 += t4, r.range_4 += r4, r.t_8 += t8,
        r.range_8 += r8;
    r.t_custom += tc;
  }
  for (double* x :
       {&r.t_honest, &r.range_honest, &r.t_4, &r.range_4, &r.t_8, &r.range_8, &r.t_custom})
    *x /= kVerifications;
  return r;
}

double binomial_slack(double p) {
  return 3 * std::sqrt(p * (1 - p) / kVerifications);
}

template <class Draw>
void table(const Draw& draw, bool assert_alpha, std::uint64_t& seed) {
  for (int n : {3, 5, 10}) {
    for (int m : {1, 12}) {
      const auto r = simulate(draw, n, m, seed++);
      std::printf("%-14s %3d %3d | %8.4f / %8.4f | %8.4f / %8.4f | %8.4f / %8.4f%s\n", draw.name, n,
                  m, r.t_honest, r.range_honest, r.t_4, r.range_4, r.t_8, r.range_8,
                  assert_alpha ? "" : "  (not asserted)");
      CAPTURE(draw.name);
      CAPTURE(n);
      CAPTURE(m);
      if (assert_alpha)
        CHECK(r.t_honest <= kAlpha + binomial_slack(kAlpha));
      CHECK(r.range_honest > kAlpha + binomial_slack(kAlpha));  // why "k x range" was rejected
      CHECK(r.t_8 >= r.t_4);
    }
  }
}

}  // namespace

TEST_CASE(
    "the t prediction band keeps the false-page rate at alpha; the naive range rule does not") {
  std::printf(
      "\n%d simulated verifications per row, alpha = %.2f per verification (Bonferroni over m "
      "checks)\n",
      kVerifications, kAlpha);
  std::printf("%-14s %3s %3s | %-19s | %-19s | %-19s\n", "metric", "n", "m", "false pages t/range",
              "detect 4σ t/range", "detect 8σ t/range");
  std::uint64_t seed = 1;
  table(NormalMetric{}, true, seed);
  // The same mean and sd as the normal metric (0.96, 0.002): skewness -0.09.
  table(BetaMetric("beta(9215,384)", 9215.04, 383.96), true, seed);
  // Heavy skew (-1.29) breaks the normal-theory interval: printed so owners know the limit
  // (at skewness -0.30, Beta(960, 40), n = 10, m = 12 pages 1.27% of the time).
  table(BetaMetric("beta(48,2)", 48, 2), false, seed);
}

TEST_CASE("the reported power is the shift caught with 80% probability") {
  const NormalMetric d;
  for (int n : {3, 5, 10}) {
    // The band's power at the true sigma (s = sigma), for one calibrated check.
    const double tol = student_t_quantile(n - 1, 1 - kAlpha / 2) * d.sigma * std::sqrt(1 + 1.0 / n);
    const auto power = band_power(n, d.sigma, kAlpha, tol);
    REQUIRE(power.shift_sigma.has_value());
    CHECK(power.shift_units == doctest::Approx(*power.shift_sigma * d.sigma));
    const double detected = simulate(d, n, 1, 5000 + n, *power.shift_sigma).t_custom;
    std::printf("n=%d: power shift %.3fσ, simulated detection %.4f\n", n, *power.shift_sigma,
                detected);
    CAPTURE(n);
    CHECK(std::abs(detected - 0.8) <= binomial_slack(0.8));
  }
}
