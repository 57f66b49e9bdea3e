// Leave-one-out on the shipped example's own calibration, as `reverify calibrate` computes it
// (verify/calibration.hpp release_shape, policies/calibration.hpp leave_one_out): each of its 40
// recorded seed runs judged as a verification judges a rebuild, with its scoring spec and
// without. Honest runs page within what the false-page rate predicts, and the checks judged are
// a verification's own (no scored metric the manifest does not record is judged as an "extra
// segment", which paged every run before).

#include <doctest/doctest.h>

#include <set>

#include "core/eval_columns.hpp"
#include "core/manifest_parse.hpp"
#include "core/predictions.hpp"
#include "tests/support/files.hpp"
#include "verify/calibration.hpp"

namespace reverify {
namespace {

struct Shipped {
  Manifest manifest;
  std::string location;
  Predictions release;
};

Shipped shipped_digits() {
  const auto path = test::source_dir() / "examples/registry/digits-mlp/2026.11.1/manifest.json";
  auto loaded = load_manifest(path.string());
  REQUIRE(loaded.ok());
  REQUIRE(loaded->parse.ok());
  Shipped s{*loaded->parse.manifest, loaded->location, {}};
  auto predictions = read_predictions(path.parent_path() / "predictions.npy");
  REQUIRE(predictions.ok());
  s.release = std::move(predictions).value();
  return s;
}

ReleaseShape shape_of(const Shipped& s, bool scored) {
  std::optional<ScoringInputs> inputs;
  if (scored) {
    auto read = read_scoring_inputs(*s.manifest.evaluation.scoring,
                                    {s.location, s.manifest.evaluation.set}, s.release.rows);
    REQUIRE(read.ok());
    inputs = std::move(read).value();
  }
  auto shape = release_shape(&s.release, inputs ? &*inputs : nullptr);
  REQUIRE(shape.ok());
  return *shape;
}

// The names of the checks a held-out run was judged by.
std::set<std::string> names(const Verdict& verdict) {
  std::set<std::string> out;
  for (const auto& check : verdict.checks)
    out.insert(check.name);
  return out;
}

void no_excess(const LeaveOneOut& loo, const VerdictPolicy& policy) {
  const auto excess = leave_one_out_excess(loo, policy.false_page_rate);
  INFO("paged " << loo.paged << " of " << loo.runs.size());
  if (excess)
    INFO(excess_warning(*excess, policy.false_page_rate, "digits-mlp@2026.11.1", ""));
  CHECK_FALSE(excess.has_value());
}

}  // namespace

TEST_CASE("the shipped digits example, with its scoring spec: no excess, a verification's checks") {
  const Shipped s = shipped_digits();
  REQUIRE(s.manifest.evaluation.scoring.has_value());
  const VerdictPolicy policy;
  const ReleaseShape shape = shape_of(s, true);
  REQUIRE(shape.scored.has_value());
  const auto loo = leave_one_out(s.manifest, *s.manifest.tolerance, policy, shape);
  REQUIRE(loo.runs.size() == 40);
  no_excess(loo, policy);
  for (const auto& run : loo.runs) {
    const auto judged = names(run.verdict);
    // The primary metric, each scored segment's primary metric (the manifest records only
    // accuracy per segment), the distribution statistics and the parity checks; no other metric
    // of a segment, though the seed runs recorded seven.
    CHECK(judged.count("primary:accuracy"));
    CHECK(judged.count("segment:digit=3:accuracy"));
    CHECK_FALSE(judged.count("segment:digit=3:brier"));
    CHECK(judged.count("distribution:ks"));
    CHECK(judged.count("parity:class=3"));
    for (const auto& check : run.verdict.checks) {
      CHECK_MESSAGE(check.explanation.find("extra segment") == std::string::npos, check.name);
      if (check.name == "segment:digit=3:accuracy") {
        // The band is a proportion over the segment's 39 records, from the release's own count.
        CHECK(check.explanation.find("over 39 examples") != std::string::npos);
      }
      if (check.name == "distribution:flip_rate")
        CHECK(check.outcome != CheckOutcome::not_judged);
    }
  }
}

TEST_CASE("the shipped digits example, without a scoring spec: no excess, the job's numbers") {
  Shipped s = shipped_digits();
  s.manifest.evaluation.scoring.reset();
  const VerdictPolicy policy;
  const auto loo = leave_one_out(s.manifest, *s.manifest.tolerance, policy, shape_of(s, false));
  REQUIRE(loo.runs.size() == 40);
  no_excess(loo, policy);
  for (const auto& run : loo.runs) {
    const auto judged = names(run.verdict);
    CHECK(judged.count("segment:digit=8:accuracy"));
    CHECK_FALSE(judged.count("segment:digit=8:log_loss"));
    CHECK_FALSE(judged.count("job:metric-agrees"));
  }
}

TEST_CASE("the shipped digits example: the bands a calibration describes are a verification's") {
  const Shipped s = shipped_digits();
  const VerdictPolicy policy;
  const auto bands = describe_bands(s.manifest, *s.manifest.tolerance, policy, shape_of(s, true));
  bool flip_rate = false, same_seed = false;
  for (const auto& band : bands) {
    if (band.name == "primary:accuracy")
      CHECK(band.explanation.find("over 391 examples") != std::string::npos);
    if (band.name == "distribution:flip_rate") {
      flip_rate = true;
      CHECK(band.band.has_value());  // judged, as a verification judges it
    }
    if (band.name == "same-seed:predictions") {
      same_seed = true;  // described, never judged against the seed mean
      CHECK(band.outcome == CheckOutcome::not_judged);
      CHECK_FALSE(band.observed.has_value());
      CHECK(band.explanation.find("3 same-seed rerun(s)") != std::string::npos);
    }
  }
  CHECK(flip_rate);
  CHECK(same_seed);
}

}  // namespace reverify
