#pragma once
// Scoring: every metric of a set of predictions, computed by reverify itself from the frozen eval
// set's labels (core/scoring_inputs.hpp), for the whole eval set and for every segment, with the
// exact count of each proportion and each metric's step; and the parity of two prediction sets of
// the same eval set (the release's and another run's). Pure: no I/O, no clock, no threads.
// Values match scikit-learn 1.2 (Debian 12's) where it has the metric, to a relative 1e-9
// (tests/policies/scoring_vectors, made by make_scoring_vectors.py).
//
// Predictions: one row per eval record, in eval-set order (core/predictions.hpp).
// - binary: 1-D scores of the positive class, or 2-D with 2 columns (column 1 is the positive
//   class's, column 0 is not read); the decision at threshold t is score >= t.
// - multiclass: 2-D, one column per class; the predicted class is the row's argmax, the first
//   column on ties (as policies/stats.hpp).
// - regression, ranking: 1-D, or 2-D with one column.
//
// Metrics, with their scikit-learn equivalent (y: labels, s: scores, d: decisions):
// classification (binary: at each threshold; multiclass: on the argmax)
// - accuracy: correct / records (accuracy_score).
// - balanced_accuracy: the mean recall over the classes present in the scope's labels
//   (balanced_accuracy_score).
// - precision, recall, f1: binary: of the positive class, TP/(TP+FP), TP/(TP+FN), 2TP/(2TP+FP+FN)
//   (precision_score, recall_score, f1_score). Multiclass: the macro average over the classes
//   present in the scope's labels (each class's precision, recall and F1 one-vs-rest), where a
//   present class that is never predicted has precision 0 and F1 0: precision_score(y, d,
//   labels=<classes present>, average="macro", zero_division=0), and the same for recall and f1
//   (macro recall is then balanced_accuracy).
// - roc_auc: binary: the share of (positive, negative) pairs the scores order right, a tie
//   counting half (roc_auc_score). Multiclass: the mean over the classes c that the scope holds
//   both records of and records not of, of the binary AUC of (y == c, s[:, c]); with every class
//   in the scope that is roc_auc_score(y, s, multi_class="ovr", average="macro"), which also
//   insists that rows sum to 1 (this does not: AUC only ranks).
// - pr_auc: average precision, the sum over the distinct scores t, descending, of
//   (R(t) - R(t_previous)) * P(t), where R and P are recall and precision of "score >= t"
//   (average_precision_score); multiclass: the same one-vs-rest mean as roc_auc.
// - log_loss: the mean of -ln p(true class), each probability first clipped to [eps, 1 - eps]
//   (eps = 2^-52) and each row then divided by its sum, as scikit-learn 1.2's
//   log_loss(y, p, labels=range(C)) does (binary: the row [1 - s, s]).
// - brier: binary: mean (s - y)^2 (brier_score_loss); multiclass: the mean over records of the
//   sum over classes of (p_c - [y == c])^2, not halved (no scikit-learn function).
//   log_loss and brier need probabilities: the positive class's score in [0, 1] (binary), or
//   every class score in [0, 1] and the row's sum within kProbabilitySumTolerance of 1
//   (multiclass); a scope holding any other row does not judge them (a row of logits is no
//   probability, and renormalising it would hide that).
// regression
// - rmse: sqrt(mean (y - s)^2) (mean_squared_error(squared=False)); mae: mean |y - s|
//   (mean_absolute_error); r2: 1 - sum (y - s)^2 / sum (y - mean(y))^2 (r2_score).
// ranking (per query: the scope's records with that query id; labels are relevance grades, a
// record is relevant when its grade is > 0; tied scores are averaged over their orders, as
// scikit-learn's ndcg_score does)
// - ndcg@k: the mean over queries of ndcg_score([y_q], [s_q], k=k) (gain y, discount
//   1/log2(rank + 1)).
// - mrr: the mean over queries of 1 / the rank of the query's first relevant record.
// - precision@k: the relevant records among each query's top min(k, n_q), summed over queries,
//   divided by the sum of min(k, n_q) (with a tie across the cut-off, the expected number).
//   A query of one record (it has no order to judge, and ndcg_score refuses it) and a query
//   without a relevant record (no ideal order to normalise by) are left out of all three and
//   counted in ScopeScores::queries.
//
// Count (numerator / denominator == value), only for the proportions of records: accuracy
// (correct / records), binary precision (TP / (TP + FP)), binary recall (TP / positives) and
// precision@k (relevant in the top k / slots; its numerator is fractional only where tied scores
// straddle a cut-off). No other metric is one proportion of records (an AUC counts pairs, which
// are not independent), so none has a count.
//
// Step: the largest change that moving one record's prediction can make to the metric, at the
// scope's current counts; the verdict engine keeps every band at least that wide, so that no band
// is +-0 (a segment scored 42/43 by every seed run moves in steps of 1/43):
// - accuracy: 1/records; binary recall: 1/positives; balanced_accuracy and multiclass recall:
//   1/(C' * the smallest class count), C' the classes present;
// - binary precision and f1: exactly, the largest change among the four moves of one record
//   (TP <-> FN, FP <-> TN) that the counts allow; multiclass precision and f1: a bound, the largest
//   change of one class's value when it loses one predicted record plus the largest when one
//   gains one, over C';
// - roc_auc: 1/min(positives, negatives) (multiclass: (max over classes of 1/members + the sum
//   over classes of 1/non-members) / C'); pr_auc: a bound, (1 + the sum over positives of 1/r) /
//   positives, r the first rank of the positive's tie group (multiclass: the sum of the classes'
//   bounds / C'); both at most 1;
// - ndcg@k and mrr: 1/queries judged (each query's value is in [0, 1]); precision@k: 1/slots;
// - log_loss, brier, rmse, mae, r2: none (continuous).
//
// Not judged: a metric that is undefined on a scope has no value, no count and no step, and says
// why instead: ROC AUC or PR AUC with one class present (multiclass: no class with members and
// non-members), precision with no record predicted positive, recall with no positive record, F1
// with neither, R2 with constant labels, log loss and Brier on scores that are not
// probabilities, a ranking metric with no query judged. Never a silent number or a NaN.
//
// Parity (the release's predictions against another run's, the same eval set and shape), for the
// whole set and every segment:
// - binary and regression, at each threshold: the records whose decision (score >= t) differs,
//   split into those that became positive and negative, and (binary) those that became correct
//   and wrong;
// - multiclass: the records whose argmax class differs and, per class, the records each run
//   predicts as that class, those that left it and entered it, and the records of that true class
//   whose prediction changed, became correct and became wrong, with the classes they moved into
//   (the confusion matrix's shift, per class); binary: the same per true class at each threshold,
//   the decision being the predicted class;
// - ranking, per query of at least 2 records: the top-k overlap (records in both top min(k, n_q)
//   sets / min(k, n_q); each top k ordered by score descending, then by eval-set order), whether
//   the top k as an ordered list changed (a set change, or the same records in another order),
//   and Kendall's tau-b of the two score lists (scipy.stats.kendalltau; undefined, and left out,
//   when either run's scores in the query are all equal); summarised per scope as the mean
//   overlap, the queries whose top-k set changed, those whose top-k order changed and the mean
//   tau. Parity::queries has every query of the whole set.

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/manifest.hpp"
#include "core/predictions.hpp"
#include "core/result.hpp"
#include "core/scoring_inputs.hpp"

