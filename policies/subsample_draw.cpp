#include "policies/subsample_draw.hpp"

#include "core/subsample_rule.hpp"

namespace reverify {
namespace {

std::string draw_text(const SubsampleDrawn& d) {
  return std::to_string(d.records) + " records (keys sha256 " + d.keys_sha256.substr(0, 12) + ")";
}

CheckResult draw_check(CheckOutcome outcome, std::string explanation) {
  CheckResult check;
  check.name = "input:subsample-draw";
  check.kind = CheckKind::input;
  check.outcome = outcome;
  check.explanation = "input:subsample-draw: " + std::move(explanation);
  return check;
}

}  // namespace

CheckResult subsample_draw_check(const SubsampleReference& reference,
                                 const std::optional<SubsampleDrawn>& reported,
                                 const std::optional<std::string>& keys_file) {
  const auto& recorded = reference.drawn;
  if (!reported || !keys_file) {
    return recorded ? draw_check(CheckOutcome::failed,
                                 "the rebuild reports no drawn records (result.json \"subsample\" "
                                 "and its keys file) where the release's subsample job trained "
                                 "on " +
                                     draw_text(*recorded) +
                                     ": the job no longer reports its draw, so it cannot be "
                                     "shown to train on the same records")
                    : draw_check(CheckOutcome::not_judged,
                                 "neither the release nor the rebuild reports the records drawn: "
                                 "not compared");
  }
  auto fraction = subsample_fraction_of(reference.fraction);
  if (!fraction.ok())
    return draw_check(CheckOutcome::failed, fraction.error().message);
  auto checked = check_keys_file(*keys_file, reported->keys_sha256, reference.salt, *fraction);
  if (!checked.ok()) {
    return draw_check(CheckOutcome::failed, "the rebuild's report of its draw is inconsistent: " +
                                                checked.error().message);
  }
  if (checked->outside > 0) {
    return draw_check(
        CheckOutcome::failed,
        std::to_string(checked->outside) + " of the " + std::to_string(checked->keys) +
            " keys the rebuild trained on are not in the subsample by the rule (\"" +
            checked->first_outside + "\" is out at fraction " + fraction->text + ", salt " +
            reference.salt + "): the job draws its subsample another way than the rule");
  }
  if (!recorded) {
    CheckResult c = draw_check(CheckOutcome::passed,
                               "the rebuild trained on " + draw_text(*reported) +
                                   ", every key by the rule; the release recorded no draw to "
                                   "compare with");
    c.informational = true;
    return c;
  }
  if (recorded->records != reported->records || recorded->keys_sha256 != reported->keys_sha256) {
    return draw_check(CheckOutcome::failed,
                      "the rebuild trained on " + draw_text(*reported) +
                          ", the release's subsample job on " + draw_text(*recorded) +
                          ": another set of records, though every key is by the rule: the job's "
                          "key (which field, its text form) or its data reading changed");
  }
  CheckResult c =
      draw_check(CheckOutcome::passed, "the rebuild trained on the release's " +
                                           draw_text(*recorded) + ", drawn by the rule");
  c.observed = static_cast<double>(reported->records);
  c.reference = static_cast<double>(recorded->records);
  return c;
}

Verdict verdict_for_subsample_draw(CheckResult failed_check) {
  Verdict verdict;
  verdict.cls = VerdictClass::failed_input_drift;
  verdict.explanation = failed_check.explanation +
                        "; no metric was judged: a model trained on other records than the "
                        "release's subsample is not the one its reference describes";
  verdict.checks.push_back(std::move(failed_check));
  return verdict;
}

}  // namespace reverify
