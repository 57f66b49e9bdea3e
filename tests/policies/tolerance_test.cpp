#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "policies/bands.hpp"

using namespace reverify;
namespace tmath = reverify::tolerance_math;

TEST_CASE("quantiles match tables (scipy)") {
  CHECK(tmath::student_t_quantile(4, 0.995) == doctest::Approx(4.604094871).epsilon(1e-9));
  CHECK(tmath::student_t_quantile(2, 0.975) == doctest::Approx(4.302652730).epsilon(1e-9));
  CHECK(tmath::normal_quantile(0.8) == doctest::Approx(0.8416212336).epsilon(1e-9));
  // scipy.stats.nbinom.isf(alpha, r, p): the smallest j with P(X > j) <= alpha.
  CHECK(tmath::negative_binomial_upper(0.5, 5.0 / 6, 0.01) == 2);
  CHECK(tmath::negative_binomial_upper(0.5, 5.0 / 6, 0.00025) == 3);
  CHECK(tmath::negative_binomial_upper(26.5, 20.0 / 21, 0.005) == 5);
  CHECK(tmath::negative_binomial_upper(10.5, 0.5, 0.001) == 29);
}

TEST_CASE("summaries: sd, upper semi-deviation, skewness") {
  const std::vector<double> symmetric{1, 2, 3, 4, 5};
  const auto s = tmath::summarize(symmetric);
  CHECK(s.mean == 3);
  CHECK(s.sd == doctest::Approx(std::sqrt(2.5)));
  CHECK(s.upper_sd == doctest::Approx(s.sd));
  CHECK(s.skewness == doctest::Approx(0).epsilon(1e-12));
  const std::vector<double> right{1, 1, 1, 1, 5};
  CHECK(tmath::summarize(right).skewness > 1);
  CHECK(tmath::summarize(right).upper_sd > tmath::summarize(right).sd);
}

TEST_CASE("real scale: the skew-aware t prediction interval around the mean") {
  // numpy: mean 10, sd 0.67082, skewness 0; scipy: t(4, 0.995) + min(2, 3 se(5)) (z^2 - 1) / 6
  // standard deviations on each side (the skewness 5 runs cannot rule out).
  const std::vector<double> runs{9.1, 10.3, 9.7, 10.9, 10.0};
  MetricBandSpec spec;
  spec.alpha = 0.01;
  const auto made = metric_band(runs, spec);
  REQUIRE(made.band.has_value());
  const auto& band = *made.band;
  CHECK(band.scale == MetricScale::real);
  CHECK_FALSE(band.lumpy);
  CHECK(band.center == doctest::Approx(10));
  CHECK(band.lower == doctest::Approx(5.3488433161).epsilon(1e-9));
  CHECK(band.upper == doctest::Approx(14.6511566839).epsilon(1e-9));
  CHECK(band.contains(14.65));
  CHECK_FALSE(band.contains(14.66));
  CHECK(band.margin(12) == doctest::Approx(14.6511566839 - 12).epsilon(1e-9));
  // Power: distance to the edge plus t(4, 0.8) predictive standard deviations (scipy).
  REQUIRE(band.power_shift.has_value());
  const double sd = 0.6708203932 * std::sqrt(1.2);
  CHECK(band.predictive_sd == doctest::Approx(sd).epsilon(1e-9));
  CHECK(*band.power_shift == doctest::Approx(5.3426216080).epsilon(1e-9));
}

TEST_CASE("skewed runs: the long side gets the tail, the short side the allowance") {
  // An error metric whose better seeds trail off: most runs near 46, a few far below.
  const std::vector<double> runs{46.0, 46.1, 45.9, 46.05, 45.95, 46.0, 45.2, 46.1, 45.6, 46.02};
  MetricBandSpec spec;
  spec.alpha = 0.01;
  const auto band = metric_band(runs, spec).band.value();
  CHECK(band.skewness < -1);
  CHECK(band.center - band.lower > 1.2 * (band.upper - band.center));
  // Symmetric runs of the same spread: the same width on both sides.
  const std::vector<double> even{9.1, 10.3, 9.7, 10.9, 10.0};
  const auto symmetric = metric_band(even, spec).band.value();
  CHECK(symmetric.center - symmetric.lower == doctest::Approx(symmetric.upper - symmetric.center));
}

