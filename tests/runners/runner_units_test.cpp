// Pure pieces of the runners: log tail, Docker log frames, API versions, exit status, the space
// watch's evidence, contract environment, rebuild ids, factory.
#include <doctest/doctest.h>

#include <cerrno>
#include <limits>

#include "runners/docker_api.hpp"
#include "runners/docker_log_stream.hpp"
#include "runners/job_contract.hpp"
#include "runners/log_tail.hpp"
#include "runners/runner_factory.hpp"
#include "runners/space_watch.hpp"
#include "tests/support/temp_dir.hpp"

using namespace reverify;
using reverify::test::TempDir;

TEST_CASE("LogTail keeps everything under the cap, without a marker") {
  LogTail tail(100);
  tail.append("line 1\n");
  tail.append("line 2\n");
  CHECK(tail.text() == "line 1\nline 2\n");
  CHECK(tail.total_bytes() == 14);
}

TEST_CASE("LogTail keeps the last cap bytes behind a TRUNCATED marker") {
  LogTail tail(10);
  for (int i = 0; i < 100; ++i)
    tail.append(std::string(1, static_cast<char>('a' + i % 26)));
  const std::string text = tail.text();
  CHECK(text.find("TRUNCATED") != std::string::npos);
  CHECK(text.find("the first 90 bytes were dropped") != std::string::npos);
  std::string expected;
  for (int i = 90; i < 100; ++i)
    expected += static_cast<char>('a' + i % 26);
  CHECK(text.substr(text.size() - 10) == expected);
}

TEST_CASE("LogTail handles one chunk larger than the cap") {
  LogTail tail(4);
  tail.append("abcdefgh");
  CHECK(tail.text().ends_with("\nefgh"));
  CHECK(tail.text().find("first 4 bytes") != std::string::npos);
}

std::string frame(char stream, std::string_view payload) {
  std::string out(8, '\0');
  out[0] = stream;
  const auto n = static_cast<std::uint32_t>(payload.size());
  out[4] = static_cast<char>(n >> 24);
  out[5] = static_cast<char>(n >> 16);
  out[6] = static_cast<char>(n >> 8);
  out[7] = static_cast<char>(n);
  return out + std::string(payload);
}

TEST_CASE("DockerLogStream demultiplexes frames split across chunks at every offset") {
  const std::string stream =
      frame(1, "hello out\n") + frame(2, "err\n") + frame(1, "") + frame(1, std::string(300, 'x'));
  for (std::size_t cut = 0; cut <= stream.size(); ++cut) {
    std::vector<std::pair<int, std::string>> got;
    DockerLogStream decoder(
        [&](int s, std::string_view p) { got.emplace_back(s, std::string(p)); });
    decoder.feed(std::string_view(stream).substr(0, cut));
    decoder.feed(std::string_view(stream).substr(cut));
    REQUIRE(got.size() == 4);
    CHECK(got[0] == std::make_pair(1, std::string("hello out\n")));
    CHECK(got[1] == std::make_pair(2, std::string("err\n")));
    CHECK(got[2].second.empty());
    CHECK(got[3].second == std::string(300, 'x'));
    CHECK(decoder.pending() == 0);
  }
}

TEST_CASE("DockerLogStream keeps an unfinished frame pending") {
  int calls = 0;
  DockerLogStream decoder([&](int, std::string_view) { ++calls; });
  decoder.feed(frame(1, "abcdef").substr(0, 10));
  CHECK(calls == 0);
  CHECK(decoder.pending() == 10);
}

TEST_CASE("API versions compare as numbers") {
  CHECK(api_version_less("1.9", "1.41"));
  CHECK(api_version_less("1.40", "1.41"));
  CHECK_FALSE(api_version_less("1.41", "1.41"));
  CHECK_FALSE(api_version_less("1.43", "1.41"));
  CHECK_FALSE(api_version_less("garbage", "1.41"));
}

TEST_CASE("job_exit_status: success, exit status, signal, timeout") {
  CHECK(job_exit_status(JobExit{0, false, "", std::nullopt}).ok());
  const auto exit3 = job_exit_status(JobExit{3, false, "a\nb\nboom\n", std::nullopt});
  REQUIRE_FALSE(exit3.ok());
  CHECK(exit3.error().code == ErrorCode::job);
  CHECK(exit3.error().message.find("exited with status 3") != std::string::npos);
  CHECK(exit3.error().message.ends_with("boom\n"));
  const auto killed = job_exit_status(JobExit{137, false, "", std::nullopt});
  CHECK(killed.error().message.find("signal 9") != std::string::npos);
  const auto timeout = job_exit_status(JobExit{143, true, "", std::nullopt});
  CHECK(timeout.error().code == ErrorCode::job);
  CHECK(timeout.error().message.find("timeout") != std::string::npos);
}