namespace reverify::scoring {

struct Count {
  double numerator = 0;
  double denominator = 0;

  bool operator==(const Count&) const = default;
};

struct MetricScore {
  ScoringMetric metric = ScoringMetric::accuracy;
  // binary accuracy, balanced_accuracy, precision, recall, f1: the operating threshold
  std::optional<double> threshold;
  // the metric's name ("f1", "ndcg@k"), "@<threshold>" added when the spec has more than one
  // threshold ("precision@0.3")
  std::string name;
  std::optional<double> value;  // absent: not judged
  std::string not_judged;       // why, when value is absent
  std::optional<Count> count;
  std::optional<double> step;
  std::size_t k = 0;  // ndcg@k, precision@k: the cut-off (0 for every other metric)

  bool judged() const { return value.has_value(); }
};

// Ranking: how many of the scope's queries each ranking metric judged, and why the others not.
struct QueryCounts {
  std::size_t judged = 0;
  std::size_t one_record = 0;
  std::size_t no_relevant = 0;
};

struct ScopeScores {
  std::string segment;  // "" for the whole eval set, else "<key>=<value>" ("digit=3")
  std::size_t records = 0;
  std::vector<MetricScore> metrics;    // in ScoringInputs::metrics order, then by threshold
  std::optional<QueryCounts> queries;  // ranking