TEST_CASE("a metric with a step (a mean over queries): lumpy, whole steps around the median") {
  MetricBandSpec spec;
  spec.alpha = 0.01;
  spec.step = 1.0 / 150;
  // Every seed run scored the same NDCG: still a band, of whole steps (one query may change).
  const std::vector<double> agree(20, 0.8123);
  const auto made = metric_band(agree, spec);
  REQUIRE(made.band.has_value());
  CHECK(made.band->lumpy);
  CHECK(made.band->discrete_applied);
  CHECK(made.band->contains(0.8123 - 1.0 / 150));
  CHECK(made.band->contains(0.8123 + 1.0 / 150));
  CHECK_FALSE(made.band->contains(0.8123 + 2.5 / 150));
  // Without the step, nothing gives the metric a scale: no band.
  spec.step.reset();
  CHECK(metric_band(agree, spec).cannot_judge);
  // Clumped runs: with a step the band reaches past the clumps the runs showed.
  const std::vector<double> clumped{0.8123, 0.8123, 0.8123, 0.8131, 0.8123, 0.8123,
                                    0.8117, 0.8123, 0.8123, 0.8123, 0.8131, 0.8123};
  const auto without = metric_band(clumped, spec).band.value();
  spec.step = 1.0 / 150;
  const auto with = metric_band(clumped, spec).band.value();
  CHECK(with.lower < without.lower);
  CHECK(with.upper > without.upper);
  CHECK(with.upper - 0.8123 >= 1.0 / 150 - 1e-12);
}

TEST_CASE("fractional steps: runs that moved by slivers of a step count slivers, not queries") {
  // 20 seed runs of a graded NDCG@10 over 200 queries, all within 0.0005 (a tenth of a step):
  // counted in whole steps, every run off the median is a query changed (+-4 steps); counted in
  // fractional steps, the band keeps the one step a query may change by and no more.
  std::vector<double> runs;
  for (int i = 0; i < 20; ++i)
    runs.push_back(0.8910 + 0.000025 * ((i * 7) % 20));
  MetricBandSpec spec;
  spec.alpha = 0.01;
  spec.step = 1.0 / 200;
  const auto whole = metric_band(runs, spec).band.value();
  spec.fractional_steps = true;
  const auto fractional = metric_band(runs, spec).band.value();
  CHECK(whole.upper - whole.lower >= 6.0 / 200);
  CHECK(fractional.upper - fractional.lower <= 2.5 / 200);
  CHECK(fractional.discrete_applied);
  for (double x : runs)
    CHECK(fractional.contains(x));
  CHECK(fractional.contains(0.8910 + 1.0 / 200));  // one whole query's change
  CHECK(fractional.contains(0.8910 - 1.0 / 200 + 0.0005));
  CHECK_FALSE(fractional.contains(0.8910 - 2.0 / 200));
  CHECK(*fractional.power_shift < *whole.power_shift / 2);
  // Runs that all agree: still one step either side, as in whole steps.
  const std::vector<double> agree(20, 0.8123);
  const auto same = metric_band(agree, spec).band.value();
  CHECK(same.contains(0.8123 - 1.0 / 200));
  CHECK(same.contains(0.8123 + 1.0 / 200));
}

