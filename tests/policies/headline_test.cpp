#include <doctest/doctest.h>

#include <regex>

#include "core/enum_names.hpp"
#include "policies/headline.hpp"
#include "tests/support/check_fixture.hpp"

using namespace reverify;
using reverify::test::banded_check;

namespace {

constexpr CheckKind kKinds[] = {CheckKind::input,        CheckKind::primary, CheckKind::segment,
                                CheckKind::distribution, CheckKind::steps,   CheckKind::weights,
                                CheckKind::job,          CheckKind::parity,  CheckKind::same_seed};
constexpr CheckOutcome kOutcomes[] = {CheckOutcome::passed, CheckOutcome::failed,
                                      CheckOutcome::uncalibrated, CheckOutcome::not_judged};

std::string name_of(CheckKind kind) {
  switch (kind) {
    case CheckKind::segment:
      return "segment:digit=8:accuracy";
    case CheckKind::distribution:
      return "distribution:ks";
    case CheckKind::input:
      return "input:dataset";
    case CheckKind::weights:
      return "weights:tensor_sha256";
    default:
      return std::string(to_string(kind)) + ":x";
  }
}

CheckResult check(CheckKind kind, CheckOutcome outcome, bool informational = false) {
  CheckResult c =
      banded_check(name_of(kind), kind, outcome, outcome == CheckOutcome::failed ? 0.9 : 0.96,
                   0.961, CheckBand{0.95, 0.97});
  c.margin = outcome == CheckOutcome::failed ? -0.05 : 0.01;
  c.informational = informational;
  if (kind == CheckKind::weights) {
    c.evidence["recorded"] = std::string(64, 'a');
    c.evidence["rebuilt"] = std::string(64, 'b');
    c.explanation = "weights: tensor hash differs: rebuilt bbbb… (`reverify diff`)";
  }
  return c;
}

VerdictClass class_of(const std::vector<CheckResult>& checks) {
  bool model = false, distribution = false, input = false, uncalibrated = false;
  for (const auto& c : checks) {
    if (!c.decides())
      continue;
    if (c.outcome == CheckOutcome::failed) {
      input = input || c.kind == CheckKind::input;
      distribution = distribution || c.kind == CheckKind::distribution;
      model = model || (c.kind != CheckKind::distribution && c.kind != CheckKind::input);
    }
    uncalibrated = uncalibrated || c.outcome == CheckOutcome::uncalibrated;
  }
  if (input)
    return VerdictClass::failed_input_drift;
  if (model)
    return VerdictClass::failed_out_of_tolerance;
  if (distribution)
    return VerdictClass::failed_distribution_shift;
  return uncalibrated ? VerdictClass::uncalibrated : VerdictClass::passed;
}

Verdict verdict_of(std::vector<CheckResult> checks) {
  Verdict v;
  v.cls = class_of(checks);
  v.checks = std::move(checks);
  return v;
}

// Plain words for a person: no Markdown, no commands, no hashes.
void check_plain(const std::string& headline) {
  INFO(headline);
  CHECK_FALSE(headline.empty());
  CHECK(headline.back() == '.');
  CHECK(headline.find('`') == std::string::npos);
  CHECK(headline.find("reverify ") == std::string::npos);
  CHECK_FALSE(std::regex_search(headline, std::regex("[0-9a-f]{12}")));
}

}  // namespace

TEST_CASE("every kind, outcome and note flag: failures lead, notes never count as failures") {
  for (CheckKind kind : kKinds) {
    for (CheckOutcome outcome : kOutcomes) {
      for (bool informational : {false, true}) {
        CAPTURE(to_string(kind));
        CAPTURE(to_string(outcome));
        CAPTURE(informational);
        // The check under test after 20 passed ones, as it would be row 21 of 21.
        std::vector<CheckResult> checks;
        for (int i = 0; i < 20; ++i)
          checks.push_back(check(CheckKind::segment, CheckOutcome::passed));
        checks.push_back(check(kind, outcome, informational));
        const Verdict v = verdict_of(checks);
        const auto order = reading_order(v);
        REQUIRE(order.size() == checks.size());
        const CheckCounts counts = count_checks(v);
        const std::string headline = verdict_headline(v);
        check_plain(headline);
        const bool failure = !informational && outcome == CheckOutcome::failed;
        CHECK(reading_of(v, checks.back()) ==
              (informational                           ? CheckReading::note
               : outcome == CheckOutcome::failed       ? CheckReading::failure
               : outcome == CheckOutcome::uncalibrated ? CheckReading::uncalibrated
               : outcome == CheckOutcome::not_judged   ? CheckReading::not_judged
                                                       : CheckReading::passed));
        CHECK(counts.failed == (failure ? 1 : 0));
        CHECK(counts.notes == (informational ? 1 : 0));
        CHECK(counts.notes_outside == (informational && outcome == CheckOutcome::failed ? 1 : 0));
        CHECK(counts.failed + counts.uncalibrated + counts.passed + counts.not_judged +
                  counts.notes ==
              checks.size());
        // "An input moved" only when an input check failed.
        const bool says_input = headline.find("nput") != std::string::npos &&
                                headline.find("moved since release") != std::string::npos;
        CHECK(says_input == (failure && kind == CheckKind::input));
        if (failure || (!informational && outcome == CheckOutcome::uncalibrated)) {
          CHECK(order.front()->name == checks.back().name);  // never row 21 of 21
        }
        if (failure) {
          CHECK(headline.find("Verified") == std::string::npos);
          CHECK(headline.find("Not judged") == std::string::npos);
        }
        if (informational && outcome == CheckOutcome::failed) {
          // A note outside its band is said, after the verdict, and never as the cause.
          CHECK(headline.rfind("Verified", 0) == 0);
          CHECK(headline.find("A note, which decides nothing: " + checks.back().name) !=
                std::string::npos);
        }
        if (!failure && !informational && outcome == CheckOutcome::uncalibrated)
          CHECK(headline.rfind("Not judged yet: 1 of 21 deciding checks", 0) == 0);
        if (!failure && outcome != CheckOutcome::uncalibrated)
          CHECK(headline.rfind("Verified: all ", 0) == 0);
      }
    }
  }
}

