#pragma once
// policies/bands: how a tolerance band is made from seed-to-seed spread, and how a verification's
// false-page rate is spent over its bands (docs/design.md, "Verdict" -> tolerance). Pure.
//
// Property 1: an honest rebuild (a draw from the distribution the seed runs come from) falls
// outside a band with probability at most `alpha`, the band's share of the verification's
// false-page rate (AlphaSplit below). Property 2: every band states the smallest shift it catches
// with 80% probability (`power_shift`, metric units; the underpowered rule is policies/power.hpp).
//
// Two-sided metric bands (primary and segment metrics), from n >= kMinSeedRuns seed runs. Values
// within float rounding of each other (1e-9 relative) count as equal: a job that computes the
// same 42/43 two ways reports 0.97674418604651159 and ...162, which is no spread.
// - scale `proportion` (every seed run is a count / k): a Student-t prediction interval on
//   Anscombe's angular scale asin(sqrt((c + 3/8) / (k + 3/4))), t(n-1, 1 - alpha/2) * s *
//   sqrt(1 + 1/n) around the mean, joined with the rare-change allowance: the count may move j
//   examples from the runs' median count, where j is the (1 - alpha) quantile of the negative
//   binomial predictive of |c - median| (rare_change_allowance below). The t part models smooth
//   spread, the allowance the discreteness: runs that all agree still get a band of whole
//   examples, never one 0 wide. k is the count the job or the scoring spec gives; when none is
//   given, the smallest common denominator k <= kMaxInferredExamples of the values in [0, 1]
//   (the seed runs and the release's own), found from their continued fractions: a divisor of
//   the true count, so the inferred grid is at most as fine as the true one and the band at
//   least as wide (`examples_inferred`). A value with at most 6 decimal places (0.975) is no
//   evidence: it may be 39/40 or a number the job rounded, and a rounded 42/43 (0.9767) would
//   suggest a grid 230 times finer than the true one.
//   Without a k (or values no counts of it), values in [0, 1] that repeat and sit on a grid (every
//   value a whole number of the smallest gap between two different values from the smallest, to
//   1% of that gap, and the gap at least 1/kMaxInferredExamples) are counts all the same: the
//   gap is a whole number of true steps, and the band is made as a proportion's with that grain
//   (1/k = the gap: coarser than the truth or equal, so wider). Not for a metric with a step
//   (below), whose repeats are clumps, not a grid.
// - scales `unit` (every seed run in [0, 1], no grid) and `real` (any other values): a
//   skew-aware t interval on y = asin(sqrt x) (unit: a bounded metric near 1 is near symmetric
//   there) or y = x (real):
//     lower = mean(y) - q_down s sqrt(1 + 1/n),  upper = mean(y) + q_up s sqrt(1 + 1/n),
//     q_side = t(df, 1 - alpha/2) + g_side (z^2 - 1) / 6   (Cornish-Fisher's skew term),
//   z = z(1 - alpha/2), g_up = max(G, a(n)), g_down = max(-G, a(n)), G the sample skewness of y
//   (adjusted Fisher-Pearson, clamped to [-2, 2]) and a(n) = min(2, kSkewAllowance * se(n)),
//   se(n) = sqrt(6 (n - 2) / ((n + 1) (n + 3))) its standard error for a normal sample: the long
//   side of a skewed metric (an error metric whose better seeds trail off, one pulled by its
//   largest residuals) gets its tail, and skewness the runs cannot rule out is allowed for on
//   both sides. df = n - 1, except for a lumpy metric; never narrower than the seed runs' own
//   range (every value a seed run scored is a value an honest rebuild can score).
//   A metric is lumpy when the caller gives its step (`MetricBandSpec::step`: a ranking metric is
//   a mean over queries of values that jump when a query's top k changes, so its seed
//   distribution is a few clumps, whether or not n runs show a repeat) or when its values repeat
//   off a grid: then excess kurtosis up to kLumpyKurtosis is allowed for (the spread estimated
//   from n runs is that much less certain: df = 2 / (2/(n - 1) + kLumpyKurtosis / n), the
//   Satterthwaite degrees of freedom of s^2), and each edge moves out by the gap between the two
//   outermost different values on its side (the next clump beyond the runs may lie that far).
//   With a step, the band is also joined with the rare-change allowance in steps: each run is
//   ceil(|x - median| / step) steps from the runs' median (at least as many units changed as
//   that), and the band holds median +- j steps, j the (1 - alpha) quantile of the negative
//   binomial predictive (as a proportion's): a query may change where no seed run showed one.
//   Runs that all agree then still get a band (`discrete_applied`). When one unit's value moves
//   by fractions of the step (`MetricBandSpec::fractional_steps`: a graded NDCG, where two
//   documents swapped at ranks 8 and 9 move a query by a sliver of 1/queries), a run counts
//   |x - median| / step, not rounded up: the distance is a sum of unit changes of at most one step
//   each, whose variance is then at most its mean in steps, and the predictive's variance is at
//   least its mean, so the allowance still covers it. Rounding up would count every seed run
//   that moved at all as a whole query changed: 20 runs of sd 0.03 steps got +-4 steps, +-117
//   seed sd. j stays at least 1 below about 50 runs (a query may still change by a whole step
//   where no seed run showed one).
// The band is then widened to centre +- floor when a floor is set. A metric whose runs all agree
// and that has no k and no step has no honest band (its spread gives no scale, and a band 0 wide
// would page one changed example): no band, `cannot_judge`, unless a floor is set. power_shift: the
// shift of the metric, in the direction that needs more, at which a rebuild leaves the band with
// 80% probability: distance from the seed mean to the band edge plus t(df, 0.8) predictive standard
// deviations (the predictive distribution of a new run when the spread itself is estimated from n
// runs; with a step, at least the rare-change allowance's sd in steps); a direction in which a
// bounded metric cannot move that far (past 0 or 1) is not counted, and with none left the band
// catches no shift the metric can make; a proportion's is rounded up to whole examples.
//
// One-sided upper bounds for distances (distribution statistics between the release and each
// seed run, the steps deviation of same-seed reruns): n values, modelled as log-normal with a
// Cornish-Fisher correction for right skew: y = log(v + resolution/2),
//   upper = exp(mean(y) + (t(n-1, 1 - alpha) + g (z^2 - 1) / 6) * s' * sqrt(1 + 1/n))
//           - resolution/2,
// s' = max(sd(y), upper semi-deviation of y), z = z(1 - alpha), g = the larger of the sample
// skewness of y and 2 - 3 s' (a statistic may be chi-square shaped, skewness 2, and the log takes
// only about 3 s' of that away), clamped to [0, 2]; never below max(values). Counts (flip rate:
// flips / rows; KS: the values on the wrong side / scores) also get the rare-change allowance
// over the counts. power_shift = upper - the 20th percentile of the fitted (t(n-1) on the log
// scale) distribution.

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>