TEST_CASE("job_exit_status: the platform's fault is infra, a bound the job hit comes first") {
  JobExit disk{1, false, "OSError: [Errno 28] No space left on device\n", std::nullopt};
  disk.platform_fault = PlatformFault{"the file system of /state was full", {}};
  const auto infra = job_exit_status(disk);
  CHECK(infra.error().code == ErrorCode::infra);
  CHECK(infra.error().message.rfind("the file system of /state was full; the job exited with "
                                    "status 1",
                                    0) == 0);
  JobExit bomb{143, true, "", std::nullopt};
  bomb.limit_hit = "the job hit its pids limit of 64";
  const auto limit = job_exit_status(bomb);
  CHECK(limit.error().code == ErrorCode::job);
  CHECK(limit.error().message.rfind("the job hit its pids limit of 64; the job ran past", 0) == 0);
}

TEST_CASE("SpaceWatch: the kernel's words and a refused log write are evidence; space is checked") {
  TempDir dir;
  SpaceWatchConfig config;
  SpaceWatch watch({dir.path}, config);
  watch.sample();
  CHECK_FALSE(watch.fault("step 3\nValueError: bad shape\n", std::nullopt).has_value());
  // A job told "No space left on device" wherever it wrote (a host /tmp, say) failed on the disk.
  const auto told =
      watch.fault("saving\nOSError: [Errno 28] No space left on device\n", std::nullopt);
  REQUIRE(told.has_value());
  CHECK(told->evidence["kind"] == "disk_full");
  CHECK(told->evidence["kernel_said"] == "No space left on device (ENOSPC)");
  // ... but only in its last lines: an old warning far up the log decides nothing.
  std::string old = "OSError: Read-only file system\n";
  for (int i = 0; i < 20; ++i)
    old += "step " + std::to_string(i) + "\n";
  CHECK_FALSE(watch.fault(old, std::nullopt).has_value());
  const auto refused = watch.fault("", LogWriteError{EROFS, dir.path / "job.log", 4096});
  REQUIRE(refused.has_value());
  CHECK(refused->evidence["kind"] == "read_only_file_system");
  CHECK(refused->reason.find((dir.path / "job.log").string()) != std::string::npos);
  CHECK(refused->reason.find("Read-only file system (EROFS)") != std::string::npos);

  CHECK(watch.check_before_start().ok());
  config.min_free_bytes = std::numeric_limits<std::uint64_t>::max();
  const auto short_of_space = SpaceWatch({dir.path / "not-yet"}, config).check_before_start();
  REQUIRE_FALSE(short_of_space.ok());
  CHECK(short_of_space.error().code == ErrorCode::infra);
  CHECK(short_of_space.error().message.find((dir.path / "not-yet").string() + ": ") == 0);
  CHECK(short_of_space.error().message.find("runner.space.min_free_bytes") != std::string::npos);
}

