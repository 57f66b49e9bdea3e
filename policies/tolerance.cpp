#include "policies/tolerance.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include <boost/math/distributions/non_central_t.hpp>
#include <boost/math/distributions/normal.hpp>
#include <boost/math/distributions/students_t.hpp>

namespace reverify {
namespace {

struct Moments {
  double mean = 0;
  double sd = 0;
};

Moments moments(std::span<const double> xs) {
  const double n = static_cast<double>(xs.size());
  const double mean = std::accumulate(xs.begin(), xs.end(), 0.0) / n;
  double ss = 0;
  for (double x : xs)
    ss += (x - mean) * (x - mean);
  return {mean, xs.size() > 1 ? std::sqrt(ss / (n - 1)) : 0.0};
}

// Smallest d in [0, hi] with detect(d) >= probability; detect is increasing in d.
template <class Detect>
double smallest_detected(Detect detect, double probability, double hi) {
  while (detect(hi) < probability)
    hi *= 2;
  double lo = 0;
  for (int i = 0; i < 200 && hi - lo > 1e-12 * std::max(1.0, hi); ++i) {
    const double mid = (lo + hi) / 2;
    (detect(mid) >= probability ? hi : lo) = mid;
  }
  return hi;
}

}  // namespace

double student_t_quantile(double degrees_of_freedom, double p) {
  return boost::math::quantile(boost::math::students_t(degrees_of_freedom), p);
}

Power band_power(std::size_t n, double sd, double alpha, double tolerance, double probability) {
  const double k = std::sqrt(1 + 1.0 / static_cast<double>(n));
  const double t = student_t_quantile(static_cast<double>(n - 1), 1 - alpha / 2);
  Power power;
  if (sd <= 0) {
    power.shift_units = tolerance;  // no spread: anything beyond the floor is caught
    return power;
  }
  if (tolerance <= t * sd * k * (1 + 1e-12)) {
    // (X - mean) / (s k) is noncentral t with n - 1 degrees of freedom and noncentrality d / k
    // for a true shift of d standard deviations.
    const auto detect = [&](double d) {
      boost::math::non_central_t dist(static_cast<double>(n - 1), d / k);
      return boost::math::cdf(boost::math::complement(dist, t)) + boost::math::cdf(dist, -t);
    };
    const double d = smallest_detected(detect, probability, 4.0);
    power.shift_sigma = d;
    power.shift_units = d * sd;
    return power;
  }
  // The floor binds: normal approximation of |X - mean| > tolerance with spread s k.
  boost::math::normal z;
  const double spread = sd * k;
  const auto detect = [&](double shift) {
    return boost::math::cdf(z, (shift - tolerance) / spread) +
           boost::math::cdf(z, (-shift - tolerance) / spread);
  };
  power.shift_units = smallest_detected(detect, probability, tolerance + spread);
  power.shift_sigma = power.shift_units / sd;
  return power;
}

double prediction_half_width(std::span<const double> runs, double t_quantile) {
  return t_quantile * moments(runs).sd * std::sqrt(1 + 1.0 / static_cast<double>(runs.size()));
}

namespace {

// The common part of both bands: moments, alpha and the t quantile at p, for n - 1 degrees of
// freedom.
Band t_band(std::span<const double> values, double alpha, double p) {
  const auto m = moments(values);
  Band band;
  band.n = values.size();
  band.mean = m.mean;
  band.sd = m.sd;
  band.alpha = alpha;
  band.t_quantile = student_t_quantile(static_cast<double>(band.n - 1), p);
  return band;
}

}  // namespace

std::optional<Band> metric_band(std::span<const double> runs, double alpha, double floor) {
  if (runs.size() < kMinSeedRuns)
    return std::nullopt;
  Band band = t_band(runs, alpha, 1 - alpha / 2);
  const double half_width = prediction_half_width(runs, band.t_quantile);
  band.floor_applied = floor > half_width;
  band.tolerance = std::max(half_width, floor);
  band.power = band_power(band.n, band.sd, alpha, band.tolerance);
  return band;
}

std::optional<Band> upper_bound_band(std::span<const double> pair_values, double alpha) {
  if (pair_values.size() < kMinSeedRuns)
    return std::nullopt;
  Band band = t_band(pair_values, alpha, 1 - alpha);
  const double t_bound = band.mean + prediction_half_width(pair_values, band.t_quantile);
  const double largest = *std::max_element(pair_values.begin(), pair_values.end());
  band.max_applied = largest > t_bound;
  band.tolerance = std::max(t_bound, largest);
  band.power.shift_units = band.tolerance - band.mean;
  if (band.sd > 0)
    band.power.shift_sigma = band.power.shift_units / band.sd;
  return band;
}

std::string how_to_calibrate(const std::string& model_version) {
  return "calibrate with `reverify calibrate " + model_version +
         " --seeds 5` (seed-only reruns; at least 3 are needed for a band)";
}

}  // namespace reverify
