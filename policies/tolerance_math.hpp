#pragma once
// The distributions and sample summaries tolerance bands are built from (policies/tolerance.hpp).
// Pure; Boost.Math underneath.

#include <cstdint>
#include <span>

namespace reverify::tolerance_math {

inline constexpr double kPower = 0.8;  // "the smallest shift caught with 80% probability"

// Quantiles: P(T <= q) = p.
double student_t_quantile(double degrees_of_freedom, double p);
double normal_quantile(double p);
double chi_squared_quantile(double degrees_of_freedom, double p);

// X ~ negative binomial: the failures before the `size`-th success, success probability p (real
// size > 0). Returns the smallest j >= 0 with P(X > j) <= alpha.
std::int64_t negative_binomial_upper(double size, double p, double alpha);
// Its standard deviation: sqrt(size (1 - p)) / p.
double negative_binomial_sd(double size, double p);

struct Summary {
  std::size_t n = 0;
  double mean = 0;
  double sd = 0;        // sample standard deviation (n - 1); 0 for n < 2
  double upper_sd = 0;  // sqrt(2 sum_{x > mean} (x - mean)^2 / (n - 1)): sd if symmetric
  double skewness = 0;  // adjusted Fisher-Pearson G1; 0 for n < 3 or sd == 0
};
Summary summarize(std::span<const double> xs);

// The smallest j >= 0 such that |X_new - mode| <= j with probability >= 1 - alpha, when the
// absolute deviations of n runs from their mode summed to `total_deviation` and each deviation
// is Poisson with an unknown rate (Jeffreys prior): the posterior predictive is negative
// binomial(total_deviation + 1/2, n / (n + 1)).
std::int64_t rare_change_allowance(double total_deviation, std::size_t n, double alpha);
// That predictive's standard deviation.
double rare_change_sd(double total_deviation, std::size_t n);

}  // namespace reverify::tolerance_math
