#include "policies/tolerance_math.hpp"

#include <cmath>
#include <numeric>

#include <boost/math/distributions/chi_squared.hpp>
#include <boost/math/distributions/negative_binomial.hpp>
#include <boost/math/distributions/normal.hpp>
#include <boost/math/distributions/students_t.hpp>

namespace reverify::tolerance_math {

double student_t_quantile(double degrees_of_freedom, double p) {
  return boost::math::quantile(boost::math::students_t(degrees_of_freedom), p);
}

double normal_quantile(double p) {
  return boost::math::quantile(boost::math::normal(), p);
}

double chi_squared_quantile(double degrees_of_freedom, double p) {
  return boost::math::quantile(boost::math::chi_squared(degrees_of_freedom), p);
}

std::int64_t negative_binomial_upper(double size, double p, double alpha) {
  // P(X = 0) = p^size, P(X = x + 1) = P(X = x) (x + size) / (x + 1) (1 - p): sum the pmf until
  // what is left, P(X > j), is at most alpha. Far fewer operations than a cdf per step.
  double pmf = std::pow(p, size);
  double left = 1 - pmf;
  std::int64_t j = 0;
  while (left > alpha) {
    pmf *= (static_cast<double>(j) + size) / static_cast<double>(j + 1) * (1 - p);
    ++j;
    left -= pmf;
    if (pmf <= 0 && left > alpha) {
      // Underflow from a huge mean: fall back to the distribution's own quantile.
      const boost::math::negative_binomial dist(size, p);
      return static_cast<std::int64_t>(
          std::ceil(boost::math::quantile(boost::math::complement(dist, alpha))));
    }
  }
  return j;
}

double negative_binomial_sd(double size, double p) {
  return std::sqrt(size * (1 - p)) / p;
}

Summary summarize(std::span<const double> xs) {
  Summary s;
  s.n = xs.size();
  if (xs.empty())
    return s;
  const double n = static_cast<double>(xs.size());
  s.mean = std::accumulate(xs.begin(), xs.end(), 0.0) / n;
  if (xs.size() < 2)
    return s;
  double m2 = 0, m3 = 0, upper = 0;
  for (double x : xs) {
    const double d = x - s.mean;
    m2 += d * d;
    m3 += d * d * d;
    if (d > 0)
      upper += d * d;
  }
  s.sd = std::sqrt(m2 / (n - 1));
  s.upper_sd = std::sqrt(2 * upper / (n - 1));
  if (xs.size() >= 3 && m2 > 0) {
    const double g1 = (m3 / n) / std::pow(m2 / n, 1.5);
    s.skewness = g1 * std::sqrt(n * (n - 1)) / (n - 2);
  }
  return s;
}

std::int64_t rare_change_allowance(double total_deviation, std::size_t n, double alpha) {
  const double trials = static_cast<double>(n);
  return negative_binomial_upper(total_deviation + 0.5, trials / (trials + 1), alpha);
}

double rare_change_sd(double total_deviation, std::size_t n) {
  const double trials = static_cast<double>(n);
  return negative_binomial_sd(total_deviation + 0.5, trials / (trials + 1));
}

}  // namespace reverify::tolerance_math
