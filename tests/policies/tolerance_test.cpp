#include <doctest/doctest.h>

#include <cmath>

#include "policies/tolerance.hpp"

using namespace reverify;

TEST_CASE("student t quantiles match tables") {
  CHECK(student_t_quantile(4, 0.995) == doctest::Approx(4.604094871).epsilon(1e-9));
  CHECK(student_t_quantile(2, 0.975) == doctest::Approx(4.302652730).epsilon(1e-9));
  CHECK(student_t_quantile(9, 0.95) == doctest::Approx(1.833112933).epsilon(1e-9));
}

TEST_CASE("metric band: t * s * sqrt(1 + 1/n) around the mean, with the floor") {
  const std::vector<double> runs{0.9605, 0.9622, 0.9611, 0.9598, 0.9617};
  const auto band = metric_band(runs, 0.01);
  REQUIRE(band.has_value());
  CHECK(band->n == 5);
  CHECK(band->mean == doctest::Approx(0.96106).epsilon(1e-12));
  // s = numpy.std(runs, ddof=1)
  CHECK(band->sd == doctest::Approx(0.0009502631215).epsilon(1e-9));
  CHECK(band->tolerance ==
        doctest::Approx(4.604094871 * 0.0009502631215 * std::sqrt(1.2)).epsilon(1e-8));
  CHECK_FALSE(band->floor_applied);
  REQUIRE(band->power.shift_sigma.has_value());
  CHECK(*band->power.shift_sigma > 0);
  CHECK(band->power.shift_units == doctest::Approx(*band->power.shift_sigma * band->sd));

  const auto floored = metric_band(runs, 0.01, 0.01);
  REQUIRE(floored.has_value());
  CHECK(floored->tolerance == 0.01);
  CHECK(floored->floor_applied);
  CHECK(floored->power.shift_units > 0.01);  // beyond the floor, some more for 80%
}

TEST_CASE("fewer than 3 seed runs give no band") {
  const std::vector<double> two{0.5, 0.6};
  CHECK_FALSE(metric_band(two, 0.01).has_value());
  CHECK_FALSE(upper_bound_band(two, 0.01).has_value());
}

TEST_CASE("Bonferroni: more checks -> wider band") {
  const std::vector<double> runs{1, 2, 3, 4, 5};
  CHECK(metric_band(runs, 0.01 / 12)->tolerance > metric_band(runs, 0.01)->tolerance);
}

TEST_CASE("zero spread: tolerance is the floor, power has no sigma") {
  const std::vector<double> runs{0.5, 0.5, 0.5};
  const auto band = metric_band(runs, 0.01);
  REQUIRE(band.has_value());
  CHECK(band->tolerance == 0);
  CHECK_FALSE(band->power.shift_sigma.has_value());
}

TEST_CASE("upper bound band: one-sided t bound, never below the maximum pair value") {
  const std::vector<double> pairs{0.010, 0.012, 0.011, 0.013, 0.009, 0.010};
  const auto band = upper_bound_band(pairs, 0.01);
  REQUIRE(band.has_value());
  CHECK(band->tolerance > 0.013);
  CHECK(band->t_quantile == doctest::Approx(student_t_quantile(5, 0.99)));
  // With a huge outlier the max dominates the t bound only if the bound is smaller; check the rule.
  const std::vector<double> flat{0.01, 0.01, 0.01, 0.01};
  const auto f = upper_bound_band(flat, 0.01);
  CHECK(f->tolerance == 0.01);
  CHECK_FALSE(f->max_applied);
}

TEST_CASE("how to calibrate names the command") {
  CHECK(how_to_calibrate("m@1").find("reverify calibrate m@1 --seeds 5") != std::string::npos);
}
