#include "policies/bands.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include <boost/math/distributions/chi_squared.hpp>
#include <boost/math/distributions/negative_binomial.hpp>
#include <boost/math/distributions/normal.hpp>
#include <boost/math/distributions/students_t.hpp>

#include "policies/number_text.hpp"

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

namespace reverify {

double AlphaShares::of(CheckFamily family) const {
  switch (family) {
    case CheckFamily::primary:
      return primary;
    case CheckFamily::segments:
      return segments;
    case CheckFamily::distribution:
      return distribution;
    case CheckFamily::steps:
      return steps;
  }
  return 0;
}

AlphaSplit::AlphaSplit(double false_page_rate, const AlphaShares& shares,
                       const std::map<CheckFamily, std::size_t>& banded)
    : banded_(banded) {
  double total = 0;
  for (const auto& [family, count] : banded)
    total += count > 0 ? shares.of(family) : 0;
  for (const auto& [family, count] : banded) {
    if (count > 0 && total > 0)
      family_[family] = false_page_rate * shares.of(family) / total;
  }
}

double AlphaSplit::family(CheckFamily family) const {
  auto it = family_.find(family);
  return it == family_.end() ? 0 : it->second;
}

double AlphaSplit::per_check(CheckFamily family) const {
  auto it = banded_.find(family);
  const std::size_t m = it == banded_.end() ? 0 : it->second;
  return m == 0 ? 0 : this->family(family) / static_cast<double>(m);
}

namespace {

using tolerance_math::kPower;
using tolerance_math::normal_quantile;
using tolerance_math::student_t_quantile;
using tolerance_math::summarize;

constexpr double kIntegral = 1e-6;  // a proportion's count is within this of an integer
// Upper bounds: the right skew assumed of a statistic on its own scale (a distance that grows
// with the square of a seed-level factor, like a model's confidence, is chi-square shaped:
// skewness 2 to 2.8). Every Cornish-Fisher skew term (upper bounds, continuous metric bands) uses
// at most kMaxSkewness: beyond it the expansion is no longer a quantile's.
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
  double median = 0;      // proportion: the median count (the lower one for even n); with a step:
                          // the median value
  double deviation = 0;   // proportion: sum |count - median|; with a step: sum of the steps each
                          // run is from the median, |x - median| / step (rounded up unless
                          // MetricBandSpec::fractional_steps)
  double step = 0;        // unit, real: MetricBandSpec::step (0: none)
  bool inferred = false;  // proportion: k inferred from the values
  bool grain_estimated = false;  // proportion: 1/k is the smallest gap between the values
  // unit, real (on the scale): the sample skewness, the runs' extremes, and for a lumpy metric the
  // gap between the two outermost different values on each side
  double skewness = 0;
  double low = 0, high = 0;
  bool lumpy = false;
  double low_gap = 0, high_gap = 0;
};

// Values within float rounding of each other are one value (see the header).
bool same_value(double a, double b) {
  return std::abs(a - b) <= 1e-9 * std::max(1.0, std::max(std::abs(a), std::abs(b)));
}

bool agree(std::span<const double> runs) {
  const auto [lo, hi] = std::minmax_element(runs.begin(), runs.end());
  return same_value(*lo, *hi);
}

// The runs' different values, sorted; `repeats` when two runs scored the same.
struct DistinctValues {
  std::vector<double> values;
  bool repeats = false;
};

DistinctValues distinct_values(std::span<const double> runs) {
  std::vector<double> sorted(runs.begin(), runs.end());
  std::sort(sorted.begin(), sorted.end());
  DistinctValues d;
  for (double x : sorted) {
    if (!d.values.empty() && same_value(d.values.back(), x))
      d.repeats = true;
    else
      d.values.push_back(x);
  }
  return d;
}

// Values that repeat and sit on a grid are counts of something, even when no count is known: the
// smallest gap between two different values is a whole number of the true steps (at least one),
// the grain a discrete metric is judged in. nullopt without a repeat, when all values agree, when
// the gap is finer than any count reverify would infer, or when some value is off the grid (clumps
// at irregular spacings, as a ranking metric's: lumpy, not counted).
std::optional<double> grid_of_repeats(const DistinctValues& d) {
  if (!d.repeats || d.values.size() < 2)
    return std::nullopt;
  double gap = d.values[1] - d.values[0];
  for (std::size_t i = 2; i < d.values.size(); ++i)
    gap = std::min(gap, d.values[i] - d.values[i - 1]);
  if (gap < 1.0 / static_cast<double>(kMaxInferredExamples))
    return std::nullopt;
  for (double x : d.values) {
    const double steps = (x - d.values.front()) / gap;
    if (std::abs(steps - std::round(steps)) > 0.01)
      return std::nullopt;
  }
  return gap;
}

// The smallest q <= kMaxInferredExamples with x = p / q to float64 division rounding (1e-12
// relative, a thousand times what a division leaves): a convergent of x's continued fraction
// (convergents are the best approximations: no smaller q comes closer), or nullopt.
std::optional<std::int64_t> denominator_of(double x) {
  double p0 = 1, q0 = 0, p1 = std::floor(x), q1 = 1, rest = x - std::floor(x);
  while (q1 <= static_cast<double>(kMaxInferredExamples)) {
    if (std::abs(x * q1 - p1) <= 1e-12 * q1)
      return static_cast<std::int64_t>(q1);
    if (rest <= 0)
      return std::nullopt;
    const double inverse = 1 / rest;
    const double a = std::floor(inverse);
    rest = inverse - a;
    const double p2 = a * p1 + p0, q2 = a * q1 + q0;
    p0 = p1, q0 = q1, p1 = p2, q1 = q2;
  }
  return std::nullopt;
}

// The adjusted sample skewness is noisy with few runs: skewness within kSkewAllowance standard
// errors of a normal sample's (sqrt(6 (n - 2) / ((n + 1) (n + 3)))) is allowed for on both sides.
double skew_allowance(double n) {
  return std::min(kMaxSkewness, kSkewAllowance * std::sqrt(6 * (n - 2) / ((n + 1) * (n + 3))));
}

// The degrees of freedom of a spread estimated from n runs of a distribution with the given
// excess kurtosis (Satterthwaite: Var(s^2) / sigma^4 = 2 / (n - 1) + kurtosis / n).
double spread_degrees_of_freedom(double n, double kurtosis) {
  return 2 / (2 / (n - 1) + kurtosis / n);
}

MetricEvidence metric_evidence(std::span<const double> runs, const MetricBandSpec& spec) {
  MetricEvidence e;
  e.n = runs.size();
  const bool in_unit =
      std::all_of(runs.begin(), runs.end(), [](double x) { return x >= 0 && x <= 1; });
  std::optional<std::int64_t> examples = spec.examples;
  if (!examples && in_unit && !spec.step) {
    std::vector<double> values(runs.begin(), runs.end());
    if (spec.recorded)
      values.push_back(*spec.recorded);
    examples = infer_examples(values);
    e.inferred = examples.has_value();
  }
  double k = examples ? static_cast<double>(*examples) : 0;
  bool counts = k >= 1 && std::all_of(runs.begin(), runs.end(), [k](double x) {
                  return std::abs(x * k - std::round(x * k)) <= kIntegral;
                });
  const auto distinct = distinct_values(runs);
  // Values that are no counts of a known k may still sit on a grid of their own (a metric whose
  // count is not its denominator, or runs whose spread was scaled to project a smaller one):
  // counts all the same, of the grid's grain, rather than a lumpy continuous metric.
  if (!counts && in_unit && !spec.step) {
    if (const auto grain = grid_of_repeats(distinct)) {
      k = 1 / *grain;
      counts = e.grain_estimated = true;
    }
  }
  e.scale.kind =
      !in_unit ? MetricScale::real : (counts ? MetricScale::proportion : MetricScale::unit);
  e.scale.k = k;
  const bool same = agree(runs);
  const auto raw = summarize(runs);
  e.center = raw.mean;
  e.spread = same ? 0 : raw.sd;
  std::vector<double> g(runs.size());
  std::transform(runs.begin(), runs.end(), g.begin(), [&](double x) { return e.scale.to(x); });
  const auto on_scale = summarize(g);
  e.mean_g = on_scale.mean;
  e.sd_g = same ? 0 : on_scale.sd;
  if (e.scale.kind == MetricScale::proportion) {
    std::vector<double> counts(runs.size());
    // Whole counts when k is known; an estimated grain need not start at 0.
    std::transform(runs.begin(), runs.end(), counts.begin(),
                   [&](double x) { return e.grain_estimated ? x * k : std::round(x * k); });
    std::sort(counts.begin(), counts.end());
    e.median = counts[(counts.size() - 1) / 2];  // the (lower) median count
    for (double c : counts)
      e.deviation += std::abs(c - e.median);
    return e;
  }
  e.skewness = same ? 0 : std::clamp(on_scale.skewness, -kMaxSkewness, kMaxSkewness);
  e.low = e.scale.to(distinct.values.front());
  e.high = e.scale.to(distinct.values.back());
  e.lumpy = spec.step || distinct.repeats;
  if (spec.step && *spec.step > 0) {
    e.step = *spec.step;
    std::vector<double> sorted(runs.begin(), runs.end());
    std::sort(sorted.begin(), sorted.end());
    e.median = sorted[(sorted.size() - 1) / 2];
    for (double x : sorted) {
      const double steps = std::abs(x - e.median) / e.step;
      e.deviation += spec.fractional_steps ? steps : std::ceil(steps - kIntegral);
    }
  }
  if (e.lumpy && distinct.values.size() >= 2) {
    const auto& v = distinct.values;
    e.low_gap = e.scale.to(v[1]) - e.scale.to(v[0]);
    e.high_gap = e.scale.to(v[v.size() - 1]) - e.scale.to(v[v.size() - 2]);
  }
  return e;
}

// The proportion's band: the t interval on Anscombe's angle joined with the rare-change allowance.
void proportion_band(const MetricEvidence& e, const MetricBandSpec& spec, std::size_t n,
                     MetricBand& band) {
  const double nd = static_cast<double>(n);
  const double sigma_g = e.sd_g * std::sqrt(1 + 1 / nd);
  const double half = student_t_quantile(nd - 1, 1 - spec.alpha / 2) * sigma_g;
  band.lower = e.scale.from(e.mean_g - half);
  band.upper = e.scale.from(e.mean_g + half);
  band.predictive_sd = (e.scale.from(e.mean_g + sigma_g) - e.scale.from(e.mean_g - sigma_g)) / 2;
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

// The continuous (unit, real) band: the skew-aware t interval, the runs' range, and for a lumpy
// metric its kurtosis and clump allowances. Returns the degrees of freedom used.
double continuous_band(const MetricEvidence& e, const MetricBandSpec& spec, std::size_t n,
                       MetricBand& band) {
  const double nd = static_cast<double>(n);
  const double df = e.lumpy ? spread_degrees_of_freedom(nd, kLumpyKurtosis) : nd - 1;
  const double sigma_g = e.sd_g * std::sqrt(1 + 1 / nd);
  const double t = student_t_quantile(df, 1 - spec.alpha / 2);
  const double z = normal_quantile(1 - spec.alpha / 2);
  const double floor_g = skew_allowance(nd);
  const double up = t + std::max(e.skewness, floor_g) * (z * z - 1) / 6;
  const double down = t + std::max(-e.skewness, floor_g) * (z * z - 1) / 6;
  const double lower = std::min(e.mean_g - down * sigma_g, e.low) - e.low_gap;
  const double upper = std::max(e.mean_g + up * sigma_g, e.high) + e.high_gap;
  band.lower = e.scale.from(lower);
  band.upper = e.scale.from(upper);
  band.predictive_sd = (e.scale.from(e.mean_g + sigma_g) - e.scale.from(e.mean_g - sigma_g)) / 2;
  band.lumpy = e.lumpy;
  band.skewness = e.skewness;
  if (e.step > 0) {
    // The rare-change allowance in steps: one unit (a query) may change where no seed run showed
    // a change, as a count over k examples may.
    const double deviation = e.deviation * nd / static_cast<double>(e.n);
    const double allowance =
        static_cast<double>(tolerance_math::rare_change_allowance(deviation, n, spec.alpha)) *
        e.step;
    band.discrete_applied = e.median - allowance < band.lower || e.median + allowance > band.upper;
    band.lower = std::min(band.lower, e.median - allowance);
    band.upper = std::max(band.upper, e.median + allowance);
    band.predictive_sd =
        std::max(band.predictive_sd, tolerance_math::rare_change_sd(deviation, n) * e.step);
  }
  return df;
}

MetricBand band_from(const MetricEvidence& e, const MetricBandSpec& spec, std::size_t n) {
  MetricBand band;
  band.n = n;
  band.scale = e.scale.kind;
  if (e.scale.kind == MetricScale::proportion) {
    band.grain = 1 / e.scale.k;
    if (!e.grain_estimated)
      band.examples = static_cast<std::int64_t>(e.scale.k);
    band.examples_inferred = e.inferred;
  }
  band.center = e.center;
  band.alpha = spec.alpha;
  band.spread = e.spread;
  const double nd = static_cast<double>(n);
  double df = nd - 1;
  if (e.scale.kind == MetricScale::proportion)
    proportion_band(e, spec, n, band);
  else
    df = continuous_band(e, spec, n, band);
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
  // Power: per direction the metric can move in (a bounded metric cannot leave [0, 1]). An honest
  // rebuild is the centre plus predictive_sd times a t(df) variable (its sd is itself estimated
  // from n runs): the shift leaves the band with 80% probability at the edge plus that t's 80th
  // percentile (the normal's would overstate the power of few runs).
  const double z = student_t_quantile(df, kPower);
  // A bounded metric cannot move further than to 0 or 1: a direction that would need more is
  // one in which the band catches nothing with 80% probability, and is not claimed.
  std::optional<double> shift;
  const double down = band.center - band.lower + z * band.predictive_sd;
  if (!e.scale.bounded() || down <= band.center)
    shift = down;
  const double up = band.upper - band.center + z * band.predictive_sd;
  if (!e.scale.bounded() || up <= 1 - band.center)
    shift = std::max(shift.value_or(0), up);
  if (shift && e.scale.kind == MetricScale::proportion)
    shift = std::ceil(*shift * e.scale.k - kIntegral) / e.scale.k;
  band.power_shift = shift;
  return band;
}

std::string zero_spread_reason(std::span<const double> runs) {
  return "all " + std::to_string(runs.size()) + " seed runs scored " + number_text(runs[0]) +
         " and nothing gives the metric's grain (no example count, none can be inferred from the "
         "values): without spread there is no scale for a band, and a band 0 wide would page "
         "any change; add a scoring spec (evaluation.scoring) so reverify counts the examples "
         "itself, report the count in result.json (\"examples\" / \"segment_examples\"), or "
         "set tolerance.floor for it";
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
      std::max(0.0, std::exp(e.mean - student_t_quantile(nd - 1, kPower) * e.sd * f) - e.offset);
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
  if (scale != MetricScale::proportion || !grain)
    return shift;
  return std::ceil(shift / *grain - kIntegral) * *grain;
}

MetricBandResult metric_band(std::span<const double> runs, const MetricBandSpec& spec) {
  MetricBandResult result;
  if (runs.size() < kMinSeedRuns) {
    result.no_band_reason = std::to_string(runs.size()) + " seed run(s) known, " +
                            std::to_string(kMinSeedRuns) + " needed";
    return result;
  }
  const auto e = metric_evidence(runs, spec);
  if (e.sd_g == 0 && e.scale.kind != MetricScale::proportion && e.step <= 0 && spec.floor <= 0) {
    result.no_band_reason = zero_spread_reason(runs);
    result.cannot_judge = true;
    return result;
  }
  result.band = band_from(e, spec, runs.size());
  return result;
}

// A value with at most 6 decimal places (0.975, 0.9767) may be a rounded number as well as a
// count over 40 or 10000: it tells no count.
bool short_decimal(double x) {
  const double scaled = x * 1e6;
  return x > 0 && x < 1 && std::abs(scaled - std::round(scaled)) <= 1e-9 * scaled;
}

std::optional<std::int64_t> infer_examples(std::span<const double> values) {
  std::int64_t k = 1;
  for (double x : values) {
    if (!(x >= 0 && x <= 1) || short_decimal(x))
      return std::nullopt;
    const auto q = denominator_of(x);
    if (!q)
      return std::nullopt;
    k = std::lcm(k, *q);
    if (k > kMaxInferredExamples)
      return std::nullopt;
  }
  if (k < 2)
    return std::nullopt;
  return k;
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

std::string suggested_command(const std::string& args, const std::string& scope) {
  return "`reverify " + args + (scope.empty() ? "" : " " + scope) + "`";
}

std::string how_to_calibrate(const std::string& model_version, const std::string& scope) {
  return "calibrate with " +
         suggested_command("calibrate " + model_version + " --seeds 10", scope) +
         " (seed-only reruns; at least 3 are needed for a band, --until-power adds runs until "
         "every declared tolerance.detect is met)";
}

}  // namespace reverify
