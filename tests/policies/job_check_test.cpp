// check-job's judgements of a job's runs: outputs, same-seed determinism and where it breaks,
// the seed override, steps mode, each seed's reach and the subsample drawn by the rule.
#include <doctest/doctest.h>

#include <algorithm>

#include "core/subsample_rule.hpp"
#include "policies/job_check.hpp"

using namespace reverify;

namespace {

JobRunRecord run(std::string name, std::vector<double> steps, std::vector<double> predictions,
                 std::string weights = "w") {
  JobRunRecord r;
  r.name = std::move(name);
  r.steps = std::move(steps);
  Predictions p;
  p.rows = predictions.size();
  p.values = std::move(predictions);
  r.predictions = std::move(p);
  r.weights_hash = std::move(weights);
  r.result = nlohmann::json::object();
  return r;
}

const JobRunRecord kFull = run("full", {2.0, 1.5, 1.0, 0.5}, {0.1, 0.9, 0.4});

JobRunRecord other_values() {
  return run("steps", {2.0, 1.7}, {0.3, 0.3, 0.3});
}

// A subsample run that reports `keys` as the records it trained on.
JobRunRecord subsample_run(std::vector<std::string> keys, std::int64_t candidates) {
  JobRunRecord r = run("subsample", {2.0, 1.0}, {0.2, 0.8, 0.5});
  std::sort(keys.begin(), keys.end());
  std::string file;
  for (const auto& k : keys)
    file += k + "\n";
  r.keys_file = file;
  r.result["subsample"] = {{"keys_sha256", subsample_keys_digest(keys)->sha256},
                           {"candidates", candidates},
                           {"records", keys.size()}};
  return r;
}

std::vector<std::string> rule_keys(const std::string& salt, const std::string& fraction, int n,
                                   bool members) {
  std::vector<std::string> out;
  const auto f = *parse_subsample_fraction(fraction);
  for (int i = 0; static_cast<int>(out.size()) < n; ++i) {
    const std::string key = "rec-" + std::to_string(i);
    if (in_subsample(salt, key, f) == members)
      out.push_back(key);
  }
  return out;
}

}  // namespace

TEST_CASE("outputs: a failed run, missing predictions, wrong row count, bitwise without weights") {
  CHECK(judge_outputs({kFull}, 3, ReproLevel::equivalent).status == FindingStatus::pass);
  auto failed = kFull;
  failed.error = "exit status 1";
  auto f = judge_outputs({kFull, failed}, 3, ReproLevel::equivalent);
  CHECK(f.status == FindingStatus::fail);
  CHECK(f.summary == "the full run failed: exit status 1");
  CHECK(judge_outputs({kFull}, 4, ReproLevel::equivalent).summary.find("3 rows, the eval set 4") !=
        std::string::npos);
  auto no_weights = kFull;
  no_weights.weights_hash.reset();
  CHECK(judge_outputs({no_weights}, 3, ReproLevel::bitwise).status == FindingStatus::fail);
  CHECK(judge_outputs({no_weights}, 3, ReproLevel::equivalent).status == FindingStatus::pass);
  auto no_predictions = kFull;
  no_predictions.predictions.reset();
  CHECK(judge_outputs({no_predictions}, 3, ReproLevel::equivalent).failure ==
        JobFailure::contract_outputs);
}

TEST_CASE("same seeds: exact is bitwise; from step 0 an unseeded generator; later, kernels") {
  CHECK(judge_same_seed(kFull, kFull, ReproLevel::bitwise).status == FindingStatus::pass);
  auto other_order = run("same-seed", {2.3, 1.4, 1.1, 0.6}, {0.2, 0.8, 0.4});
  auto unseeded = judge_same_seed(kFull, other_order, ReproLevel::equivalent);
  CHECK(unseeded.status == FindingStatus::fail);
  CHECK(unseeded.failure == JobFailure::unseeded_generator);
  CHECK(unseeded.summary.find("differ from step 0 (before any update") != std::string::npos);
  CHECK(unseeded.summary.find("data order") != std::string::npos);
  auto rounding = run("same-seed", {2.0, 1.5, 1.0000000001, 0.5000000003}, {0.1, 0.9, 0.4000001});
  auto kernels = judge_same_seed(kFull, rounding, ReproLevel::equivalent);
  CHECK(kernels.status == FindingStatus::warn);
  CHECK(kernels.failure == JobFailure::nondeterministic_kernels);
  CHECK(judge_same_seed(kFull, rounding, ReproLevel::bitwise).status == FindingStatus::fail);
}

TEST_CASE("the seed override must change the predictions") {
  CHECK(judge_seed_override(kFull, run("override", {2.1}, {0.3, 0.7, 0.4}), 5).status ==
        FindingStatus::pass);
  auto ignored = judge_seed_override(kFull, kFull, 5);
  CHECK(ignored.status == FindingStatus::fail);
  CHECK(ignored.failure == JobFailure::override_ignored);
  CHECK(ignored.summary.find("REVERIFY_SEED_OVERRIDE=5 changed nothing") == 0);
}

