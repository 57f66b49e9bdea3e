// `reverify capture`'s scoring flags end to end (issue #22): on the digits example the spec is
// emitted, validated and tried on the release's own predictions (reverify's accuracy is the one
// the job reported); files named by the flags are copied into the release and hashed there; bad
// flags are refused with the flag, the file and what was expected, and nothing is written.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/hashing.hpp"
#include "core/predictions.hpp"
#include "tests/support/digits_trainer.hpp"
#include "tests/support/git_checkout.hpp"
#include "tests/support/run_program.hpp"
#include "tests/support/temp_dir.hpp"
#include "tests/support/text_search.hpp"

namespace fs = std::filesystem;
using json = nlohmann::json;
using namespace reverify::test;

namespace {

using reverify::test::contains;

json read_json(const fs::path& path) {
  return json::parse(read_file(path));
}

std::vector<std::string> capture_args(const fs::path& dir, const fs::path& code,
                                      const fs::path& eval, std::vector<std::string> scoring) {
  std::vector<std::string> args = {"capture",
                                   "--out",
                                   (dir / "release").string(),
                                   "--model",
                                   "m",
                                   "--version",
                                   "1",
                                   "--owner",
                                   "team",
                                   "--code",
                                   code.string(),
                                   "--result",
                                   (dir / "out/result.json").string(),
                                   "--python",
                                   "/usr/bin/python3",
                                   "--eval",
                                   eval.string()};
  args.insert(args.end(), scoring.begin(), scoring.end());
  args.insert(args.end(), {"--", "python3", "train.py"});
  return args;
}

// A job without training: a committed code folder, result.json and 4 rows of binary scores.
struct FakeJob {
  TempDir dir{"reverify-capture-scoring-itest-"};
  fs::path eval;

  FakeJob() {
    dir.write("code/train.py", "print('training')\n");
    commit_all(dir.path / "code");
    eval = dir.write("eval.csv", "id,label,region\na,1,north\nb,0,south\nc,1,south\nd,0,north\n");
    fs::create_directories(dir.path / "out");
    reverify::Predictions p;
    p.rows = 4;
    p.values = {0.9, 0.2, 0.4, 0.6};
    REQUIRE(reverify::write_npy(dir.path / "out/predictions.npy", p).ok());
    dir.write("out/result.json", json{{"primary", {{"name", "accuracy"}, {"value", 0.5}}},
                                      {"predictions", "predictions.npy"}}
                                     .dump());
  }

  Ran capture(std::vector<std::string> scoring) const {
    return run_cli(capture_args(dir.path, dir.path / "code", eval, std::move(scoring)), dir.path);
  }
};

}  // namespace

TEST_CASE("capture on the digits example emits a multiclass spec that scores like the job") {
  TempDir dir("reverify-capture-scoring-itest-");
  const fs::path trainer = dir.path / "trainer";
  build_digits_trainer(trainer);
  const fs::path eval = source_dir() / "examples/digits/eval/digits-eval.csv";
  fs::create_directories(dir.path / "out");
  const Ran trained = run_program(
      {"/usr/bin/env", "-i", "PATH=/usr/bin:/bin", "OMP_NUM_THREADS=1",
       "REVERIFY_OUT=" + (dir.path / "out").string(),
       "REVERIFY_DATA=" + (source_dir() / "examples/digits/data").string(),
       "REVERIFY_EVAL=" + eval.string(), "REVERIFY_CONFIG=" + (trainer / "config.json").string(),
       "REVERIFY_SEEDS=" + (trainer / "seeds.json").string(), "/usr/bin/python3",
       (trainer / "train.py").string()},
      dir.path);
  REQUIRE_MESSAGE(trained.exit_code == 0, trained.err);
  const Ran ran = run_cli(capture_args(dir.path, trainer, eval,
                                       {"--task", "multiclass", "--labels", "label", "--classes",
                                        "10", "--segment-key", "digit=label"}),
                          dir.path);
  INFO(ran.out << ran.err);
  REQUIRE(ran.exit_code == 0);
  const json manifest = read_json(dir.path / "release/manifest.json");
  CHECK(manifest["evaluation"]["scoring"] ==
        json({{"task", "multiclass"},
              {"labels", {{"column", "label"}}},
              {"classes", 10},
              {"segments", {{{"column", "label"}, {"name", "digit"}}}}}));
  // reverify's own count of the release's predictions gives the accuracy the job reported.
  const double reported = manifest["evaluation"]["primary"]["value"].get<double>();
  const auto correct = static_cast<long long>(std::llround(reported * 391));
  CHECK(contains(ran.out,
                 "scoring: multiclass, 391 records, 10 segments; the release's "
                 "accuracy " +
                     std::to_string(reported) + " (" + std::to_string(correct) + "/391)"));
  const Ran lint = run_cli({"lint", (dir.path / "release/manifest.json").string()}, dir.path);
  CHECK(lint.exit_code == 0);
}

