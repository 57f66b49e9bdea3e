#pragma once
// One verdict of each class, made the way a verification makes it: decide_verdict on a manifest
// with seed runs and a rebuild's observation, then the preflight's input checks put first
// (verify/pipeline.cpp prepend_inputs), which is where two counts of one verdict once parted.
// For the tests that render a verdict through every surface.

#include <string>
#include <vector>

#include "core/manifest.hpp"
#include "policies/verdict.hpp"

namespace reverify::test {

struct VerdictCase {
  std::string name;     // what it is, for messages
  std::string version;  // digits-mlp@<version>, one per case
  Manifest manifest;
  Verdict verdict;
};

inline Manifest fixture_manifest(const std::string& version, ReproLevel level) {
  Manifest m;
  m.model = "digits-mlp";
  m.version = version;
  m.owner = "team-vision";
  m.level = level;
  m.code.commit = std::string(40, 'a');
  m.run.entrypoint = {"python3", "train.py"};
  m.evaluation.primary = {"accuracy", 0.95, true, 400};
  m.evaluation.segments["digit=8"]["accuracy"] = 0.9;
  m.evaluation.segment_examples["digit=8"] = 40;
  m.evaluation.predictions = FileRef{"predictions.npy", std::nullopt};
  m.weights = Weights{"model.safetensors", "safetensors", std::string(64, 'b')};
  ToleranceSpec t;
  for (int c : {380, 381, 379, 380, 382, 378, 380, 381, 379, 380})
    t.seed_runs["accuracy"].push_back(c / 400.0);
  for (int c : {36, 36, 37, 36, 35, 36, 36, 37, 36, 36})
    t.segment_seed_runs["digit=8"]["accuracy"].push_back(c / 40.0);
  for (const char* s : {"ks", "psi", "wasserstein", "max_abs_diff", "mean_abs_diff", "flip_rate"})
    t.distribution_seed_runs[s] = {0.02,  0.03,  0.025, 0.021, 0.031,
                                   0.022, 0.027, 0.024, 0.026, 0.023};
  m.tolerance = t;
  return m;
}

// The statistics of a rebuild against the release: typical, or far out (`shifted`).
inline stats::Comparison fixture_comparison(bool shifted) {
  stats::Comparison c;
  c.ks = c.psi = c.wasserstein = shifted ? 0.4 : 0.025;
  c.paired = stats::Paired{0.025, 0.025, 0.025};
  c.rows = c.scores = 400;
  c.unit_interval = true;
  return c;
}

inline std::vector<CheckResult> fixture_inputs(bool dataset_moved) {
  std::vector<CheckResult> inputs;
  for (const char* name : {"input:image", "input:dataset", "input:eval_set", "input:lockfile"}) {
    CheckResult input;
    input.name = name;
    input.kind = CheckKind::input;
    input.outcome = CheckOutcome::passed;
    input.explanation = std::string(name) + ": hash unchanged";
    if (dataset_moved && input.name == "input:dataset") {
      input.outcome = CheckOutcome::failed;
      input.explanation = "input:dataset: the snapshot's root hash moved: 1 file changed";
      input.evidence["moved"] = {{"changed", {"shard-03.csv"}}};
    }
    inputs.push_back(std::move(input));
  }
  return inputs;
}

// A rebuild judged by decide_verdict, the input checks put first as the pipeline does.
inline Verdict fixture_rebuild(const Manifest& m, double primary, bool shifted,
                               std::optional<TensorDifference> tensors = std::nullopt) {
  RebuildObservation rebuild;
  rebuild.primary_name = "accuracy";
  rebuild.primary = primary;
  rebuild.segments["digit=8"]["accuracy"] = 0.9;
  rebuild.comparison = fixture_comparison(shifted);
  if (tensors) {
    rebuild.tensor_sha256 = std::string(64, 'c');
    rebuild.tensors = std::move(tensors);
  } else {
    rebuild.tensor_sha256 = m.weights->tensor_sha256;
  }
  Verdict verdict = decide_verdict(VerdictInputs{m, rebuild});
  const auto inputs = fixture_inputs(false);
  verdict.checks.insert(verdict.checks.begin(), inputs.begin(), inputs.end());
  return verdict;
}

// passed; failed:out-of-tolerance (the primary metric); failed:out-of-tolerance at level bitwise
// (the weights, 8 tensors); failed:distribution-shift; failed:input-drift; uncalibrated (no seed
// runs); passed at level rerunnable with its primary outside the band (a note); error:job.
inline std::vector<VerdictCase> one_verdict_of_each_class() {
  std::vector<VerdictCase> cases;
  auto add = [&](std::string name, std::string version, Manifest m, Verdict v) {
    cases.push_back({std::move(name), std::move(version), std::move(m), std::move(v)});
  };
  {
    auto m = fixture_manifest("1.0", ReproLevel::equivalent);
    add("passed", "1.0", m, fixture_rebuild(m, 0.95, false));
  }
  {
    auto m = fixture_manifest("1.1", ReproLevel::equivalent);
    add("failed primary", "1.1", m, fixture_rebuild(m, 0.80, false));
  }
  {
    auto m = fixture_manifest("1.2", ReproLevel::bitwise);
    TensorDifference tensors;
    tensors.tensors = 8;
    tensors.differing = {"0.bias", "0.weight", "2.bias", "2.weight",
                         "4.bias", "4.weight", "6.bias", "6.weight"};
    add("failed weights", "1.2", m, fixture_rebuild(m, 0.95, false, tensors));
  }
  {
    auto m = fixture_manifest("1.3", ReproLevel::equivalent);
    add("failed distribution", "1.3", m, fixture_rebuild(m, 0.95, true));
  }
  {
    auto m = fixture_manifest("1.4", ReproLevel::equivalent);
    add("failed input", "1.4", m, verdict_for_input_drift(fixture_inputs(true)));
  }
  {
    auto m = fixture_manifest("1.5", ReproLevel::equivalent);
    m.tolerance.reset();
    add("uncalibrated", "1.5", m, fixture_rebuild(m, 0.95, false));
  }
  {
    auto m = fixture_manifest("1.6", ReproLevel::rerunnable);
    add("rerunnable, a note outside its band", "1.6", m, fixture_rebuild(m, 0.80, false));
  }
  {
    auto m = fixture_manifest("1.7", ReproLevel::equivalent);
    Verdict v = verdict_for_error(VerdictClass::error_job,
                                  "the job exited with status 3; its last lines: Traceback ...");
    v.job_exit_status = 3;
    add("error:job", "1.7", m, v);
  }
  return cases;
}

}  // namespace reverify::test