#include "core/enum_names.hpp"

namespace reverify {

// ---- How the false-page rate is spent ----------------------------------------------------------
// How a verification's false-page rate is spent (docs/design.md, "Verdict" -> tolerance: "spend
// alpha where it matters"). Pure.
//
// The rate is split over the families of checks that have a band in this verification, in
// proportion to their shares (the primary metric first), then evenly over the checks of a
// family (Bonferroni). A family with no banded check gives its share to the others, so the
// checks that do decide always spend the whole rate and no more:
//   alpha(check in F) = false_page_rate * share(F) / sum(share of present families) / m(F).
// By the union bound an honest rebuild pages with probability at most false_page_rate when
// every band holds its own alpha.

enum class CheckFamily { primary, segments, distribution, steps };
template <>
struct EnumNames<CheckFamily> {
  static constexpr EnumName<CheckFamily> table[] = {
      {CheckFamily::primary, "primary"},
      {CheckFamily::segments, "segments"},
      {CheckFamily::distribution, "distribution"},
      {CheckFamily::steps, "steps"},
  };
};

struct AlphaShares {
  double primary = 0.5;
  double segments = 0.25;
  double distribution = 0.25;
  double steps = 0.25;  // only steps mode has a deciding steps check: it then gets everything

  double of(CheckFamily family) const;
};

class AlphaSplit {
 public:
  // banded: family -> number of checks in it that have a band (families absent or 0: none).
  AlphaSplit(double false_page_rate, const AlphaShares& shares,
             const std::map<CheckFamily, std::size_t>& banded);

  double family(CheckFamily family) const;  // 0 when the family has no banded check
  double per_check(CheckFamily family) const;

