// parity(): what changes between the release's predictions and another run's, record by record,
// for the whole eval set and every segment (scoring.hpp).

#include "policies/scoring.hpp"
#include "policies/scoring_detail.hpp"

namespace reverify::scoring {
namespace {

using detail::Scope;

// Counts one record into the class shifts: its true class, and the class each run predicts.
void count_shift(std::vector<ClassShift>& classes, std::size_t truth, std::size_t before,
                 std::size_t after) {
  ++classes[before].release;
  ++classes[after].other;
  ++classes[truth].members;
  if (before == after)
    return;
  ++classes[before].left;
  ++classes[after].entered;
  ClassShift& row = classes[truth];
  ++row.changed;
  ++row.moved_to[after];
  if (after == truth)
    ++row.became_correct;
  else if (before == truth)
    ++row.became_wrong;
}

std::vector<ClassShift> empty_shifts(std::size_t classes) {
  std::vector<ClassShift> out(classes);
  for (std::size_t c = 0; c < classes; ++c)
    out[c].cls = c;
  return out;
}

std::vector<Crossings> threshold_crossings(const ScoringInputs& in, std::span<const double> release,
                                           std::span<const double> other, const Scope& scope) {
  const bool binary = in.task == ScoringTask::binary;
  std::vector<Crossings> out;
  for (double threshold : in.thresholds) {
    Crossings c;
    c.threshold = threshold;
    if (binary)
      c.classes = empty_shifts(2);
    for (std::uint32_t i : scope.records) {
      const bool before = release[i] >= threshold, after = other[i] >= threshold;
      if (binary)
        count_shift(c.classes, in.labels[i] == 1, before, after);
      if (before == after)
        continue;
      ++c.changed;
      ++(after ? c.became_positive : c.became_negative);
    }
    if (binary) {
      // A changed binary decision is right on exactly one side.
      c.became_correct = c.classes[0].became_correct + c.classes[1].became_correct;
      c.became_wrong = c.classes[0].became_wrong + c.classes[1].became_wrong;
    }
    out.push_back(std::move(c));
  }
  return out;
}

void class_shifts(const ScoringInputs& in, std::span<const std::uint32_t> release,
                  std::span<const std::uint32_t> other, const Scope& scope, ScopeParity& out) {
  out.classes = empty_shifts(in.classes);
  std::size_t changed = 0;
  for (std::uint32_t i : scope.records) {
    count_shift(out.classes, static_cast<std::size_t>(in.labels[i]), release[i], other[i]);
    changed += release[i] != other[i];
  }
  out.argmax_changed = changed;
}

}  // namespace

Result<Parity> parity(const ScoringInputs& in, const Predictions& release,
                      const Predictions& other) {
  for (const auto& [which, predictions] : {std::pair{"release", &release}, {"other", &other}}) {
    if (Status ok = check_predictions(in, *predictions); !ok.ok())
      return make_error(ok.error().code,
                        std::string("the ") + which + " predictions: " + ok.error().message);
  }
  if (release.cols != other.cols)
    return make_error(ErrorCode::invalid_argument,
                      "the predictions differ in shape: the release's have " +
                          std::to_string(release.cols) + " column(s), the other's " +
                          std::to_string(other.cols));
  const detail::Scopes scopes(in);
  const bool multiclass = in.task == ScoringTask::multiclass;
  std::vector<double> release_storage, other_storage;
  const auto release_scores = detail::record_scores(in, release, release_storage);
  const auto other_scores = detail::record_scores(in, other, other_storage);
  const std::vector<std::uint32_t> release_classes =
      multiclass ? detail::argmax_classes(release) : std::vector<std::uint32_t>{};
  const std::vector<std::uint32_t> other_classes =
      multiclass ? detail::argmax_classes(other) : std::vector<std::uint32_t>{};
  Parity out;
  for (const Scope& scope : scopes.all()) {
    ScopeParity p;
    p.segment = scope.segment;
    p.records = scope.records.size();
    switch (in.task) {
      case ScoringTask::binary:
      case ScoringTask::regression:
        p.crossings = threshold_crossings(in, release_scores, other_scores, scope);
        break;
      case ScoringTask::multiclass:
        class_shifts(in, release_classes, other_classes, scope, p);
        break;
      case ScoringTask::ranking:
        p.ranking = detail::ranking_parity(in, release_scores, other_scores, scope,
                                           scope.segment.empty() ? &out.queries : nullptr);
        break;
    }
    if (scope.segment.empty())
      out.overall = std::move(p);
    else
      out.segments.push_back(std::move(p));
  }
  return out;
}

}  // namespace reverify::scoring
