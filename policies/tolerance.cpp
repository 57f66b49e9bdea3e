#include "policies/tolerance.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "policies/number_text.hpp"
#include "policies/tolerance_math.hpp"

namespace reverify {
namespace {

using tolerance_math::kPower;
using tolerance_math::normal_quantile;
using tolerance_math::student_t_quantile;
using tolerance_math::summarize;

constexpr double kIntegral = 1e-6;  // a proportion's count is within this of an integer
// Upper bounds: the right skew assumed of a statistic on its own scale (a distance that grows
// with the square of a seed-level factor, like a model's confidence, is chi-square shaped:
// skewness 2 to 2.8), and the most the Cornish-Fisher term uses.
constexpr double kMinRawSkewness = 2.0;
constexpr double kMaxSkewness = 2.0;

// The angular scale of a metric: identity for `real`, asin(sqrt x) for `unit`, Anscombe's
// asin(sqrt((x k + 3/8) / (k + 3/4))) for a proportion over k examples.
struct Scale {
  MetricScale kind = MetricScale::real;
  double k = 0;

  double to(double x) const {
    switch (kind) {
      case MetricScale::real:
        return x;
      case MetricScale::unit:
        return std::asin(std::sqrt(std::clamp(x, 0.0, 1.0)));
      case MetricScale::proportion:
        return std::asin(std::sqrt((std::clamp(x, 0.0, 1.0) * k + 0.375) / (k + 0.75)));
    }
    return x;
  }
  double from(double y) const {
    if (kind == MetricScale::real)
      return y;
    const double s = std::sin(std::clamp(y, 0.0, M_PI / 2));
    const double x = kind == MetricScale::unit ? s * s : ((k + 0.75) * s * s - 0.375) / k;
    return std::clamp(x, 0.0, 1.0);
  }
  bool bounded() const { return kind != MetricScale::real; }
};

// Everything a metric band depends on, so that projections can vary the number of runs.
struct MetricEvidence {
  Scale scale;
  std::size_t n = 0;
  double center = 0;  // mean, metric units
  double spread = 0;  // sd, metric units
  double mean_g = 0;  // on the scale
  double sd_g = 0;
  double median = 0;     // proportion: the median count (the lower one for even n)
  double deviation = 0;  // proportion: sum |count - median|
};

MetricEvidence metric_evidence(std::span<const double> runs, const MetricBandSpec& spec) {
  MetricEvidence e;
  e.n = runs.size();
  const bool in_unit =
      std::all_of(runs.begin(), runs.end(), [](double x) { return x >= 0 && x <= 1; });
  const double k = spec.examples ? static_cast<double>(*spec.examples) : 0;
  const bool counts = k >= 1 && std::all_of(runs.begin(), runs.end(), [k](double x) {
                        return std::abs(x * k - std::round(x * k)) <= kIntegral;
                      });
  e.scale.kind =
      !in_unit ? MetricScale::real : (counts ? MetricScale::proportion : MetricScale::unit);
  e.scale.k = k;
  const auto raw = summarize(runs);
  e.center = raw.mean;
  e.spread = raw.sd;
  std::vector<double> g(runs.size());
  std::transform(runs.begin(), runs.end(), g.begin(), [&](double x) { return e.scale.to(x); });
  const auto on_scale = summarize(g);
  e.mean_g = on_scale.mean;
  e.sd_g = on_scale.sd;
  if (e.scale.kind == MetricScale::proportion) {
    std::vector<double> counts(runs.size());
    std::transform(runs.begin(), runs.end(), counts.begin(),
                   [k](double x) { return std::round(x * k); });
    std::sort(counts.begin(), counts.end());
    e.median = counts[(counts.size() - 1) / 2];  // the (lower) median count
    for (double c : counts)
      e.deviation += std::abs(c - e.median);
  }
  return e;
}

MetricBand band_from(const MetricEvidence& e, const MetricBandSpec& spec, std::size_t n) {
  MetricBand band;
  band.n = n;
  band.scale = e.scale.kind;
  if (e.scale.kind == MetricScale::proportion)
    band.examples = static_cast<std::int64_t>(e.scale.k);
  band.center = e.center;
  band.alpha = spec.alpha;
  band.spread = e.spread;
  const double nd = static_cast<double>(n);
  const double sigma_g = e.sd_g * std::sqrt(1 + 1 / nd);
  const double half = student_t_quantile(nd - 1, 1 - spec.alpha / 2) * sigma_g;
  band.lower = e.scale.from(e.mean_g - half);
  band.upper = e.scale.from(e.mean_g + half);
  band.predictive_sd = (e.scale.from(e.mean_g + sigma_g) - e.scale.from(e.mean_g - sigma_g)) / 2;
  if (e.scale.kind == MetricScale::proportion) {
    const double k = e.scale.k;
    const double deviation = e.deviation * nd / static_cast<double>(e.n);
    const auto allowance =
        static_cast<double>(tolerance_math::rare_change_allowance(deviation, n, spec.alpha));
    const double lower = std::max(0.0, (e.median - allowance) / k);
    const double upper = std::min(1.0, (e.median + allowance) / k);
    band.discrete_applied = lower < band.lower || upper > band.upper;
    band.lower = std::min(band.lower, lower);
    band.upper = std::max(band.upper, upper);
    band.predictive_sd =
        std::max(band.predictive_sd, tolerance_math::rare_change_sd(deviation, n) / k);
  }
  if (spec.floor > 0) {
    band.floor_applied =
        band.center - spec.floor < band.lower || band.center + spec.floor > band.upper;
    band.lower = std::min(band.lower, band.center - spec.floor);
    band.upper = std::max(band.upper, band.center + spec.floor);
  }
  if (e.scale.bounded()) {
    band.lower = std::max(band.lower, 0.0);
    band.upper = std::min(band.upper, 1.0);
  }
  // Power: per direction the metric can move in (a bounded metric cannot leave [0, 1]).
  const double z = normal_quantile(kPower);
  std::optional<double> shift;
  if (!e.scale.bounded() || band.lower > 0) {
    double down = band.center - band.lower + z * band.predictive_sd;
    if (e.scale.bounded())
      down = std::min(down, band.center);
    shift = down;
  }
  if (!e.scale.bounded() || band.upper < 1) {
    double up = band.upper - band.center + z * band.predictive_sd;
    if (e.scale.bounded())
      up = std::min(up, 1 - band.center);
    shift = std::max(shift.value_or(0), up);
  }
  if (shift && e.scale.kind == MetricScale::proportion)
    shift = std::ceil(*shift * e.scale.k - kIntegral) / e.scale.k;
  band.power_shift = shift;
  return band;
}

std::string zero_spread_reason(std::span<const double> runs) {
  return "all " + std::to_string(runs.size()) + " seed runs scored " + number_text(runs[0]) +
         ": a continuous metric without spread gives no scale for a band (report its example "
         "count k if it is a proportion, or set tolerance.floor for it)";
}

template <class PowerAt>
std::optional<std::size_t> runs_for(std::size_t have, double detect, PowerAt power_at) {
  auto reaches = [&](std::size_t n) {
    const auto shift = power_at(n);
    return shift && *shift <= detect;
  };
  if (reaches(have))
    return have;
  if (!reaches(kMaxProjectedRuns))
    return std::nullopt;
  std::size_t lo = have, hi = kMaxProjectedRuns;  // reaches(lo) false, reaches(hi) true
  while (hi - lo > 1) {
    const std::size_t mid = lo + (hi - lo) / 2;
    (reaches(mid) ? hi : lo) = mid;
  }
  return hi;
}

// The log-scale evidence of an upper bound.
struct BoundEvidence {
  std::size_t n = 0;
  double offset = 0;  // added before the log
  double mean = 0;    // of log(v + offset)
  double sd = 0;      // max(sd, upper semi-deviation)
  double skewness = 0;
  double largest = 0;
  double total = 0;  // counts: sum of the counts
};

UpperBound bound_from(const BoundEvidence& e, const UpperBoundSpec& spec, std::size_t n) {
  UpperBound bound;
  bound.n = n;
  bound.alpha = spec.alpha;
  bound.log_sd = e.sd;
  bound.skewness = e.skewness;
  const double nd = static_cast<double>(n);
  const double f = std::sqrt(1 + 1 / nd);
  const double z = normal_quantile(1 - spec.alpha);
  const double q = student_t_quantile(nd - 1, 1 - spec.alpha) + e.skewness * (z * z - 1) / 6;
  bound.typical = std::exp(e.mean) - e.offset;
  bound.upper = std::exp(e.mean + q * e.sd * f) - e.offset;
  if (e.largest > bound.upper) {
    bound.upper = e.largest;
    bound.max_applied = true;
  }
  if (spec.counts && spec.resolution > 0) {
    const double total = e.total * nd / static_cast<double>(e.n);
    const double counted =
        static_cast<double>(tolerance_math::rare_change_allowance(total, n, spec.alpha)) *
        spec.resolution;
    if (counted > bound.upper) {
      bound.upper = counted;
      bound.count_applied = true;
      bound.max_applied = false;
    }
  }
  if (spec.floor > bound.upper) {
    bound.upper = spec.floor;
    bound.floor_applied = true;
    bound.max_applied = bound.count_applied = false;
  }
  const double low =
      std::max(0.0, std::exp(e.mean - normal_quantile(kPower) * e.sd * f) - e.offset);
  bound.power_shift = bound.upper - low;
  return bound;
}

std::optional<BoundEvidence> bound_evidence(std::span<const double> values,
                                            const UpperBoundSpec& spec) {
  BoundEvidence e;
  e.n = values.size();
  double smallest_positive = 0;
  for (double v : values) {
    e.largest = std::max(e.largest, v);
    if (v > 0 && (smallest_positive == 0 || v < smallest_positive))
      smallest_positive = v;
    if (spec.counts && spec.resolution > 0)
      e.total += std::round(std::max(v, 0.0) / spec.resolution);
  }
  // A statistic on a grid (flip rate, KS) is shifted by half a step before the log; a
  // continuous one only when some value is exactly 0, by half the smallest positive value.
  const bool zeros = std::any_of(values.begin(), values.end(), [](double v) { return v <= 0; });
  if (spec.resolution > 0)
    e.offset = spec.resolution / 2;
  else if (zeros)
    e.offset = smallest_positive / 2;
  if (zeros && e.offset <= 0)
    return std::nullopt;  // every value is 0
  std::vector<double> y(values.size());
  std::transform(values.begin(), values.end(), y.begin(),
                 [&](double v) { return std::log(std::max(v, 0.0) + e.offset); });
  const auto s = summarize(y);
  e.mean = s.mean;
  e.sd = std::max(s.sd, s.upper_sd);
  // The log takes about 3 sd of right skew out of a statistic; what a quadratic run-level
  // factor can leave (kMinRawSkewness) is allowed for even when n runs cannot show it.
  e.skewness = std::clamp(std::max(s.skewness, kMinRawSkewness - 3 * e.sd), 0.0, kMaxSkewness);
  return e;
}

}  // namespace

bool MetricBand::contains(double x) const {
  return margin(x) >= -1e-12 * std::max(1.0, std::abs(x));
}

double MetricBand::margin(double x) const {
  return std::min(x - lower, upper - x);
}

double MetricBand::attainable(double shift) const {
  if (scale != MetricScale::proportion || !examples)
    return shift;
  const double k = static_cast<double>(*examples);
  return std::ceil(shift * k - kIntegral) / k;
}

MetricBandResult metric_band(std::span<const double> runs, const MetricBandSpec& spec) {
  MetricBandResult result;
  if (runs.size() < kMinSeedRuns) {
    result.no_band_reason = std::to_string(runs.size()) + " seed run(s) known, " +
                            std::to_string(kMinSeedRuns) + " needed";
    return result;
  }
  const auto e = metric_evidence(runs, spec);
  if (e.sd_g == 0 && e.scale.kind != MetricScale::proportion && spec.floor <= 0) {
    result.no_band_reason = zero_spread_reason(runs);
    return result;
  }
  result.band = band_from(e, spec, runs.size());
  return result;
}

std::optional<std::size_t> metric_runs_for(std::span<const double> runs, const MetricBandSpec& spec,
                                           double detect) {
  const auto e = metric_evidence(runs, spec);
  return runs_for(runs.size(), detect,
                  [&](std::size_t n) { return band_from(e, spec, n).power_shift; });
}

UpperBoundResult upper_bound(std::span<const double> values, const UpperBoundSpec& spec) {
  UpperBoundResult result;
  if (values.size() < kMinSeedRuns) {
    result.no_band_reason = std::to_string(values.size()) + " seed run(s) known, " +
                            std::to_string(kMinSeedRuns) + " needed";
    return result;
  }
  const auto e = bound_evidence(values, spec);
  if (!e) {
    if (spec.floor > 0) {
      UpperBound bound;
      bound.n = values.size();
      bound.alpha = spec.alpha;
      bound.upper = spec.floor;
      bound.floor_applied = true;
      bound.power_shift = spec.floor;
      result.bound = bound;
      return result;
    }
    result.no_band_reason = "the statistic is 0 for all " + std::to_string(values.size()) +
                            " seed runs (their predictions equal the release's): no spread to "
                            "bound; the build looks bitwise reproducible (declare level "
                            "bitwise, or set tolerance.floor for it)";
    return result;
  }
  result.bound = bound_from(*e, spec, values.size());
  return result;
}

std::optional<std::size_t> upper_bound_runs_for(std::span<const double> values,
                                                const UpperBoundSpec& spec, double detect) {
  const auto e = bound_evidence(values, spec);
  if (!e)
    return std::nullopt;
  return runs_for(values.size(), detect, [&](std::size_t n) {
    return std::optional(bound_from(*e, spec, n).power_shift);
  });
}

std::string how_to_calibrate(const std::string& model_version) {
  return "calibrate with `reverify calibrate " + model_version +
         " --seeds 10` (seed-only reruns; at least 3 are needed for a band, `--until-power` "
         "adds runs until every declared tolerance.detect is met)";
}

}  // namespace reverify