TEST_CASE("steps mode stops at N with the full run's first N values") {
  const RunDistance exact = run_distance(kFull, kFull);
  CHECK(judge_steps_mode(run("steps", {2.0, 1.5}, {0.3, 0.3, 0.3}), kFull, 2, exact).status ==
        FindingStatus::pass);
  auto ignored = judge_steps_mode(kFull, kFull, 2, exact);
  CHECK(ignored.status == FindingStatus::fail);
  CHECK(ignored.failure == JobFailure::steps_mode_ignored);
  CHECK(ignored.summary.find("recorded 4 steps") != std::string::npos);
  auto other = judge_steps_mode(other_values(), kFull, 2, exact);
  CHECK(other.status == FindingStatus::fail);
  CHECK(other.summary.find("another computation") != std::string::npos);
  CHECK(judge_steps_mode(run("steps", {}, {0.3, 0.3, 0.3}), kFull, 2, exact).status ==
        FindingStatus::fail);
  // Same seeds, other values from step 0: same-seed names the cause; steps mode checks N only.
  const RunDistance unseeded = run_distance(kFull, run("s", {2.3, 1.4, 1.1, 0.6}, {0.1, 0.9, 0.4}));
  CHECK(judge_steps_mode(other_values(), kFull, 2, unseeded).status == FindingStatus::pass);
  CHECK(judge_steps_mode(kFull, kFull, 2, unseeded).status == FindingStatus::fail);
}

TEST_CASE("a seed that reaches nothing: a failure for the data order's, a warning for others") {
  const RunDistance exact = run_distance(kFull, kFull);
  const auto steps = run("steps", {2.0, 1.5}, {0.3, 0.3, 0.3});
  CHECK(
      judge_seed_reach("dataloader", steps, run("v", {2.0, 1.6}, {0.3, 0.3, 0.3}), exact).status ==
      FindingStatus::pass);
  auto order = judge_seed_reach("dataloader", steps, steps, exact);
  CHECK(order.status == FindingStatus::fail);
  CHECK(order.failure == JobFailure::seed_not_reached);
  CHECK(order.summary.find("the data order") != std::string::npos);
  CHECK(judge_seed_reach("augmentation", steps, steps, exact).status == FindingStatus::fail);
  CHECK(judge_seed_reach("python", steps, steps, exact).status == FindingStatus::warn);
  const RunDistance unseeded = run_distance(kFull, run("s", {2.3, 1.4, 1.1, 0.6}, {0.1, 0.9, 0.4}));
  CHECK(judge_seed_reach("dataloader", steps, steps, unseeded).status == FindingStatus::skip);
}

TEST_CASE("subsample: the drawn keys must be the rule's, whatever the seed") {
  const auto members = rule_keys("s", "0.25", 50, true);
  const auto good = subsample_run(members, 200);
  SubsampleCheckInput in{"0.25", "s", &good, &good, &kFull};
  CHECK(judge_subsample(in).status == FindingStatus::pass);

  auto shuffled = members;
  shuffled.resize(40);
  const auto outsiders = rule_keys("s", "0.25", 10, false);
  shuffled.insert(shuffled.end(), outsiders.begin(), outsiders.end());
  const auto by_shuffle = subsample_run(shuffled, 200);
  in.run = &by_shuffle;
  auto f = judge_subsample(in);
  CHECK(f.status == FindingStatus::fail);
  CHECK(f.failure == JobFailure::subsample_not_by_rule);
  CHECK(f.summary.find("10 of the 50 keys the job trained on are not in the subsample") == 0);

  auto other_draw = subsample_run(rule_keys("s", "0.25", 49, true), 200);
  in.run = &good;
  in.overridden = &other_draw;
  CHECK(judge_subsample(in).summary.find("seed override changed which records") !=
        std::string::npos);

  auto unreported = good;
  unreported.result = nlohmann::json::object();
  in.run = &unreported;
  CHECK(judge_subsample(in).summary.find("reports no drawn records") != std::string::npos);

  const auto few = subsample_run(rule_keys("s", "0.25", 10, true), 200);
  in.run = &few;
  in.overridden = &few;
  CHECK(judge_subsample(in).summary.find("far fewer or more") != std::string::npos);
}

TEST_CASE("the overall status is the worst finding's") {
  std::vector<JobFinding> findings(2);
  CHECK(overall_status(findings) == FindingStatus::pass);
  findings[0].status = FindingStatus::warn;
  CHECK(overall_status(findings) == FindingStatus::warn);
  findings[1].status = FindingStatus::fail;
  CHECK(overall_status(findings) == FindingStatus::fail);
}