TEST_CASE("repeats off a grid are lumpy clumps; repeats on a grid are counts") {
  MetricBandSpec spec;
  spec.alpha = 0.01;
  // 0.8117, 0.8123, 0.8131: gaps 0.0006 and 0.0008, no common grid within 1%.
  const std::vector<double> clumped{0.8123, 0.8123, 0.8131, 0.8123, 0.8117, 0.8123};
  const auto lumpy = metric_band(clumped, spec).band.value();
  CHECK(lumpy.scale == MetricScale::unit);
  CHECK(lumpy.lumpy);
  // The outermost gaps: the band reaches at least one more gap past the runs' range.
  CHECK(lumpy.lower <= 0.8117 - 0.0006 + 1e-12);
  CHECK(lumpy.upper >= 0.8131 + 0.0008 - 1e-12);
  // 0.80, 0.81, 0.83 (repeating): a grid of 0.01, made as a proportion's band.
  const std::vector<double> grid{0.81, 0.81, 0.83, 0.80, 0.81, 0.83};
  const auto counted = metric_band(grid, spec).band.value();
  CHECK(counted.scale == MetricScale::proportion);
  CHECK(counted.grain.value() == doctest::Approx(0.01));
  // No repeats: smooth, not lumpy.
  const std::vector<double> smooth{0.8123, 0.8127, 0.8131, 0.8119, 0.8117, 0.8125};
  CHECK_FALSE(metric_band(smooth, spec).band->lumpy);
}

TEST_CASE("a lumpy metric's spread is less certain: wider than the same runs smooth") {
  MetricBandSpec spec;
  spec.alpha = 0.01;
  const std::vector<double> runs{10.1, 10.4, 9.8, 10.0, 9.9, 10.2, 10.3, 9.7, 10.05, 9.95};
  const auto smooth = metric_band(runs, spec).band.value();
  spec.step = 1e-9;  // a step too small to matter: only the kurtosis and gap allowances
  const auto lumpy = metric_band(runs, spec).band.value();
  CHECK(lumpy.lumpy);
  CHECK(lumpy.upper - lumpy.lower > smooth.upper - smooth.lower);
  CHECK(*lumpy.power_shift > *smooth.power_shift);
}

TEST_CASE("unit scale: a bounded metric near 1 gets an asymmetric band inside [0, 1]") {
  // Not fractions of a small count (an AUC, say): nothing to infer a k from.
  const std::vector<double> runs{0.99103871, 0.98517309, 0.99528861, 0.98911077, 0.99340511};
  MetricBandSpec spec;
  spec.alpha = 0.01;
  const auto made = metric_band(runs, spec);
  REQUIRE(made.band.has_value());
  CHECK(made.band->scale == MetricScale::unit);
  CHECK(made.band->upper <= 1.0);
  CHECK(made.band->center - made.band->lower > made.band->upper - made.band->center);
}

TEST_CASE("counts are inferred from full-precision fractions, never from short decimals") {
  // 3 decimals may be counts over 1000 or rounded numbers: no count, the continuous model.
  const std::vector<double> rounded{0.991, 0.985, 0.995, 0.989, 0.993};
  MetricBandSpec spec;
  spec.alpha = 0.01;
  CHECK(metric_band(rounded, spec).band->scale == MetricScale::unit);
  // The same counts written as the job computed them: 991/1000 is exactly 0.991, so a count over
  // 997 it must be to be told apart.
  std::vector<double> counted;
  for (int c : {988, 982, 992, 986, 990})
    counted.push_back(c / 997.0);
  const auto made = metric_band(counted, spec);
  REQUIRE(made.band.has_value());
  CHECK(made.band->scale == MetricScale::proportion);
  CHECK(made.band->examples == 997);
  CHECK(made.band->examples_inferred);
  // A declared count wins over what the values suggest.
  spec.examples = 1994;
  CHECK(metric_band(counted, spec).band->examples == 1994);
  CHECK_FALSE(metric_band(counted, spec).band->examples_inferred);
}

