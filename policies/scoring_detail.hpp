#pragma once
// Internal to policies/scoring*.cpp (scoring.hpp is the contract): the scopes every score and
// parity is computed over, the per-record views of predictions, and the pieces one file computes
// for another (the ranking metrics and the ranking parity of one scope).

#include <algorithm>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "policies/scoring.hpp"

namespace reverify::scoring::detail {

// The records of the whole eval set or of one segment, ascending, and where its values lie in a
// ScopedValues layout.
struct Scope {
  std::string segment;  // "" for the whole eval set
  std::span<const std::uint32_t> records;
  std::size_t layout = 0;  // 0: the whole set in record order; k + 1: key k's records by segment
  std::size_t begin = 0;   // the scope's first position in its layout
};

// Per-record values (`width` per record) laid out scope by scope, so that each scope's values are
// contiguous: a segment's pass reads its own values only, instead of one cache line per record
// across the whole set. Made by Scopes::lay_out.
template <class T>
class ScopedValues {
 public:
  std::span<const T> of(const Scope& scope) const {
    const std::span<const T> all = scope.layout == 0 ? whole_ : by_key_[scope.layout - 1];
    return all.subspan(scope.begin * width_, scope.records.size() * width_);
  }

 private:
  friend class Scopes;
  std::span<const T> whole_;
  std::vector<std::vector<T>> by_key_;
  std::size_t width_ = 1;
};

// The whole set first, then every segment of every key (key by key, values in key order).
class Scopes {
 public:
  explicit Scopes(const ScoringInputs& in);
  Scopes(const Scopes&) = delete;
  Scopes& operator=(const Scopes&) = delete;

  const std::vector<Scope>& all() const { return scopes_; }

  // `per_record` laid out as the scopes; one sequential pass per key. It must outlive the result
  // (the whole set's values are not copied). Empty lays out nothing: ask it for no scope.
  template <class T>
  ScopedValues<T> lay_out(std::span<const T> per_record, std::size_t width = 1) const {
    ScopedValues<T> out;
    out.whole_ = per_record;
    out.width_ = width;
    if (per_record.empty())
      return out;
    for (const std::vector<std::uint32_t>& position : position_) {
      std::vector<T>& laid = out.by_key_.emplace_back(per_record.size());
      if (width == 1) {
        for (std::size_t i = 0; i < position.size(); ++i)
          laid[position[i]] = per_record[i];
      } else {
        for (std::size_t i = 0; i < position.size(); ++i)
          std::copy_n(per_record.begin() + i * width, width, laid.begin() + position[i] * width);
      }
    }
    return out;
  }

 private:
  std::vector<std::uint32_t> whole_;
  std::vector<std::vector<std::uint32_t>> by_key_;    // per key: its records grouped by segment
  std::vector<std::vector<std::uint32_t>> position_;  // per key: each record's place in by_key_
  std::vector<Scope> scopes_;
};

// One score per record: the positive class's (binary: 1-D, or column 1 of 2), the only column
// (regression, ranking); the predictions' own values when they are 1-D, else copied into
// `storage`. Empty for multiclass. REQUIRES: check_predictions passed.
std::span<const double> record_scores(const ScoringInputs& in, const Predictions& predictions,
                                      std::vector<double>& storage);

// Each row's argmax, the first column on ties.
std::vector<std::uint32_t> argmax_classes(const Predictions& predictions);

// The ranking metrics of one scope, appended to out.metrics in in.metrics order.
void score_ranking(const ScoringInputs& in, std::span<const double> scores, const Scope& scope,
                   ScopeScores& out);

// The ranking parity of one scope; every query's parity is appended to `queries` when given.
RankingParity ranking_parity(const ScoringInputs& in, std::span<const double> release,
                             std::span<const double> other, const Scope& scope,
                             std::vector<QueryParity>* queries);

// A metric that is undefined on the scope.
MetricScore not_judged(ScoringMetric metric, std::string reason);

// The shortest text that reads back as the same double ("0.5", "0.30000000000000004"), or the
// value to `digits` significant digits.
std::string number_text(double value, std::optional<int> digits = std::nullopt);

}  // namespace reverify::scoring::detail
