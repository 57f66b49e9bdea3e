// read_job_outputs / collect_outputs: the result.json contract and names that must stay inside
// the out folder. Uses real temp folders (no services).
#include <doctest/doctest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>

#include "runners/job_outputs.hpp"
#include "tests/support/temp_dir.hpp"

using namespace reverify;

namespace {

using test::TempDir;

void write(const std::filesystem::path& path, const std::string& text) {
  std::ofstream(path) << text;
}

Error outputs_error(const std::filesystem::path& dir) {
  auto outputs = read_job_outputs(dir);
  REQUIRE_FALSE(outputs.ok());
  CHECK(outputs.error().code == ErrorCode::job);
  return outputs.error();
}

}  // namespace

TEST_CASE("a complete result.json is read with its files resolved") {
  TempDir out;
  write(out.path / "predictions.npy", "npy");
  write(out.path / "model.safetensors", "st");
  write(out.path / "result.json", R"({"primary": {"name": "accuracy", "value": 0.96},
    "segments": {"digit=8": {"accuracy": 0.93}}, "steps": {"metric": "loss", "values": [2.3, 2.1]},
    "predictions": "predictions.npy", "weights": "model.safetensors"})");
  auto outputs = read_job_outputs(out.path);
  REQUIRE(outputs.ok());
  CHECK(outputs->primary_name == "accuracy");
  CHECK(outputs->primary_value == doctest::Approx(0.96));
  CHECK(outputs->segments.at("digit=8").at("accuracy") == doctest::Approx(0.93));
  CHECK(outputs->steps_metric == "loss");
  CHECK(outputs->steps_values == std::vector<double>{2.3, 2.1});
  REQUIRE(outputs->predictions);
  CHECK(outputs->predictions->filename() == "predictions.npy");
  CHECK(outputs->weights->filename() == "model.safetensors");
}

TEST_CASE("result.json problems name the field and what was expected") {
  TempDir out;
  CHECK(outputs_error(out.path).message.find("no result.json") != std::string::npos);
  write(out.path / "result.json", "{not json");
  CHECK(outputs_error(out.path).message.find("not valid JSON") != std::string::npos);
  write(out.path / "result.json", R"({"primary": {"name": "accuracy", "value": "high"}})");
  CHECK(outputs_error(out.path).message ==
        "result.json: primary.value: expected a finite number, got \"high\"");
  write(out.path / "result.json", R"({"segments": {}})");
  CHECK(outputs_error(out.path).message.find("primary") != std::string::npos);
  write(out.path / "result.json",
        R"({"primary": {"name": "a", "value": 1}, "segments": {"s": {"m": null}}})");
  CHECK(outputs_error(out.path).message.find("segments[\"s\"].m") != std::string::npos);
  write(
      out.path / "result.json",
      R"({"primary": {"name": "a", "value": 1}, "steps": {"metric": "loss", "values": [1, "x"]}})");
  CHECK(outputs_error(out.path).message.find("steps.values[1]") != std::string::npos);
  write(out.path / "result.json",
        R"({"primary": {"name": "a", "value": 1}, "predictions": "missing.npy"})");
  CHECK(outputs_error(out.path).message.find("did not write") != std::string::npos);
}

TEST_CASE("output names cannot leave the out folder") {
  TempDir root;
  const auto out = root.path / "out";
  std::filesystem::create_directories(out);
  write(root.path / "secret", "s");
  std::filesystem::create_symlink(root.path / "secret", out / "link.npy");
  for (const char* name : {"../secret", "/etc/passwd", "link.npy", "sub/../../secret"}) {
    write(out / "result.json",
          nlohmann::json{{"primary", {{"name", "a"}, {"value", 1}}}, {"predictions", name}}.dump());
    CHECK(outputs_error(out).message.find("predictions") != std::string::npos);
  }
}

TEST_CASE("collect_outputs copies regular files and skips symlinks") {
  TempDir root;
  const auto out = root.path / "out", dest = root.path / "dest";
  std::filesystem::create_directories(out);
  write(root.path / "secret", "s");
  write(out / "predictions.npy", "npy");
  std::filesystem::create_symlink(root.path / "secret", out / "stolen");
  write(out / "result.json",
        R"({"primary": {"name": "a", "value": 1}, "predictions": "predictions.npy"})");
  auto outputs = collect_outputs(out, dest);
  REQUIRE(outputs.ok());
  CHECK(outputs->predictions == dest / "predictions.npy");
  CHECK_FALSE(std::filesystem::exists(std::filesystem::symlink_status(dest / "stolen")));
}