TEST_CASE("proportions: counts over k, the t part on Anscombe's angle, whole examples") {
  // 391 examples, counts 376..384 (the digits example's spread).
  std::vector<double> runs;
  for (int c : {378, 379, 380, 377, 381, 379, 378, 380, 382, 379})
    runs.push_back(c / 391.0);
  MetricBandSpec spec;
  spec.alpha = 0.005;
  spec.examples = 391;
  const auto made = metric_band(runs, spec);
  REQUIRE(made.band.has_value());
  CHECK(made.band->scale == MetricScale::proportion);
  CHECK(made.band->examples == 391);
  // The stated power is a whole number of examples.
  CHECK(*made.band->power_shift * 391 ==
        doctest::Approx(std::round(*made.band->power_shift * 391)));
  // Values that are no counts over the k given but repeat on a grid of their own are counts of
  // that grid's grain (here the true 391): a proportion all the same.
  MetricBandSpec wrong_k = spec;
  wrong_k.examples = 100;
  const auto grid = metric_band(runs, wrong_k);
  CHECK(grid.band->scale == MetricScale::proportion);
  CHECK(grid.band->power_shift.has_value());
  // Not a proportion when the values are no counts over k and sit on no grid (a mean loss):
  // unit scale.
  const std::vector<double> loss = {0.4012, 0.4133, 0.3987, 0.4078, 0.4051, 0.3969, 0.4102};
  CHECK(metric_band(loss, wrong_k).band->scale == MetricScale::unit);
}

TEST_CASE("all-agreeing runs: a band of whole examples for proportions, none for continuous") {
  const std::vector<double> agree(5, 1.0);
  MetricBandSpec spec;
  spec.alpha = 0.00025;
  spec.examples = 39;
  const auto made = metric_band(agree, spec);
  REQUIRE(made.band.has_value());
  // Negative binomial (1/2, 5/6): P(X > 3) = 0.000227 <= 0.00025 < P(X > 2): 3 examples.
  CHECK(made.band->lower == doctest::Approx(36.0 / 39));
  CHECK(made.band->upper == 1.0);
  CHECK(made.band->power_shift.has_value());

  MetricBandSpec continuous;
  continuous.alpha = 0.01;
  const auto none = metric_band(agree, continuous);
  CHECK_FALSE(none.band.has_value());
  CHECK(none.no_band_reason.find("all 5 seed runs scored 1") != std::string::npos);
  continuous.floor = 0.01;
  const auto floored = metric_band(agree, continuous);
  REQUIRE(floored.band.has_value());
  CHECK(floored.band->lower == doctest::Approx(0.99));
  CHECK(floored.band->floor_applied);
}

TEST_CASE("fewer than 3 seed runs give no band") {
  const std::vector<double> two{0.5, 0.6};
  CHECK_FALSE(metric_band(two, {}).band.has_value());
  CHECK_FALSE(upper_bound(two, {}).bound.has_value());
  CHECK(metric_band(two, {}).no_band_reason == "2 seed run(s) known, 3 needed");
}

TEST_CASE("a smaller alpha gives a wider band") {
  const std::vector<double> runs{1, 2, 3, 4, 5};
  MetricBandSpec wide, narrow;
  wide.alpha = 0.01 / 12;
  narrow.alpha = 0.01;
  CHECK(metric_band(runs, wide).band->upper > metric_band(runs, narrow).band->upper);
}

TEST_CASE("seed runs needed for a declared shift: more runs narrow the band, to a limit") {
  std::vector<double> runs{9.1, 10.3, 9.7, 10.9, 10.0};
  MetricBandSpec spec;
  spec.alpha = 0.005;
  const double shift = *metric_band(runs, spec).band->power_shift;
  CHECK(metric_runs_for(runs, spec, shift) == 5u);
  const auto needed = metric_runs_for(runs, spec, shift * 0.7);
  REQUIRE(needed.has_value());
  CHECK(*needed > 5u);
  // (z(1 - alpha/2) + z(0.8)) * sd is the limit with infinitely many runs: below it, none do.
  CHECK_FALSE(metric_runs_for(runs, spec, 0.6708 * 3.6).has_value());
}

