#include <doctest/doctest.h>

#include "pager/page_builder.hpp"

using namespace reverify;

namespace {

CheckResult check(std::string name, CheckOutcome outcome, double observed, double reference,
                  double tolerance) {
  CheckResult c;
  c.name = std::move(name);
  c.outcome = outcome;
  c.observed = observed;
  c.reference = reference;
  c.band = CheckBand{reference - tolerance, reference + tolerance};
  c.margin = tolerance - std::abs(observed - reference);
  c.explanation = c.name + " explained";
  return c;
}

PageInput failing_input() {
  PageInput in;
  in.model = "digits-mlp";
  in.version = "2026.11.1";
  in.owner = "team-vision";
  in.verdict.cls = VerdictClass::failed_out_of_tolerance;
  in.verdict.explanation = "primary:accuracy left its band";
  in.verdict.checks = {check("primary:accuracy", CheckOutcome::failed, 0.9412, 0.9611, 0.0031),
                       check("segment:digit=8:accuracy", CheckOutcome::passed, 0.93, 0.93, 0.01)};
  in.log_tail = "epoch 3 loss 0.41\n";
  in.public_url = "https://reverify.example";
  in.verification_id = 42;
  in.created_at = "2026-11-29T08:00:00Z";
  return in;
}

}  // namespace

TEST_CASE("a failed verdict triggers a page that names the model's fault and the failed check") {
  PageEvent event = build_page(failing_input());
  CHECK(event.action == PageAction::trigger);
  CHECK(event.dedup_key == "reverify/digits-mlp/2026.11.1");
  CHECK(event.cls == VerdictClass::failed_out_of_tolerance);
  CHECK(event.summary ==
        "digits-mlp@2026.11.1 failed:out-of-tolerance — The rebuilt model's accuracy is 0.9412, "
        "outside its accepted band [0.958, 0.9642] (reference 0.9611). Checks: 1 failed, 1 "
        "passed.");
  CHECK(event.details["fault"] == "model");
  CHECK(event.fault == PageFault::model);
  REQUIRE(event.details["failed_checks"].size() == 1);
  CHECK(event.details["failed_checks"][0]["name"] == "primary:accuracy");
  CHECK(event.details["verdict"]["checks"].size() == 2);
  CHECK(event.details["log_tail"] == "epoch 3 loss 0.41\n");
  CHECK(event.details["verification_id"] == 42);
  REQUIRE(event.links.size() == 3);
  CHECK(event.links[0].href == "https://reverify.example/verifications/42");
  CHECK(event.links[1].href == "https://reverify.example/models/digits-mlp/2026.11.1");
  CHECK(event.links[2].href == "https://reverify.example/");
  CHECK(event.created_at == "2026-11-29T08:00:00Z");
}

TEST_CASE("input drift names the moved input and the changed files") {
  PageInput in = failing_input();
  in.verdict.cls = VerdictClass::failed_input_drift;
  CheckResult drift;
  drift.name = "input:dataset";
  drift.kind = CheckKind::input;
  drift.outcome = CheckOutcome::failed;
  drift.explanation = "dataset root hash differs";
  in.verdict.checks = {drift};
  in.moved_inputs = {{"dataset",
                      std::string(64, 'a'),
                      std::string(64, 'b'),
                      {"shard-1.csv", "shard-2.csv", "shard-3.csv", "shard-4.csv"}}};
  PageEvent event = build_page(in);
  CHECK(event.summary ==
        "digits-mlp@2026.11.1 failed:input-drift — An input moved since release (dataset), so "
        "nothing was rebuilt. Checks: 1 failed. dataset moved: recorded aaaaaaaaaaaa…, now "
        "bbbbbbbbbbbb…; changed shard-1.csv, shard-2.csv, shard-3.csv +1 more.");
  CHECK(event.details["moved_inputs"][0]["changed"].size() == 4);
}

TEST_CASE("an error verdict is the system's fault") {
  PageInput in = failing_input();
  in.verdict.cls = VerdictClass::error_job;
  in.verdict.checks.clear();
  in.verdict.explanation = "the job exited with status 137 (killed: out of memory?)";
  PageEvent event = build_page(in);
  CHECK(event.action == PageAction::trigger);
  CHECK(event.details["fault"] == "system");
  CHECK(event.summary ==
        "digits-mlp@2026.11.1 error:job — The job did not finish (killed or timed out), so the "
        "model was not judged. the job exited with status 137 (killed: out of memory?)");
}

TEST_CASE(
    "error:infra says the platform failed under the job; a job at its own bound is the job's") {
  PageInput in = failing_input();
  in.verdict.checks.clear();
  in.verdict.cls = VerdictClass::error_infra;
  in.verdict.explanation =
      "the platform failed under the job, not the job itself: the file system of /var/lib/reverify "
      "was full while the job ran; the job exited with status 1";
  PageEvent event = build_page(in);
  CHECK(event.action == PageAction::trigger);
  CHECK(event.details["fault"] == "system");
  CHECK(event.details["class"] == "error:infra");
  CHECK(event.summary.find("error:infra — The platform failed under the job (its disk, memory or "
                           "host), not the model. the platform failed") != std::string::npos);
  // Its own pids or memory bound: the recorded job failed to rerun, never "not the model".
  in.verdict.cls = VerdictClass::error_job;
  in.verdict.job_exit_status = 137;
  in.verdict.explanation =
      "the recorded job failed to rerun (it ran into a bound the runner sets for every job): the "
      "job hit its memory limit of 268435456 bytes";
  event = build_page(in);
  CHECK(event.details["fault"] == "job");
  CHECK(event.summary.find("not the model") == std::string::npos);
}