  // By MetricScore::name, or for a metric with a cut-off by its name with k written out as jobs
  // name it ("ndcg@10" finds ndcg@k when k is 10; core/manifest.hpp metric_spelling_to_use).
  const MetricScore* find(std::string_view name) const;
};

struct Scores {
  ScopeScores overall;
  std::vector<ScopeScores> segments;  // key by key in the spec's order, values in key order
};

// Errors (ErrorCode::invalid_argument) that name what does not fit: the rows against the labels,
// the columns against the task (binary: 1 or 2; multiclass: classes; others: 1), a NaN or
// infinite score with its row and column, and inputs that break ScoringInputs' own invariants.
Status check_predictions(const ScoringInputs& in, const Predictions& predictions);

Result<Scores> score(const ScoringInputs& in, const Predictions& predictions);

// One class's row of the confusion matrix and how it shifted between the release's predictions
// and the other run's (multiclass: the argmax; binary: the decision at one threshold, class 1
// positive).
struct ClassShift {
  std::size_t cls = 0;
  std::size_t release = 0;         // records the release predicts as cls
  std::size_t other = 0;           // records the other run predicts as cls
  std::size_t left = 0;            // predicted cls by the release, not by the other run
  std::size_t entered = 0;         // predicted cls by the other run, not by the release
  std::size_t members = 0;         // records of true class cls
  std::size_t changed = 0;         // records of true class cls whose predicted class changed
  std::size_t became_correct = 0;  // records of true class cls now predicted right
  std::size_t became_wrong = 0;    // records of true class cls no longer predicted right
  // the changed records of true class cls by the class the other run predicts (the confusion
  // matrix cells they moved into); sparse: only classes some record moved into
  std::map<std::size_t, std::size_t> moved_to;
};

struct Crossings {
  double threshold = 0;
  std::size_t changed = 0;  // decision differs
  std::size_t became_positive = 0;
  std::size_t became_negative = 0;
  std::optional<std::size_t> became_correct;  // binary (regression labels are not decisions)
  std::optional<std::size_t> became_wrong;
  std::vector<ClassShift> classes;  // binary: true classes 0 and 1; regression: none
};

struct RankingParity {
  std::size_t k = 0;                    // the cut-off of the top k compared (the spec's k)
  std::size_t queries = 0;              // of at least 2 records
  std::size_t top_k_changed = 0;        // whose top-k set differs
  std::size_t top_k_order_changed = 0;  // whose top k, in order, differs (a changed set included)
  std::optional<double> mean_overlap;   // absent when no query has 2 records
  std::size_t tau_queries = 0;          // where tau is defined
  std::size_t largest_tau_query = 0;    // the most records of a query where tau is defined
  std::optional<double> mean_tau;       // absent when it is defined for none
};

struct ScopeParity {
  std::string segment;  // "" for the whole eval set
  std::size_t records = 0;
  std::vector<Crossings> crossings;           // binary, regression: one per threshold
  std::optional<std::size_t> argmax_changed;  // multiclass
  std::vector<ClassShift> classes;            // multiclass: one per class
  std::optional<RankingParity> ranking;       // ranking
};

struct QueryParity {
  std::string query;
  std::size_t records = 0;
  double overlap = 1;
  bool top_k_changed = false;
  bool top_k_order_changed = false;
  std::optional<double> tau;
};

struct Parity {
  ScopeParity overall;
  std::vector<ScopeParity> segments;  // as Scores::segments
  std::vector<QueryParity> queries;   // ranking: every query of >= 2 records, in query order
};

// REQUIRES nothing: both prediction sets are checked (check_predictions) and must have one shape.
Result<Parity> parity(const ScoringInputs& in, const Predictions& release,
                      const Predictions& other);

}  // namespace reverify::scoring