TEST_CASE("files named by the scoring flags are copied into the release and hashed there") {
  FakeJob job;
  const fs::path labels = job.dir.write("frozen/labels.txt", "1\n0\n1\n0\n");
  job.dir.write("frozen/keys.csv", "id,radius\na,low\nb,high\nc,low\nd,low\n");
  const Ran ran = job.capture({"--task", "binary", "--labels", labels.string(), "--threshold",
                               "0.5", "--threshold", "0.3", "--segment-key",
                               (job.dir.path / "frozen/keys.csv").string() + ":radius",
                               "--segment-key", "area=region", "--metric", "accuracy"});
  INFO(ran.out << ran.err);
  REQUIRE(ran.exit_code == 0);
  const json scoring = read_json(job.dir.path / "release/manifest.json")["evaluation"]["scoring"];
  CHECK(scoring["labels"] ==
        json({{"uri", "labels.txt"}, {"sha256", reverify::sha256_hex("1\n0\n1\n0\n")}}));
  CHECK(scoring["segments"][0] ==
        json({{"uri", "keys.csv"},
              {"sha256", reverify::sha256_hex(read_file(job.dir.path / "frozen/keys.csv"))},
              {"column", "radius"},
              {"name", "radius"}}));
  CHECK(scoring["segments"][1] == json({{"column", "region"}, {"name", "area"}}));
  CHECK(scoring["thresholds"] == json({0.5, 0.3}));
  CHECK(scoring["metrics"] == json({"accuracy"}));
  CHECK(read_file(job.dir.path / "release/labels.txt") == "1\n0\n1\n0\n");
  CHECK(contains(ran.out,
                 "scoring: binary, 4 records, 4 segments; the release's accuracy@0.5 "
                 "0.500000 (2/4)"));
}

TEST_CASE("bad scoring flags are refused naming the flag, the file and what was expected") {
  FakeJob job;
  auto refused = [&](std::vector<std::string> scoring, const std::string& message) {
    const Ran ran = job.capture(std::move(scoring));
    INFO(ran.out << ran.err);
    CHECK(ran.exit_code == 2);
    CHECK(contains(ran.err, message));
    CHECK_FALSE(fs::exists(job.dir.path / "release/manifest.json"));
  };
  refused({"--task", "binary", "--labels", "lable"},
          "reverify capture: --labels lable: " + job.eval.string() +
              " has no column \"lable\" (its columns: id, label, region)");
  refused({"--labels", "label"},
          "reverify capture: --task is required with the other scoring "
          "flags");
  refused({"--task", "binary"}, "reverify capture: --labels is required with --task");
  refused({"--task", "binary", "--labels", "label", "--metric", "rmse"},
          "reverify capture: --metric rmse: not a metric of task binary");
  refused({"--task", "binary", "--labels", "label", "--k", "3"},
          "reverify capture: evaluation.scoring.k: not taken by task binary (only by ranking)");
  refused({"--task", "multiclass", "--labels", "label"},
          "reverify capture: evaluation.scoring.classes: required field is missing for task "
          "multiclass");
  const fs::path short_file = job.dir.write("short.txt", "1\n0\n1\n");
  refused({"--task", "binary", "--labels", short_file.string()},
          "reverify capture: evaluation.scoring.labels: " +
              (job.dir.path / "release/short.txt").string() +
              ": 3 values, the predictions have 4 rows (one per eval record, in eval-set order)");
  refused({"--task", "binary", "--labels", "region"},
          "reverify capture: evaluation.scoring.labels: " + job.eval.string() +
              ": line 2 (record 0): \"north\" is not a number");
  const fs::path other = job.dir.write("elsewhere/labels.txt", "1\n0\n1\n0\n");
  const fs::path same_name = job.dir.write("frozen/labels.txt", "0\n0\n1\n0\n");
  refused({"--task", "binary", "--labels", other.string(), "--segment-key", same_name.string()},
          "reverify capture: --segment-key " + same_name.string() +
              ": the release folder already holds " + other.string() +
              " under the name labels.txt");
}

TEST_CASE("capture --same-seed-runs hashes and scores each rerun's predictions") {
  FakeJob job;
  // Two reruns reproduce the release's scores exactly; one moves record c across 0.5. Each job
  // reports accuracy 0.5: the recorded primary is reverify's score of the predictions.
  const std::vector<std::vector<double>> reruns = {
      {0.9, 0.2, 0.4, 0.6}, {0.9, 0.2, 0.4, 0.6}, {0.9, 0.2, 0.6, 0.6}};
  std::vector<std::string> hashes;
  for (std::size_t i = 0; i < reruns.size(); ++i) {
    const fs::path run = job.dir.path / "same-seed" / ("run" + std::to_string(i + 1));
    fs::create_directories(run);
    reverify::Predictions p;
    p.rows = 4;
    p.values = reruns[i];
    REQUIRE(reverify::write_npy(run / "predictions.npy", p).ok());
    hashes.push_back(reverify::values_sha256(p));
    job.dir.write("same-seed/run" + std::to_string(i + 1) + "/result.json",
                  json{{"primary", {{"name", "accuracy"}, {"value", 0.5}}},
                       {"predictions", "predictions.npy"}}
                      .dump());
  }
  const Ran ran = job.capture({"--task", "binary", "--labels", "label", "--segment-key",
                               "area=region", "--metric", "accuracy", "--same-seed-runs",
                               (job.dir.path / "same-seed").string()});
  INFO(ran.out << ran.err);
  REQUIRE(ran.exit_code == 0);
  CHECK(contains(ran.out, "3 same-seed reruns' predictions scored"));
  const json runs =
      read_json(job.dir.path / "release/manifest.json")["tolerance"]["same_seed_scores"];
  REQUIRE(runs.size() == 3);
  for (std::size_t i = 0; i < 3; ++i)
    CHECK(runs[i]["predictions_sha256"] == hashes[i]);
  CHECK(runs[0]["predictions_sha256"] == runs[1]["predictions_sha256"]);
  CHECK(runs[0]["primary"] == 0.5);
  CHECK(runs[2]["primary"] == 0.75);  // a, b and c right: reverify's score, not the job's 0.5
  CHECK(runs[2]["segments"]["area=south"]["accuracy"] == 1.0);
  CHECK(runs[2]["segments"]["area=north"]["accuracy"] == 0.5);
  // No steps reported: none recorded, and the manifest parses with the new field.
  CHECK_FALSE(read_json(job.dir.path / "release/manifest.json")["tolerance"].contains(
      "steps_same_seed_runs"));
}