TEST_CASE("contract_environment: contract variables win over the manifest's env") {
  RebuildSpec spec;
  spec.rebuild_id = "r1";
  spec.manifest.environment = Environment{};
  spec.manifest.environment->env = {
      {"PYTHONHASHSEED", "0"}, {"REVERIFY_OUT", "/evil"}, {"REVERIFY_MAX_STEPS", "9"}};
  spec.manifest.run.source_date_epoch = 1793000000;
  spec.mode = RebuildMode::full;
  auto env = contract_environment(
      spec, ContractPaths{"/in/config.json", "/in/seeds.json", "/out", "", "/eval"});
  CHECK(env["PYTHONHASHSEED"] == "0");
  CHECK(env["REVERIFY_OUT"] == "/out");
  CHECK(env["REVERIFY_MODE"] == "full");
  CHECK(env.count("REVERIFY_MAX_STEPS") == 0);
  CHECK(env.count("REVERIFY_DATA") == 0);
  CHECK(env["REVERIFY_EVAL"] == "/eval");
  CHECK(env["SOURCE_DATE_EPOCH"] == "1793000000");
  CHECK(env.count("REVERIFY_SEED_OVERRIDE") == 0);

  spec.mode = RebuildMode::steps;
  spec.max_steps = 50;
  spec.seed_override = 7;
  env = contract_environment(spec, ContractPaths{"/c", "/s", "/o", "/d", ""});
  CHECK(env["REVERIFY_MODE"] == "steps");
  CHECK(env["REVERIFY_MAX_STEPS"] == "50");
  CHECK(env["REVERIFY_SEED_OVERRIDE"] == "7");
  CHECK(env["REVERIFY_DATA"] == "/d");
  CHECK(env.count("REVERIFY_SUBSAMPLE_FRACTION") == 0);

  // Subsample mode: the manifest's rule parameters, a fraction as a plain decimal; none in the
  // other modes, even when the manifest's env sets them.
  spec.manifest.subsample = SubsampleReference{};
  spec.manifest.subsample->fraction = 0.1;
  spec.manifest.subsample->salt = "salt: with spaces";
  spec.manifest.environment->env["REVERIFY_SUBSAMPLE_SALT"] = "from-env";
  env = contract_environment(spec, ContractPaths{"/c", "/s", "/o", "/d", ""});
  CHECK(env.count("REVERIFY_SUBSAMPLE_FRACTION") == 0);
  CHECK(env.count("REVERIFY_SUBSAMPLE_SALT") == 0);
  spec.mode = RebuildMode::subsample;
  env = contract_environment(spec, ContractPaths{"/c", "/s", "/o", "/d", ""});
  CHECK(env["REVERIFY_MODE"] == "subsample");
  CHECK(env["REVERIFY_SUBSAMPLE_FRACTION"] == "0.1");
  CHECK(env["REVERIFY_SUBSAMPLE_SALT"] == "salt: with spaces");
  CHECK(env.count("REVERIFY_MAX_STEPS") == 0);
  spec.manifest.subsample->fraction = 1;
  CHECK(contract_environment(spec, ContractPaths{"/c", "/s", "/o", "/d", ""})
            .at("REVERIFY_SUBSAMPLE_FRACTION") == "1");
}

TEST_CASE("scratch_dir refuses rebuild ids that could leave the scratch root") {
  CHECK(scratch_dir("r-1.a_b", "", "/s").value() == std::filesystem::path("/s/r-1.a_b"));
  CHECK(scratch_dir("r1", "/w", "/s").value() == std::filesystem::path("/w"));
  for (const char* bad : {"", ".", "..", "a/b", "a b", "../x"}) {
    const auto dir = scratch_dir(bad, "", "/s");
    REQUIRE_FALSE(dir.ok());
    CHECK(dir.error().code == ErrorCode::invalid_argument);
  }
}

TEST_CASE("resolved_job_workdir: a symlink in the checkout cannot take run.workdir out of it") {
  namespace fs = std::filesystem;
  test::TempDir tmp("workdir-");
  const fs::path checkout = tmp.path / "src";
  fs::create_directories(checkout / "inside/deep");
  fs::create_directories(tmp.path / "outside/sub");
  fs::create_directory_symlink(tmp.path / "outside", checkout / "escape");
  fs::create_directory_symlink("..", checkout / "up");
  fs::create_directory_symlink("inside", checkout / "alias");
  RebuildSpec spec;
  for (const char* leaving :
       {"escape", "escape/sub", "escape/not-yet", "up", "alias/../up/src/up"}) {
    CAPTURE(leaving);
    spec.manifest.run.workdir = leaving;
    const auto resolved = resolved_job_workdir(spec, checkout);
    REQUIRE_FALSE(resolved.ok());
    CHECK(resolved.error().code == ErrorCode::manifest_invalid);
    CHECK(resolved.error().message.find("run.workdir: \"" + std::string(leaving) + "\" leads") ==
          0);
    CHECK(resolved.error().message.find("outside the checkout") != std::string::npos);
  }
  for (const char* staying : {"inside", "alias/deep", "alias/missing", ".", "/abs/in/the/image"}) {
    CAPTURE(staying);
    spec.manifest.run.workdir = staying;
    CHECK(resolved_job_workdir(spec, checkout).ok());
  }
  spec.manifest.run.workdir.reset();
  CHECK(resolved_job_workdir(spec, checkout).value() == fs::canonical(checkout));
}

TEST_CASE("make_runner builds the runner of each kind") {
  RunnerConfig config;
  CHECK(make_runner(config).value()->kind() == RunnerKind::process);
  config.kind = RunnerKind::docker;
  CHECK(make_runner(config).value()->kind() == RunnerKind::docker);
  CHECK_FALSE(enum_from_string<RunnerKind>("podman").has_value());
}