TEST_CASE("a job that exited 0 with outputs the contract refuses is the job's fault") {
  PageInput in = failing_input();
  in.verdict.checks.clear();
  in.verdict.cls = VerdictClass::error_job;
  in.verdict.job_output_fault =
      "result.json: predictions: expected a file inside $REVERIFY_OUT, got \"../../etc/passwd\"";
  in.verdict.explanation = "the job exited 0 but its outputs break the rebuild contract: " +
                           *in.verdict.job_output_fault;
  const PageEvent event = build_page(in);
  CHECK(event.details["fault"] == "job");
  CHECK(event.details["verdict"]["job_output_fault"] == *in.verdict.job_output_fault);
  CHECK(event.summary.find("error:job — The job finished but wrote outputs the rebuild contract "
                           "refuses (result.json: predictions: expected a file inside "
                           "$REVERIFY_OUT") != std::string::npos);
  CHECK(event.summary.find("did not finish") == std::string::npos);
}

TEST_CASE("a pass resolves and says how many checks held") {
  PageInput in = failing_input();
  in.verdict.cls = VerdictClass::passed;
  in.verdict.checks[0].outcome = CheckOutcome::passed;
  PageEvent event = build_page(in);
  CHECK(event.action == PageAction::resolve);
  CHECK(event.summary ==
        "digits-mlp@2026.11.1 passed — Verified: all 2 deciding checks are inside their bands. "
        "Checks: 2 passed.");
  CHECK(event.details["fault"] == "none");
  CHECK(event.fault == PageFault::none);
}

TEST_CASE("uncalibrated is a notice that says how to calibrate") {
  PageInput in = failing_input();
  in.verdict.cls = VerdictClass::uncalibrated;
  in.verdict.checks[0].outcome = CheckOutcome::uncalibrated;
  in.command_scope = "--config /etc/reverify/reverify.yaml";
  PageEvent event = build_page(in);
  CHECK(event.action == PageAction::notice);
  CHECK(event.summary.find("Not judged yet: 1 of 2 deciding checks have no measured seed spread") !=
        std::string::npos);
  CHECK(event.summary.find("`reverify calibrate digits-mlp@2026.11.1 --seeds 10 --config "
                           "/etc/reverify/reverify.yaml`") != std::string::npos);
}

TEST_CASE("a note is counted as a note and never listed as a failure") {
  PageInput in = failing_input();
  CheckResult weights;
  weights.name = "weights:tensor_sha256";
  weights.kind = CheckKind::weights;
  weights.outcome = CheckOutcome::failed;
  weights.evidence["rebuilt"] = std::string(64, 'b');
  CheckResult steps = check("steps:loss", CheckOutcome::failed, 0.3, 0.2, 0.01);
  steps.kind = CheckKind::steps;
  steps.informational = true;
  in.verdict.checks = {steps, in.verdict.checks[1], weights};
  PageEvent event = build_page(in);
  CHECK(event.summary ==
        "digits-mlp@2026.11.1 failed:out-of-tolerance — The rebuilt weights differ from the "
        "released ones, and level bitwise asks for identical tensors. A note, which decides "
        "nothing: steps:loss is outside its band. Checks: 1 failed, 1 passed, 1 note (1 outside "
        "its band).");
  REQUIRE(event.details["failed_checks"].size() == 1);
  CHECK(event.details["failed_checks"][0]["name"] == "weights:tensor_sha256");
}

TEST_CASE("the summary stays one phone-sized line, the log tail keeps its end") {
  PageInput in = failing_input();
  in.verdict.checks.clear();
  for (int i = 0; i < 200; ++i) {
    in.verdict.checks.push_back(check("segment:é" + std::to_string(i) + ":accuracy\nx",
                                      CheckOutcome::failed, 0.5, 0.9, 0.01));
  }
  in.log_tail = std::string(20000, 'x') + "THE END";
  PageEvent event = build_page(in);
  CHECK(event.summary.size() <= kMaxSummaryChars);
  CHECK(event.summary.find('\n') == std::string::npos);
  CHECK(event.summary.ends_with("…"));
  CHECK(nlohmann::json(event.summary).dump().size() > 0);  // valid UTF-8 after the cut
  CHECK(event.details["failed_checks"].size() == 200);     // complete in details
  const std::string tail = event.details["log_tail"];
  CHECK(tail.ends_with("THE END"));
  CHECK(tail.size() <= kMaxLogTailChars + 32);
}

TEST_CASE("no public URL, no links") {
  PageInput in = failing_input();
  in.public_url.clear();
  CHECK(build_page(in).links.empty());
}

TEST_CASE("a page event survives its JSON form") {
  PageEvent event = build_page(failing_input());
  event.id = 7;
  auto back = page_event_from_json(to_json(event));
  REQUIRE(back.has_value());
  CHECK(back->id == 7);
  CHECK(back->dedup_key == event.dedup_key);
  CHECK(back->action == event.action);
  CHECK(back->cls == event.cls);
  CHECK(back->model == event.model);
  CHECK(back->owner == event.owner);
  CHECK(back->summary == event.summary);
  CHECK(back->details == event.details);
  REQUIRE(back->links.size() == event.links.size());
  CHECK(back->links[1].href == event.links[1].href);
  CHECK(back->created_at == event.created_at);

  auto broken = to_json(event);
  broken["action"] = "explode";
  CHECK_FALSE(page_event_from_json(broken).has_value());
  broken.erase("action");
  CHECK_FALSE(page_event_from_json(broken).has_value());
  CHECK_FALSE(page_event_from_json(nlohmann::json::array()).has_value());
}
