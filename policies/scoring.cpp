// score(): checks, scopes, the classification and regression metrics of each scope (ranking's are
// in scoring_ranking.cpp); definitions, counts and steps in scoring.hpp.

#include "policies/scoring.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <numeric>

#include "policies/radix_sort.hpp"
#include "policies/scoring_detail.hpp"

namespace reverify::scoring {

using detail::Scope;

namespace {

// scikit-learn 1.2's log_loss clips probabilities to [eps, 1 - eps], eps = float64's epsilon.
constexpr double kLogLossEps = std::numeric_limits<double>::epsilon();

// Plain sums of blocks of 256 terms, the blocks added with compensation (Neumaier): a million
// terms keep their last digits, as numpy's pairwise sums do, at the cost of a plain sum.
class Sum {
 public:
  void add(double x) {
    block_ += x;
    if (++in_block_ == 256)
      flush();
  }
  double value() const {
    Sum copy = *this;
    copy.flush();
    return copy.total_ + copy.compensation_;
  }

 private:
  void flush() {
    const double t = total_ + block_;
    compensation_ +=
        std::abs(total_) >= std::abs(block_) ? (total_ - t) + block_ : (block_ - t) + total_;
    total_ = t;
    block_ = 0;
    in_block_ = 0;
  }

  double total_ = 0, compensation_ = 0, block_ = 0;
  int in_block_ = 0;
};

bool is_threshold_metric(ScoringMetric metric) {
  switch (metric) {
    case ScoringMetric::accuracy:
    case ScoringMetric::balanced_accuracy:
    case ScoringMetric::precision:
    case ScoringMetric::recall:
    case ScoringMetric::f1:
      return true;
    default:
      return false;
  }
}

MetricScore judged(ScoringMetric metric, double value, std::optional<double> step,
                   std::optional<Count> count = std::nullopt) {
  MetricScore m;
  m.metric = metric;
  m.name = to_string(metric);
  m.value = value;
  m.step = step ? std::optional(std::min(*step, 1.0)) : std::nullopt;
  m.count = count;
  return m;
}

MetricScore proportion(ScoringMetric metric, double numerator, double denominator) {
  return judged(metric, numerator / denominator, 1 / denominator, Count{numerator, denominator});
}

// ---- the per-record terms of log loss and Brier -------------------------------------------

// Each record's log loss and Brier terms, when its row is a probability row (NaN otherwise).
struct ProbabilityTerms {
  std::vector<double> log_loss, brier;
};

bool is_probability_row(std::span<const double> row) {
  double sum = 0;
  for (double p : row) {
    if (p < 0 || p > 1)
      return false;
    sum += p;
  }
  return row.size() == 1 || std::abs(sum - 1) <= kProbabilitySumTolerance;
}

// Why a row is not a probability row.
std::string row_problem(std::span<const double> row) {
  for (std::size_t c = 0; c < row.size(); ++c) {
    if (row[c] < 0 || row[c] > 1)
      return "score " + detail::number_text(row[c]) +
             (row.size() > 1 ? " in column " + std::to_string(c) : "") + " is outside [0, 1]";
  }
  double sum = 0;
  for (double p : row)
    sum += p;
  return "the row sums to " + detail::number_text(sum, 6) + ", not 1";
}

// A record's row as log loss and Brier read it: binary, the positive class's score alone.
std::span<const double> probability_row(const ScoringInputs& in, const Predictions& p,
                                        std::span<const double> positive, std::size_t i) {
  return in.task == ScoringTask::binary
             ? positive.subspan(i, 1)
             : std::span<const double>(p.values).subspan(i * p.cols, p.cols);
}

ProbabilityTerms probability_terms(const ScoringInputs& in, const Predictions& p,
                                   std::span<const double> positive) {
  const std::size_t n = in.records();
  ProbabilityTerms t;
  t.log_loss.assign(n, std::numeric_limits<double>::quiet_NaN());
  t.brier.assign(n, std::numeric_limits<double>::quiet_NaN());
  const bool binary = in.task == ScoringTask::binary;
  std::vector<double> clipped(binary ? 2 : p.cols);
  for (std::size_t i = 0; i < n; ++i) {
    const auto row = probability_row(in, p, positive, i);
    if (!is_probability_row(row))
      continue;
    const auto y = static_cast<std::size_t>(in.labels[i]);
    if (binary) {
      clipped[1] = std::clamp(row[0], kLogLossEps, 1 - kLogLossEps);
      clipped[0] = 1 - clipped[1];
      t.brier[i] = (row[0] - in.labels[i]) * (row[0] - in.labels[i]);
    } else {
      double brier = 0;
      for (std::size_t c = 0; c < row.size(); ++c) {
        clipped[c] = std::clamp(row[c], kLogLossEps, 1 - kLogLossEps);
        const double d = row[c] - (c == y ? 1.0 : 0.0);
        brier += d * d;
      }
      t.brier[i] = brier;
    }
    double sum = 0;
    for (double q : clipped)
      sum += q;
    t.log_loss[i] = -std::log(clipped[y] / sum);
  }
  return t;
}

// log_loss and brier of one scope (its terms, contiguous): judged only when every row in it is
// a probability row.
void score_probabilities(const ScoringInputs& in, const Predictions& p,
                         std::span<const double> positive, std::span<const double> log_losses,
                         std::span<const double> briers, const Scope& scope, ScopeScores& out) {
  std::optional<std::uint32_t> bad;
  Sum log_loss, brier;
  for (std::size_t j = 0; j < log_losses.size(); ++j) {
    if (std::isnan(log_losses[j])) {
      bad = scope.records[j];
      break;
    }
    log_loss.add(log_losses[j]);
    brier.add(briers[j]);
  }
  const double n = static_cast<double>(scope.records.size());
  for (ScoringMetric metric : in.metrics) {
    if (metric != ScoringMetric::log_loss && metric != ScoringMetric::brier)
      continue;
    if (bad) {
      out.metrics.push_back(detail::not_judged(
          metric, "the scores are not probabilities (row " + std::to_string(*bad) + ": " +
                      row_problem(probability_row(in, p, positive, *bad)) + ")"));
    } else {
      out.metrics.push_back(
          judged(metric, (metric == ScoringMetric::log_loss ? log_loss : brier).value() / n, {}));
    }
  }
}

// ---- AUCs: one sort of each side ------------------------------------------------------------

struct Ranked {
  double positives = 0, negatives = 0;
  double roc_auc = 0, average_precision = 0;
  double ap_step = 0;  // scoring.hpp's bound on one record's change to the average precision
};

// Sorts both sides (ascending) and walks them from the top: the Mann-Whitney count for ROC AUC
// (exact: integers and halves below 2^53) and average precision, one threshold per distinct
// score. REQUIRES: both non-empty.
Ranked rank(std::vector<double>& positives, std::vector<double>& negatives) {
  stats::radix_sort(positives);
  stats::radix_sort(negatives);
  Ranked r;
  r.positives = static_cast<double>(positives.size());
  r.negatives = static_cast<double>(negatives.size());
  std::size_t i = positives.size(), j = negatives.size();
  double tp = 0, fp = 0, pairs = 0, ap = 0, inverse_ranks = 0;
  constexpr double kBelowAll = -std::numeric_limits<double>::infinity();
  while (i > 0 || j > 0) {
    const double v =
        std::max(i > 0 ? positives[i - 1] : kBelowAll, j > 0 ? negatives[j - 1] : kBelowAll);
    double tied_positives = 0, tied_negatives = 0;
    for (; i > 0 && positives[i - 1] == v; --i)
      ++tied_positives;
    for (; j > 0 && negatives[j - 1] == v; --j)
      ++tied_negatives;
    // j negatives score below v.
    pairs += tied_positives * static_cast<double>(j) + 0.5 * tied_positives * tied_negatives;
    const double first_rank = tp + fp + 1;
    tp += tied_positives;
    fp += tied_negatives;
    if (tied_positives > 0) {
      ap += tied_positives / r.positives * (tp / (tp + fp));
      inverse_ranks += tied_positives / first_rank;
    }
  }
  r.roc_auc = pairs / (r.positives * r.negatives);
  r.average_precision = ap;
  r.ap_step = std::min(1.0, (1 + inverse_ranks) / r.positives);
  return r;
}

// ---- binary ------------------------------------------------------------------------------

struct Confusion {
  double tp = 0, fp = 0, fn = 0, tn = 0;
};

// The largest change of `f` (nullopt where undefined) under the moves of one record's decision
// that the counts allow; 1 (the whole range) when none leaves it defined.
template <class F>
double largest_move(const Confusion& c, F f) {
  const std::optional<double> now = f(c);
  double largest = -1;
  auto consider = [&](bool allowed, Confusion moved) {
    if (!allowed)
      return;
    if (auto v = f(moved))
      largest = std::max(largest, std::abs(*v - *now));
  };
  consider(c.tp >= 1, {c.tp - 1, c.fp, c.fn + 1, c.tn});
  consider(c.fn >= 1, {c.tp + 1, c.fp, c.fn - 1, c.tn});
  consider(c.fp >= 1, {c.tp, c.fp - 1, c.fn, c.tn + 1});
  consider(c.tn >= 1, {c.tp, c.fp + 1, c.fn, c.tn - 1});
  return largest < 0 ? 1.0 : largest;
}

std::optional<double> precision_of(const Confusion& c) {
  return c.tp + c.fp > 0 ? std::optional(c.tp / (c.tp + c.fp)) : std::nullopt;
}

std::optional<double> f1_of(const Confusion& c) {
  const double denominator = 2 * c.tp + c.fp + c.fn;
  return denominator > 0 ? std::optional(2 * c.tp / denominator) : std::nullopt;
}

MetricScore binary_threshold_metric(ScoringMetric metric, const Confusion& c, double threshold) {
  const double positives = c.tp + c.fn, negatives = c.fp + c.tn;
  const double records = positives + negatives;
  const std::string at = " at threshold " + detail::number_text(threshold);
  switch (metric) {
    case ScoringMetric::accuracy:
      return proportion(metric, c.tp + c.tn, records);
    case ScoringMetric::balanced_accuracy: {
      if (positives == 0 || negatives == 0) {
        const double members = std::max(positives, negatives);
        return judged(metric, (positives > 0 ? c.tp : c.tn) / members, 1 / members);
      }
      return judged(metric, (c.tp / positives + c.tn / negatives) / 2,
                    1 / (2 * std::min(positives, negatives)));
    }
    case ScoringMetric::precision:
      if (c.tp + c.fp == 0)
        return detail::not_judged(metric, "no record is predicted positive" + at);
      return judged(metric, *precision_of(c), largest_move(c, precision_of),
                    Count{c.tp, c.tp + c.fp});
    case ScoringMetric::recall:
      if (positives == 0)
        return detail::not_judged(metric, "no positive record (label 1)");
      return proportion(metric, c.tp, positives);
    case ScoringMetric::f1:
      if (2 * c.tp + c.fp + c.fn == 0)
        return detail::not_judged(metric,
                                  "no positive record (label 1) and none predicted positive" + at);
      return judged(metric, *f1_of(c), largest_move(c, f1_of));
    default:
      return {};
  }
}

// `labels` and `scores`: the scope's, contiguous.
void score_binary(const ScoringInputs& in, std::span<const double> labels,
                  std::span<const double> scores, ScopeScores& out, std::vector<double>& positives,
                  std::vector<double>& negatives) {
  std::vector<Confusion> confusion(in.thresholds.size());
  for (std::size_t t = 0; t < in.thresholds.size(); ++t) {
    double positive = 0, decided = 0, both = 0;
    for (std::size_t j = 0; j < labels.size(); ++j) {
      const double d = scores[j] >= in.thresholds[t] ? 1 : 0;
      positive += labels[j];
      decided += d;
      both += labels[j] * d;
    }
    const double records = static_cast<double>(labels.size());
    confusion[t] =
        Confusion{both, decided - both, positive - both, records - positive - decided + both};
  }
  std::optional<Ranked> ranked;
  for (ScoringMetric metric : in.metrics) {
    if (is_threshold_metric(metric)) {
      for (std::size_t t = 0; t < in.thresholds.size(); ++t) {
        MetricScore m = binary_threshold_metric(metric, confusion[t], in.thresholds[t]);
        m.threshold = in.thresholds[t];
        if (in.thresholds.size() > 1)
          m.name += "@" + detail::number_text(in.thresholds[t]);
        out.metrics.push_back(std::move(m));
      }
      continue;
    }
    if (metric != ScoringMetric::roc_auc && metric != ScoringMetric::pr_auc)
      continue;  // log_loss, brier: score_probabilities
    const Confusion& c = confusion.front();
    if (c.tp + c.fn == 0 || c.fp + c.tn == 0) {
      out.metrics.push_back(detail::not_judged(
          metric, "one class present (" + detail::number_text(c.tp + c.fn) + " positive, " +
                      detail::number_text(c.fp + c.tn) + " negative records): it needs both"));
      continue;
    }
    if (!ranked) {
      positives.resize(static_cast<std::size_t>(c.tp + c.fn));
      negatives.resize(static_cast<std::size_t>(c.fp + c.tn));
      std::size_t next_positive = 0, next_negative = 0;
      for (std::size_t j = 0; j < labels.size(); ++j) {
        if (labels[j] == 1)
          positives[next_positive++] = scores[j];
        else
          negatives[next_negative++] = scores[j];
      }
      ranked = rank(positives, negatives);
    }
    out.metrics.push_back(
        metric == ScoringMetric::roc_auc
            ? judged(metric, ranked->roc_auc, 1 / std::min(ranked->positives, ranked->negatives))
            : judged(metric, ranked->average_precision, ranked->ap_step));
  }
}

// ---- multiclass --------------------------------------------------------------------------

struct ClassCounts {
  double members = 0, predicted = 0, correct = 0;
};

// A bound on one record's change to a macro average over the present classes of
// value(correct, predicted, members): the largest change of one class losing a predicted record
// plus the largest of one gaining one, over the classes present.
template <class F>
double macro_move_bound(const std::vector<ClassCounts>& classes, double records, F value) {
  double lose = 0, gain = 0, present = 0;
  for (const ClassCounts& k : classes) {
    if (k.members == 0)
      continue;
    ++present;
    const double now = value(k.correct, k.predicted, k.members);
    auto change = [&](double correct, double predicted) {
      return std::abs(value(correct, predicted, k.members) - now);
    };
    if (k.correct >= 1)
      lose = std::max(lose, change(k.correct - 1, k.predicted - 1));
    if (k.predicted - k.correct >= 1)
      lose = std::max(lose, change(k.correct, k.predicted - 1));
    if (k.members - k.correct >= 1)
      gain = std::max(gain, change(k.correct + 1, k.predicted + 1));
    if ((records - k.members) - (k.predicted - k.correct) >= 1)
      gain = std::max(gain, change(k.correct, k.predicted + 1));
  }
  return (lose + gain) / present;
}

double class_precision(double correct, double predicted, double) {
  return predicted > 0 ? correct / predicted : 0;  // zero_division=0
}

double class_f1(double correct, double predicted, double members) {
  return 2 * correct / (predicted + members);
}

// `labels` and `predicted` (each record's argmax): the scope's, contiguous.
void score_multiclass(const ScoringInputs& in, const Predictions& p, std::span<const double> labels,
                      std::span<const std::uint32_t> predicted, const Scope& scope,
                      ScopeScores& out, std::vector<double>& positives,
                      std::vector<double>& negatives, std::vector<double>& columns) {
  std::vector<ClassCounts> classes(in.classes);
  for (std::size_t j = 0; j < labels.size(); ++j) {
    const auto y = static_cast<std::size_t>(labels[j]);
    classes[y].members += 1;
    classes[predicted[j]].predicted += 1;
    if (predicted[j] == y)
      classes[y].correct += 1;
  }
  const double records = static_cast<double>(scope.records.size());
  double present = 0, correct = 0, smallest = records;
  double recall_sum = 0, precision_sum = 0, f1_sum = 0;
  for (const ClassCounts& k : classes) {
    correct += k.correct;
    if (k.members == 0)
      continue;
    ++present;
    smallest = std::min(smallest, k.members);
    recall_sum += k.correct / k.members;
    precision_sum += class_precision(k.correct, k.predicted, k.members);
    f1_sum += class_f1(k.correct, k.predicted, k.members);
  }
  // The classes whose one-vs-rest AUCs are defined, ranked once for both AUCs.
  std::optional<std::vector<Ranked>> ranked;
  auto rank_classes = [&] {
    ranked.emplace();
    // The scope's scores column by column, its records ordered by label: class c's members are
    // [start[c], start[c + 1]) of every column, so each class's two sides are two copies.
    const std::size_t m = scope.records.size(), C = in.classes;
    std::vector<std::size_t> start(C + 1), next(C);
    for (std::size_t c = 0; c < C; ++c)
      start[c + 1] = start[c] + static_cast<std::size_t>(classes[c].members);
    std::copy(start.begin(), start.end() - 1, next.begin());
    columns.resize(m * C);
    for (std::size_t j = 0; j < m; ++j) {
      const std::size_t at = next[static_cast<std::size_t>(labels[j])]++;
      const double* row = p.values.data() + scope.records[j] * C;
      for (std::size_t c = 0; c < C; ++c)
        columns[c * m + at] = row[c];
    }
    for (std::size_t c = 0; c < C; ++c) {
      if (classes[c].members == 0 || classes[c].members == records)
        continue;
      const double* column = columns.data() + c * m;
      positives.assign(column + start[c], column + start[c + 1]);
      negatives.assign(column, column + start[c]);
      negatives.insert(negatives.end(), column + start[c + 1], column + m);
      ranked->push_back(rank(positives, negatives));
    }
  };
  const double balanced_step = 1 / (present * smallest);
  for (ScoringMetric metric : in.metrics) {
    switch (metric) {
      case ScoringMetric::accuracy:
        out.metrics.push_back(proportion(metric, correct, records));
        break;
      case ScoringMetric::balanced_accuracy:
      case ScoringMetric::recall:
        out.metrics.push_back(judged(metric, recall_sum / present, balanced_step));
        break;
      case ScoringMetric::precision:
        out.metrics.push_back(judged(metric, precision_sum / present,
                                     macro_move_bound(classes, records, class_precision)));
        break;
      case ScoringMetric::f1:
        out.metrics.push_back(
            judged(metric, f1_sum / present, macro_move_bound(classes, records, class_f1)));
        break;
      case ScoringMetric::roc_auc:
      case ScoringMetric::pr_auc: {
        if (!ranked)
          rank_classes();
        if (ranked->empty()) {
          out.metrics.push_back(detail::not_judged(
              metric, "one class present (" + detail::number_text(records) +
                          " records, all of one class): no class has both members and others"));
          break;
        }
        const double defined = static_cast<double>(ranked->size());
        double value = 0, member_step = 0, other_steps = 0, ap_steps = 0;
        for (const Ranked& r : *ranked) {
          value += metric == ScoringMetric::roc_auc ? r.roc_auc : r.average_precision;
          member_step = std::max(member_step, 1 / r.positives);
          other_steps += 1 / r.negatives;
          ap_steps += r.ap_step;
        }
        const double step = metric == ScoringMetric::roc_auc ? (member_step + other_steps) / defined
                                                             : ap_steps / defined;
        out.metrics.push_back(judged(metric, value / defined, step));
        break;
      }
      default:
        break;  // log_loss, brier: score_probabilities
    }
  }
}

// ---- regression --------------------------------------------------------------------------

// Regression's metrics are sums: every scope's in one pass over the records (and one more for
// R2's spread around each scope's mean), with no layout. Scopes in Scopes' order.
struct RegressionSums {
  Sum squares, absolutes, labels, spread;
  double lowest = std::numeric_limits<double>::infinity();
  double highest = -std::numeric_limits<double>::infinity();
  double records = 0;
};

Scores score_regression(const ScoringInputs& in, std::span<const double> scores) {
  std::vector<std::size_t> first_scope;  // per key: the scope index of its first segment
  std::size_t count = 1;
  for (const SegmentKey& key : in.segment_keys) {
    first_scope.push_back(count);
    count += key.keys.values.size();
  }
  std::vector<RegressionSums> sums(count);
  auto for_scopes = [&](std::size_t i, auto add) {
    add(sums[0]);
    for (std::size_t k = 0; k < first_scope.size(); ++k)
      add(sums[first_scope[k] + in.segment_keys[k].keys.codes[i]]);
  };
  for (std::size_t i = 0; i < in.records(); ++i) {
    const double label = in.labels[i], error = label - scores[i];
    for_scopes(i, [&](RegressionSums& s) {
      s.squares.add(error * error);
      s.absolutes.add(std::abs(error));
      s.labels.add(label);
      s.lowest = std::min(s.lowest, label);
      s.highest = std::max(s.highest, label);
      s.records += 1;
    });
  }
  std::vector<double> means(count);
  for (std::size_t c = 0; c < count; ++c)
    means[c] = sums[c].labels.value() / sums[c].records;
  if (std::find(in.metrics.begin(), in.metrics.end(), ScoringMetric::r2) != in.metrics.end()) {
    for (std::size_t i = 0; i < in.records(); ++i) {
      const double label = in.labels[i];
      for_scopes(i, [&](RegressionSums& s) {
        const double d = label - means[static_cast<std::size_t>(&s - sums.data())];
        s.spread.add(d * d);
      });
    }
  }
  Scores out;
  for (std::size_t c = 0; c < count; ++c) {
    const RegressionSums& s = sums[c];
    ScopeScores scope;
    scope.records = static_cast<std::size_t>(s.records);
    for (std::size_t k = first_scope.size(); k-- > 0;) {
      if (c >= first_scope[k]) {
        scope.segment = in.segment_keys[k].segment(static_cast<std::uint32_t>(c - first_scope[k]));
        break;
      }
    }
    for (ScoringMetric metric : in.metrics) {
      if (metric == ScoringMetric::rmse) {
        scope.metrics.push_back(judged(metric, std::sqrt(s.squares.value() / s.records), {}));
      } else if (metric == ScoringMetric::mae) {
        scope.metrics.push_back(judged(metric, s.absolutes.value() / s.records, {}));
      } else if (s.lowest == s.highest) {
        scope.metrics.push_back(detail::not_judged(metric, "the labels are constant (all " +
                                                               detail::number_text(s.lowest) +
                                                               "): R2 divides by their variance"));
      } else {
        scope.metrics.push_back(judged(metric, 1 - s.squares.value() / s.spread.value(), {}));
      }
    }
    if (c == 0)
      out.overall = std::move(scope);
    else
      out.segments.push_back(std::move(scope));
  }
  return out;
}

// Orders a scope's metrics as in.metrics (then by threshold): each task scorer appends its own.
void order_metrics(const ScoringInputs& in, ScopeScores& out) {
  std::stable_sort(
      out.metrics.begin(), out.metrics.end(), [&](const MetricScore& a, const MetricScore& b) {
        const auto at = [&](ScoringMetric m) {
          return std::find(in.metrics.begin(), in.metrics.end(), m) - in.metrics.begin();
        };
        return at(a.metric) < at(b.metric);
      });
}

Status invalid(const std::string& message) {
  return make_error(ErrorCode::invalid_argument, message);
}

}  // namespace

namespace detail {

Scopes::Scopes(const ScoringInputs& in) : whole_(in.records()) {
  std::iota(whole_.begin(), whole_.end(), 0u);
  scopes_.push_back(Scope{"", whole_, 0, 0});
  by_key_.reserve(in.segment_keys.size());
  for (const SegmentKey& key : in.segment_keys) {
    // Counting sort by segment: each segment's records stay ascending.
    std::vector<std::size_t> start(key.keys.values.size() + 1);
    for (std::uint32_t code : key.keys.codes)
      ++start[code + 1];
    std::partial_sum(start.begin(), start.end(), start.begin());
    std::vector<std::uint32_t>& grouped = by_key_.emplace_back(in.records());
    std::vector<std::uint32_t>& position = position_.emplace_back(in.records());
    std::vector<std::size_t> next(start.begin(), start.end() - 1);
    for (std::uint32_t i = 0; i < key.keys.codes.size(); ++i) {
      position[i] = static_cast<std::uint32_t>(next[key.keys.codes[i]]++);
      grouped[position[i]] = i;
    }
    for (std::uint32_t code = 0; code < key.keys.values.size(); ++code) {
      const std::size_t size = start[code + 1] - start[code];
      scopes_.push_back(Scope{key.segment(code),
                              std::span<const std::uint32_t>(grouped).subspan(start[code], size),
                              by_key_.size(), start[code]});
    }
  }
}

std::span<const double> record_scores(const ScoringInputs& in, const Predictions& p,
                                      std::vector<double>& storage) {
  if (in.task == ScoringTask::multiclass)
    return {};
  if (p.cols == 1)
    return p.values;
  storage.resize(in.records());
  for (std::size_t i = 0; i < storage.size(); ++i)
    storage[i] = p.values[i * p.cols + 1];
  return storage;
}

std::vector<std::uint32_t> argmax_classes(const Predictions& p) {
  std::vector<std::uint32_t> classes(p.rows);
  for (std::size_t i = 0; i < p.rows; ++i) {
    const double* row = p.values.data() + i * p.cols;
    classes[i] = static_cast<std::uint32_t>(std::max_element(row, row + p.cols) - row);
  }
  return classes;
}

MetricScore not_judged(ScoringMetric metric, std::string reason) {
  MetricScore m;
  m.metric = metric;
  m.name = to_string(metric);
  m.not_judged = std::move(reason);
  return m;
}

std::string number_text(double value, std::optional<int> digits) {
  char buffer[32];
  const auto [end, ec] = digits ? std::to_chars(buffer, buffer + sizeof buffer, value,
                                                std::chars_format::general, *digits)
                                : std::to_chars(buffer, buffer + sizeof buffer, value);
  return std::string(buffer, ec == std::errc() ? end : buffer);
}

}  // namespace detail

const MetricScore* ScopeScores::find(std::string_view metric_name) const {
  for (const MetricScore& m : metrics) {
    if (m.name == metric_name || (m.k != 0 && metric_name_at(m.metric, m.k) == metric_name))
      return &m;
  }
  return nullptr;
}

Status check_predictions(const ScoringInputs& in, const Predictions& p) {
  const std::size_t n = in.records();
  if (in.metrics.empty())
    return invalid("no metric to score");
  for (ScoringMetric metric : in.metrics) {
    if (!metric_applies(metric, in.task))
      return invalid(std::string(to_string(metric)) + " is not a metric of task " +
                     to_string(in.task));
  }
  for (const SegmentKey& key : in.segment_keys) {
    if (key.keys.records() != n)
      return invalid("segment key " + key.name + ": " + std::to_string(key.keys.records()) +
                     " values for " + std::to_string(n) + " labels");
  }
  switch (in.task) {
    case ScoringTask::binary:
      if (in.thresholds.empty())
        return invalid("task binary needs at least one threshold");
      break;
    case ScoringTask::multiclass:
      if (in.classes < 2)
        return invalid("task multiclass needs classes >= 2");
      break;
    case ScoringTask::ranking:
      if (in.k == 0 || !in.queries || in.queries->records() != n)
        return invalid("task ranking needs k >= 1 and one query id per record");
      break;
    case ScoringTask::regression:
      break;
  }
  for (std::size_t i = 0; i < n; ++i) {
    if (!is_label(in.task, in.classes, in.labels[i]))
      return invalid("label " + std::to_string(i) + ": must be " +
                     *label_violation(in.task, in.classes, in.labels[i]));
  }
  if (p.rows != n)
    return invalid("the predictions have " + std::to_string(p.rows) + " rows, the eval set " +
                   std::to_string(n) + " labels (one row per eval record)");
  const std::size_t want = in.task == ScoringTask::multiclass ? in.classes : 1;
  const bool fits = in.task == ScoringTask::binary ? p.cols == 1 || p.cols == 2 : p.cols == want;
  if (!fits)
    return invalid("the predictions have " + std::to_string(p.cols) + " column(s); task " +
                   to_string(in.task) + " needs " +
                   (in.task == ScoringTask::binary ? std::string("1 (the positive class's score) "
                                                                 "or 2 (column 1 is read)")
                                                   : std::to_string(want)));
  for (std::size_t i = 0; i < p.values.size(); ++i) {
    if (!std::isfinite(p.values[i]))
      return invalid(std::string(std::isnan(p.values[i]) ? "NaN" : "Inf") + " at row " +
                     std::to_string(i / p.cols) + ", column " + std::to_string(i % p.cols) +
                     ": predictions must be finite");
  }
  return Status::success();
}

Result<Scores> score(const ScoringInputs& in, const Predictions& predictions) {
  if (Status ok = check_predictions(in, predictions); !ok.ok())
    return ok.error();
  std::vector<double> storage;
  const std::span<const double> scores = detail::record_scores(in, predictions, storage);
  if (in.task == ScoringTask::regression)
    return score_regression(in, scores);
  const detail::Scopes scopes(in);
  const bool multiclass = in.task == ScoringTask::multiclass;
  const std::vector<std::uint32_t> predicted =
      multiclass ? detail::argmax_classes(predictions) : std::vector<std::uint32_t>{};
  const bool classification = multiclass || in.task == ScoringTask::binary;
  const bool wants_probabilities =
      classification && std::any_of(in.metrics.begin(), in.metrics.end(), [](ScoringMetric m) {
        return m == ScoringMetric::log_loss || m == ScoringMetric::brier;
      });
  const ProbabilityTerms terms =
      wants_probabilities ? probability_terms(in, predictions, scores) : ProbabilityTerms{};
  // Every per-record array a scope's pass reads, laid out scope by scope (ranking reads its
  // queries' records where they are; regression needs no layout).
  const bool ranking = in.task == ScoringTask::ranking;
  const auto labels = scopes.lay_out<double>(ranking ? std::span<const double>{} : in.labels);
  const auto scope_scores = scopes.lay_out<double>(ranking ? std::span<const double>{} : scores);
  const auto classes = scopes.lay_out<std::uint32_t>(predicted);
  const auto log_losses = scopes.lay_out<double>(terms.log_loss);
  const auto briers = scopes.lay_out<double>(terms.brier);
  // The AUCs' buffers, reused scope after scope.
  std::vector<double> positives, negatives, columns;
  Scores out;
  for (const Scope& scope : scopes.all()) {
    ScopeScores s;
    s.segment = scope.segment;
    s.records = scope.records.size();
    switch (in.task) {
      case ScoringTask::binary:
        score_binary(in, labels.of(scope), scope_scores.of(scope), s, positives, negatives);
        break;
      case ScoringTask::multiclass:
        score_multiclass(in, predictions, labels.of(scope), classes.of(scope), scope, s, positives,
                         negatives, columns);
        break;
      case ScoringTask::regression:
        break;  // above
      case ScoringTask::ranking:
        detail::score_ranking(in, scores, scope, s);
        break;
    }
    if (wants_probabilities)
      score_probabilities(in, predictions, scores, log_losses.of(scope), briers.of(scope), scope,
                          s);
    order_metrics(in, s);
    if (scope.segment.empty())
      out.overall = std::move(s);
    else
      out.segments.push_back(std::move(s));
  }
  return out;
}

}  // namespace reverify::scoring