TEST_CASE("failures in the order of what they mean: inputs, metrics, then distribution") {
  for (CheckKind a : kKinds) {
    for (CheckKind b : kKinds) {
      if (a == b)
        continue;
      const Verdict v =
          verdict_of({check(a, CheckOutcome::failed), check(b, CheckOutcome::failed)});
      const auto order = reading_order(v);
      CAPTURE(to_string(a));
      CAPTURE(to_string(b));
      if (a == CheckKind::input)
        CHECK(order[0]->kind == CheckKind::input);
      if (a == CheckKind::distribution)
        CHECK(order[1]->kind == CheckKind::distribution);
      if (a == CheckKind::primary && b != CheckKind::input)
        CHECK(order[0]->kind == CheckKind::primary);
      const std::string headline = verdict_headline(v);
      check_plain(headline);
      CHECK(headline.find("Also failed: " + order[1]->name + ".") != std::string::npos);
    }
  }
}

TEST_CASE("within a kind, the failure worst against its band leads") {
  CheckResult slight = check(CheckKind::segment, CheckOutcome::failed);
  slight.name = "segment:digit=1:accuracy";
  slight.margin = -0.001;
  CheckResult far = check(CheckKind::segment, CheckOutcome::failed);
  far.name = "segment:digit=8:accuracy";
  far.margin = -0.02;
  const Verdict v = verdict_of({slight, far});
  CHECK(reading_order(v)[0]->name == "segment:digit=8:accuracy");
  CHECK(verdict_headline(v) ==
        "The rebuilt model's accuracy on segment digit=8 is 0.9, outside its accepted band "
        "[0.95, 0.97] (reference 0.961). Also failed: segment:digit=1:accuracy.");
}

TEST_CASE(
    "the demo's failed variant: the weights lead, the steps note follows, counted as a note") {
  std::vector<CheckResult> checks;
  checks.push_back(check(CheckKind::primary, CheckOutcome::passed));
  for (int i = 0; i < 19; ++i)
    checks.push_back(check(CheckKind::segment, CheckOutcome::passed));
  checks.push_back(check(CheckKind::steps, CheckOutcome::failed, true));
  checks.back().name = "steps:loss";
  checks.push_back(check(CheckKind::weights, CheckOutcome::failed));
  const Verdict v = verdict_of(checks);
  REQUIRE(v.cls == VerdictClass::failed_out_of_tolerance);
  const auto order = reading_order(v);
  CHECK(order[0]->name == "weights:tensor_sha256");
  CHECK(order[1]->name == "steps:loss");
  CHECK(verdict_headline(v) ==
        "The rebuilt weights differ from the released ones, and level bitwise asks for "
        "identical tensors. A note, which decides nothing: steps:loss is outside its band.");
  CHECK(counts_text(count_checks(v)) == "1 failed, 20 passed, 1 note (1 outside its band)");
}

TEST_CASE("several inputs moved are named together; a distribution bound reads as a bound") {
  CheckResult data = check(CheckKind::input, CheckOutcome::failed);
  CheckResult lock = check(CheckKind::input, CheckOutcome::failed);
  lock.name = "input:lockfile";
  CHECK(verdict_headline(verdict_of({data, lock})) ==
        "Inputs moved since release (dataset, lockfile), so nothing was rebuilt.");
  CheckResult ks = banded_check("distribution:ks", CheckKind::distribution, CheckOutcome::failed,
                                0.12, 0.0, CheckBand{std::nullopt, 0.0807});
  CHECK(verdict_headline(verdict_of({ks})) ==
        "The rebuild's predictions moved: the ks statistic is 0.12, above its bound ≤ 0.0807.");
}

TEST_CASE("a level that enforces nothing reads every check as a note") {
  Verdict v = verdict_of({check(CheckKind::primary, CheckOutcome::failed)});
  v.cls = VerdictClass::passed;  // level rerunnable
  CHECK(reading_of(v, v.checks[0]) == CheckReading::note);
  CHECK(count_checks(v).failed == 0);
  CHECK(verdict_headline(v) ==
        "Rebuilt: this level reports its checks without enforcing them (1 note (1 outside its "
        "band)).");
}

TEST_CASE("errors say whose fault in plain words") {
  for (VerdictClass cls :
       {VerdictClass::error_manifest_invalid, VerdictClass::error_provision,
        VerdictClass::error_job, VerdictClass::error_runner_lost, VerdictClass::error_infra}) {
    Verdict v;
    v.cls = cls;
    v.explanation = "docker pull sha256:0123456789abcdef0123: `denied`";
    CAPTURE(to_string(cls));
    check_plain(verdict_headline(v));
  }
  Verdict job;
  job.cls = VerdictClass::error_job;
  job.job_exit_status = 3;
  CHECK(verdict_headline(job).find("exit status 3") != std::string::npos);
  // Exited 0 with outputs the contract refuses: what it wrote wrong, never "did not finish".
  Verdict outputs;
  outputs.cls = VerdictClass::error_job;
  outputs.job_output_fault =
      "result.json: 83886080 bytes, over the contract's limit of 16777216 bytes";
  CHECK(verdict_headline(outputs) ==
        "The job finished but wrote outputs the rebuild contract refuses (result.json: 83886080 "
        "bytes, over the contract's limit of 16777216 bytes), so the model was not judged.");
}