 private:
  std::map<CheckFamily, double> family_;
  std::map<CheckFamily, std::size_t> banded_;
};

// ---- Bands ------------------------------------------------------------------------------------

inline constexpr std::size_t kMinSeedRuns = 3;
// Projections of "seed runs needed" stop here: beyond it a target counts as unreachable.
inline constexpr std::size_t kMaxProjectedRuns = 1000;

enum class MetricScale { real, unit, proportion };
template <>
struct EnumNames<MetricScale> {
  static constexpr EnumName<MetricScale> table[] = {
      {MetricScale::real, "real"},
      {MetricScale::unit, "unit"},
      {MetricScale::proportion, "proportion"},
  };
};

// The largest denominator inferred for a metric reported without its count.
inline constexpr std::int64_t kMaxInferredExamples = 100'000;

// Lumpy metrics (see above): the excess kurtosis allowed for (a Laplace distribution's), and the
// standard errors of skewness allowed for on both sides of every continuous band (3: an error
// metric whose better seeds trail off, skewness about -1, pages at alpha from 10 seed runs).
inline constexpr double kLumpyKurtosis = 3.0;
inline constexpr double kSkewAllowance = 3.0;

struct MetricBandSpec {
  double alpha = 0.01;                   // two-sided, for this check
  double floor = 0;                      // smallest half-width, metric units (tolerance.floor)
  std::optional<std::int64_t> examples;  // k: the metric is a proportion over k examples
  // The release's own value: with the seed runs, what k is inferred from when `examples` is
  // absent.
  std::optional<double> recorded;
  // The largest change one of the units the metric averages over can make to it (reverify's own
  // scores: 1/queries for ndcg@k and mrr, scoring.hpp's steps); only without a count. A metric
  // with a step is lumpy (its values jump when a unit's value jumps) and gets the rare-change
  // allowance in steps.
  std::optional<double> step;
  // With a step: one unit's value moves by fractions of it (a graded NDCG), so a run's distance
  // from the median counts in fractional steps; otherwise (mrr: 1, 1/2, 1/3 per query) each run
  // counts whole steps, rounded up.
  bool fractional_steps = false;
};

struct MetricBand {
  std::size_t n = 0;
  MetricScale scale = MetricScale::real;
  std::optional<std::int64_t> examples;
  double center = 0;  // mean of the seed runs, metric units
  double lower = 0;   // accepted observed values: lower <= x <= upper
  double upper = 0;
  double alpha = 0;
  double spread = 0;         // seed-run standard deviation, metric units
  double predictive_sd = 0;  // of an honest rebuild around the centre, metric units
  bool floor_applied = false;
  // proportion, or a metric with a step: the rare-change allowance widened the band
  bool discrete_applied = false;
  bool examples_inferred = false;  // proportion: k was inferred from the values
  bool lumpy = false;              // unit, real: the lumpy allowances were made
  double skewness = 0;             // unit, real: the sample skewness on the band's scale
  // proportion: the metric's step, 1/k; without a count, the smallest gap between repeating
  // values (then `examples` is absent)
  std::optional<double> grain;
  std::optional<double> power_shift;  // absent: no shift the metric can make is caught

  bool contains(double x) const;
  double margin(double x) const;  // distance to the nearest edge, negative outside
  // The smallest shift the metric can make that is at least `shift`: a proportion moves in whole
  // examples (a declared detect of 0.02 over 391 examples is a shift of 8 examples, 0.0205).
  double attainable(double shift) const;
};

struct MetricBandResult {
  std::optional<MetricBand> band;
  std::string no_band_reason;  // when band is absent
  // No band because the runs agree and nothing gives the metric's grain (no k, no floor): more
  // seed runs will not help; a count (or a scoring spec) will.
  bool cannot_judge = false;
};

// The smallest common denominator k (2 <= k <= kMaxInferredExamples) such that every value is a
// count / k (to float64 division rounding); nullopt when a value is outside [0, 1], has at most 6
// decimal places (see above), or there is none (not a small-denominator fraction, or all values
// 0 or 1).
std::optional<std::int64_t> infer_examples(std::span<const double> values);

MetricBandResult metric_band(std::span<const double> runs, const MetricBandSpec& spec);

// Seed runs (in all) with which this band's power shift would reach `detect` (attainable), the
// spread as measured; absent when no number up to kMaxProjectedRuns does. REQUIRES: a band exists.
std::optional<std::size_t> metric_runs_for(std::span<const double> runs, const MetricBandSpec& spec,
                                           double detect);

struct UpperBoundSpec {
  double alpha = 0.01;    // one-sided, for this check
  double resolution = 0;  // the statistic's smallest step (flip rate: 1 / rows); 0: continuous
  bool counts = false;    // values are counts * resolution: add the rare-change allowance
  double floor = 0;       // smallest bound (tolerance.floor)
};

struct UpperBound {
  std::size_t n = 0;
  double upper = 0;
  double alpha = 0;
  double typical = 0;   // exp(mean(y)) - resolution / 2: the geometric-mean value
  double log_sd = 0;    // s' above
  double skewness = 0;  // g above
  bool max_applied = false;
  bool count_applied = false;
  bool floor_applied = false;
  std::optional<double> power_shift;

  double margin(double x) const { return upper - x; }
};

struct UpperBoundResult {
  std::optional<UpperBound> bound;
  std::string no_band_reason;
};

UpperBoundResult upper_bound(std::span<const double> values, const UpperBoundSpec& spec);

std::optional<std::size_t> upper_bound_runs_for(std::span<const double> values,
                                                const UpperBoundSpec& spec, double detect);

// A `reverify` command a verdict suggests, in backticks and runnable as printed: "reverify ",
// `args`, then `scope` (how a command finds this installation's registry and state,
// VerdictPolicy::command_scope) when it is not empty.
std::string suggested_command(const std::string& args, const std::string& scope);

// The text every uncalibrated check carries, with its command (suggested_command).
std::string how_to_calibrate(const std::string& model_version, const std::string& scope);

}  // namespace reverify

// ---- The distributions and sample summaries bands are built from (Boost.Math underneath) ----
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