TEST_CASE("upper bound: log-normal t bound over the values, never below their maximum") {
  const std::vector<double> values{0.010, 0.012, 0.011, 0.013, 0.009, 0.010};
  UpperBoundSpec spec;
  spec.alpha = 0.01;
  const auto made = upper_bound(values, spec);
  REQUIRE(made.bound.has_value());
  std::vector<double> logs;
  for (double v : values)
    logs.push_back(std::log(v));
  const auto s = tmath::summarize(logs);
  const double sd = std::max(s.sd, s.upper_sd);
  // Skewness: the larger of the sample's and 2 - 3 sd (what the log cannot remove), at most 2.
  const double g = std::clamp(std::max(s.skewness, 2 - 3 * sd), 0.0, 2.0);
  const double q =
      tmath::student_t_quantile(5, 0.99) + g * (std::pow(tmath::normal_quantile(0.99), 2) - 1) / 6;
  CHECK(made.bound->upper ==
        doctest::Approx(std::exp(s.mean + q * sd * std::sqrt(7.0 / 6))).epsilon(1e-9));
  CHECK(made.bound->upper > 0.013);
  const std::vector<double> outlier{0.01, 0.01, 0.01, 0.01, 0.01, 0.01, 0.01, 0.5};
  CHECK(upper_bound(outlier, spec).bound->upper >= 0.5);
}

TEST_CASE("upper bound for counts: zero flips in every run still allow some") {
  const std::vector<double> none(5, 0.0);
  UpperBoundSpec spec;
  spec.alpha = 0.001;
  spec.resolution = 1.0 / 400;
  spec.counts = true;
  const auto made = upper_bound(none, spec);
  REQUIRE(made.bound.has_value());
  CHECK(made.bound->upper >= 1.0 / 400);
  CHECK(made.bound->count_applied);
  // A continuous statistic that is 0 for every run has no spread to bound.
  UpperBoundSpec continuous;
  const auto zero = upper_bound(none, continuous);
  CHECK_FALSE(zero.bound.has_value());
  CHECK(zero.no_band_reason.find("0 for all 5 seed runs") != std::string::npos);
}

TEST_CASE("alpha split: shares over the families present, Bonferroni within") {
  AlphaShares shares;  // 0.5 primary, 0.25 segments, 0.25 distribution, 0.25 steps
  const AlphaSplit full(
      0.01, shares,
      {{CheckFamily::primary, 1}, {CheckFamily::segments, 10}, {CheckFamily::distribution, 6}});
  CHECK(full.per_check(CheckFamily::primary) == doctest::Approx(0.005));
  CHECK(full.per_check(CheckFamily::segments) == doctest::Approx(0.00025));
  CHECK(full.per_check(CheckFamily::distribution) == doctest::Approx(0.0025 / 6));
  CHECK(full.per_check(CheckFamily::steps) == 0);
  // No segments: their share goes to the others, the whole rate is still spent.
  const AlphaSplit no_segments(
      0.01, shares,
      {{CheckFamily::primary, 1}, {CheckFamily::segments, 0}, {CheckFamily::distribution, 6}});
  CHECK(no_segments.family(CheckFamily::primary) == doctest::Approx(0.01 * 0.5 / 0.75));
  CHECK(no_segments.family(CheckFamily::primary) + no_segments.family(CheckFamily::distribution) ==
        doctest::Approx(0.01));
  const AlphaSplit steps_mode(0.01, shares, {{CheckFamily::steps, 1}});
  CHECK(steps_mode.per_check(CheckFamily::steps) == doctest::Approx(0.01));
}

TEST_CASE("how to calibrate names the command") {
  CHECK(how_to_calibrate("m@1", "").find("`reverify calibrate m@1 --seeds 10`") !=
        std::string::npos);
  CHECK(how_to_calibrate("m@1", "--config /etc/r.yaml")
            .find("`reverify calibrate m@1 --seeds 10 --config /etc/r.yaml`") != std::string::npos);
}