TEST_CASE("--detect and --floor key any check name, '=' in it included, --help's examples too") {
  FakeJob job;
  // The examples capture --help gives for --detect, as it prints them.
  const std::string help = run_cli({"capture", "--help"}, job.dir.path).out;
  const auto from = help.find("--detect");
  REQUIRE(from != std::string::npos);
  const std::string text = help.substr(from, help.find("--floor", from) - from);
  std::vector<std::string> examples;
  std::string word;
  for (char c : text + " ") {
    if (c == ' ' || c == '\n' || c == '(' || c == ')' || c == ',') {
      if (word.find('=') != std::string::npos && word != "CHECK=SHIFT")
        examples.push_back(word);
      word.clear();
    } else {
      word += c;
    }
  }
  CHECK(examples == std::vector<std::string>{"accuracy=0.01", "segment:digit=8:accuracy=0.05",
                                             "distribution:psi=0.05", "steps:loss=0.001"});
  std::vector<std::string> args = {"--task",      "binary", "--labels",      "label",
                                   "--threshold", "0.5",    "--segment-key", "region=region"};
  for (const auto& example : examples)
    args.insert(args.end(), {"--detect", example});
  args.insert(args.end(), {"--detect", "parity:threshold=0.5:segment:region=west=0.125", "--floor",
                           "segment:region=south:accuracy=0.002"});
  const Ran ran = job.capture(args);
  INFO(ran.out << ran.err);
  REQUIRE(ran.exit_code == 0);
  const json tolerance = read_json(job.dir.path / "release/manifest.json")["tolerance"];
  CHECK(tolerance["detect"] == json({{"accuracy", 0.01},
                                     {"segment:digit=8:accuracy", 0.05},
                                     {"distribution:psi", 0.05},
                                     {"steps:loss", 0.001},
                                     {"parity:threshold=0.5:segment:region=west", 0.125}}));
  CHECK(tolerance["floor"] == json({{"segment:region=south:accuracy", 0.002}}));
  const Ran bad = job.capture({"--detect", "segment:region=west:accuracy"});
  CHECK(bad.exit_code == 2);
  CHECK(contains(bad.err, "--detect segment:region=west:accuracy: expected CHECK=SHIFT"));
}

TEST_CASE(
    "a metric scoring computes, named otherwise by the job, is refused with the name to use") {
  FakeJob job;
  auto reports = [&](const std::string& name) {
    job.dir.write("out/result.json", json{{"primary", {{"name", name}, {"value", 0.5}}},
                                          {"predictions", "predictions.npy"}}
                                         .dump());
  };
  // Ranking over the two regions as queries, k = 2: "ndcg@2" is reverify's ndcg@k.
  const std::vector<std::string> ranking = {"--task",  "ranking", "--labels", "label",
                                            "--query", "region",  "--k",      "2"};
  reports("ndcg@2");
  const Ran taken = job.capture(ranking);
  INFO(taken.out << taken.err);
  CHECK(taken.exit_code == 0);
  fs::remove_all(job.dir.path / "release");
  reports("ndcg@10");
  const Ran other_k = job.capture(ranking);
  CHECK(other_k.exit_code == 2);
  CHECK(contains(other_k.err,
                 "evaluation.primary.name reports \"ndcg@10\", a metric reverify's scoring "
                 "computes, but not under that name (it would be judged on the job's own "
                 "figures): ndcg@10 names the cut-off 10, the scoring spec's k is 2: name it "
                 "ndcg@2 (or ndcg@k), or set evaluation.scoring.k to 10"));
  CHECK_FALSE(fs::exists(job.dir.path / "release/manifest.json"));
  reports("AUC");
  const Ran auc = job.capture({"--task", "binary", "--labels", "label"});
  CHECK(auc.exit_code == 2);
  CHECK(contains(auc.err, "(it would be judged on the job's own figures): name it roc_auc"));
}