TEST_CASE("what a job wrote wrong is named: a link, NaN, the size, a special file") {
  TempDir root;
  const auto out = root.path / "out", dest = root.path / "dest";
  std::filesystem::create_directories(out);
  const auto collect_error = [&] {
    std::filesystem::remove_all(dest);
    auto outputs = collect_outputs(out, dest);
    REQUIRE_FALSE(outputs.ok());
    CHECK(outputs.error().code == ErrorCode::job);
    return outputs.error().message;
  };
  std::filesystem::create_symlink("/etc/passwd", out / "predictions.npy");
  write(out / "result.json",
        R"({"primary": {"name": "a", "value": 1}, "predictions": "predictions.npy"})");
  CHECK(collect_error() ==
        "result.json: predictions: names predictions.npy, a symbolic link (to /etc/passwd); the "
        "contract takes a regular file the job wrote in $REVERIFY_OUT");
  std::filesystem::remove(out / "predictions.npy");

  write(out / "result.json", R"({"primary": {"name": "accuracy", "value": NaN}})");
  const auto nan = collect_error();
  CHECK(nan.find("result.json: not valid JSON at byte 43") == 0);  // the N
  CHECK(nan.find("NaN is not JSON") != std::string::npos);

  write(out / "result.json", std::string(17 * 1024 * 1024, ' ') + "{}");
  CHECK(collect_error() ==
        "result.json: 17825794 bytes, over the contract's limit of 16777216 bytes");

  std::filesystem::remove(out / "result.json");
  std::filesystem::create_symlink("/etc/shadow", out / "result.json");
  CHECK(collect_error().find("result.json: a symbolic link (to /etc/shadow)") == 0);
  std::filesystem::remove(out / "result.json");

  REQUIRE(::mkfifo((out / "pipe").c_str(), 0600) == 0);
  CHECK(collect_error().find("$REVERIFY_OUT/pipe: not a regular file or a folder") == 0);
}

TEST_CASE("result.json's subsample report: its draw, its keys file, what a key is") {
  TempDir out;
  const std::string digest(64, 'a');
  write(out.path / "subsample-keys.txt", "k1\n");
  write(out.path / "result.json",
        R"({"primary": {"name": "accuracy", "value": 0.9}, "subsample": {"records": 3,
        "keys": 2, "candidates": 12, "keys_sha256": ")" +
            digest + R"(", "key": "the id column", "fraction": "0.25", "salt": "s"}})");
  auto outputs = read_job_outputs(out.path);
  REQUIRE(outputs.ok());
  REQUIRE(outputs->subsample);
  CHECK(outputs->subsample->records == 3);
  CHECK(outputs->subsample->keys == 2);
  CHECK(outputs->subsample->candidates == 12);
  CHECK(outputs->subsample->keys_sha256 == digest);
  CHECK(outputs->subsample_keys->filename() == "subsample-keys.txt");
  CHECK(outputs->subsample_key == "the id column");

  write(out.path / "result.json", R"({"primary": {"name": "accuracy", "value": 0.9},
        "subsample": {"records": -1, "keys": 2, "keys_sha256": ")" +
                                      digest + R"("}})");
  CHECK(outputs_error(out.path).message ==
        "result.json: subsample.records: expected a non-negative integer, got -1");
  write(out.path / "result.json", R"({"primary": {"name": "accuracy", "value": 0.9},
        "subsample": {"records": 1, "keys": 1, "keys_sha256": "ABC"}})");
  CHECK(outputs_error(out.path).message.find("subsample.keys_sha256: expected 64 lowercase hex") !=
        std::string::npos);
  write(out.path / "result.json", R"({"primary": {"name": "accuracy", "value": 0.9},
        "subsample": {"records": 1, "keys": 1, "keys_sha256": ")" +
                                      digest + R"(", "keys_file": "../escape.txt"}})");
  CHECK(outputs_error(out.path).message.find("subsample.keys_file: expected a file inside") !=
        std::string::npos);
}
