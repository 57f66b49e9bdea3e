// `reverify run --manifest` on the released digits example with code.repo written relative to the
// manifest (issue #12, item 7): the process runner clones such a repository, so the preflight
// reads the lockfile from it too (it once said "code.repo is not a local repository"), and a
// relative code.repo that is no git repository is named, resolved, in the note or the failure.
// Each case copies the release folder next to a trainer repository built by
// examples/digits/build_trainer_repo.sh; the data and eval set stay in the source tree.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "tests/support/digits_trainer.hpp"
#include "tests/support/run_program.hpp"
#include "tests/support/temp_dir.hpp"
#include "tests/support/text_search.hpp"

namespace fs = std::filesystem;
using json = nlohmann::json;
using namespace reverify::test;

namespace {

const std::string kRecordedLockfile =
    "def26d014d9b56751165658720389b7f564ef653dba3477ecb5e7b9e4469de56";

using reverify::test::contains;

// DIR/trainer (the example's trainer repository at the released commit) and DIR/release (the
// released files; manifest.json's data and eval set point into the source tree).
struct Release {
  TempDir dir{"reverify-run-lockfile-itest-"};
  json manifest;

  Release() {
    build_digits_trainer(dir.path / "trainer");
    const fs::path released = source_dir() / "examples/registry/digits-mlp/2026.11.1";
    fs::create_directories(dir.path / "release");
    fs::copy(released, dir.path / "release", fs::copy_options::recursive);  // subsample/ too
    std::ifstream in(released / "manifest.json");
    manifest = json::parse(in);
    REQUIRE(manifest["environment"]["lockfile"]["sha256"] == kRecordedLockfile);
    manifest["data"]["snapshot"]["uri"] = (source_dir() / "examples/digits/data").string();
    manifest["evaluation"]["set"]["uri"] =
        (source_dir() / "examples/digits/eval/digits-eval.csv").string();
  }

  // `reverify run` on the manifest with code.repo = `repo` (and the lockfile hash `lockfile`).
  Ran run(const std::string& repo, const std::string& lockfile = kRecordedLockfile) {
    json m = manifest;
    m["code"]["repo"] = repo;
    m["environment"]["lockfile"]["sha256"] = lockfile;
    write_file(dir.path / "release/manifest.json", m.dump());
    return run_cli(
        {"run", "digits-mlp@2026.11.1", "--manifest", (dir.path / "release/manifest.json").string(),
         "--work-dir", (dir.path / "work").string()},
        dir.path);
  }
};

}  // namespace

TEST_CASE("a relative code.repo that is a repository: the lockfile is checked, and it passes") {
  Release release;
  const Ran ran = release.run("../trainer");
  INFO(ran.out << ran.err);
  CHECK(ran.exit_code == 0);
  CHECK(contains(ran.out, "PASS  input:lockfile"));
  CHECK(contains(ran.out, "lockfile requirements.lock hash equals the recorded one"));
  CHECK_FALSE(contains(ran.out, "environment.lockfile"));  // no NOTE: it was verified
  CHECK(contains(ran.out, "\nverdict: passed"));
}

TEST_CASE("a relative code.repo that is a bare repository is checked the same way") {
  Release release;
  const Ran cloned =
      run_program({"git", "clone", "--quiet", "--bare", (release.dir.path / "trainer").string(),
                   (release.dir.path / "trainer.git").string()},
                  release.dir.path);
  REQUIRE_MESSAGE(cloned.exit_code == 0, cloned.err);
  const Ran ran = release.run("../trainer.git");
  INFO(ran.out << ran.err);
  CHECK(ran.exit_code == 0);
  CHECK(contains(ran.out, "lockfile requirements.lock hash equals the recorded one"));
  CHECK_FALSE(contains(ran.out, "environment.lockfile"));
}

TEST_CASE("a relative code.repo whose lockfile differs from the recorded one is input drift") {
  Release release;
  const Ran ran = release.run("../trainer", std::string(64, '0'));
  INFO(ran.out << ran.err);
  CHECK(ran.exit_code == 1);
  CHECK(contains(ran.out, "FAIL  input:lockfile"));
  CHECK(contains(ran.out, "lockfile requirements.lock at commit db4495b53240 hashes to " +
                              kRecordedLockfile.substr(0, 12) + "…, recorded 000000000000…"));
  CHECK(contains(ran.out, "\nverdict: failed:input-drift"));
  CHECK_FALSE(contains(ran.err, "started; its log"));  // no job ran
}

TEST_CASE("a relative code.repo that is a folder but no repository fails, naming the folder") {
  Release release;
  fs::create_directories(release.dir.path / "plain");
  // A folder inside the trainer repository is no repository either: git must not walk up to it.
  fs::create_directories(release.dir.path / "trainer/sub");
  for (const std::string repo : {"../plain", "../trainer/sub"}) {
    CAPTURE(repo);
    const Ran ran = release.run(repo);
    INFO(ran.out << ran.err);
    CHECK(ran.exit_code == 1);
    CHECK(contains(ran.out, "FAIL  input:lockfile"));
    CHECK(contains(ran.out, "code.repo " + repo + " (" +
                                (release.dir.path / repo.substr(3)).string() +
                                ") is not a git repository: lockfile requirements.lock cannot be "
                                "read at commit db4495b53240fcaa409ea833d7a1be24d65180e3"));
    CHECK(contains(ran.out, "\nverdict: failed:input-drift"));
  }
}

TEST_CASE("a relative code.repo that does not exist is a note naming where it was looked for") {
  Release release;
  const Ran ran = release.run("../missing");
  INFO(ran.out << ran.err);
  CHECK(ran.exit_code == 2);  // the runner cannot clone it: error:provision
  CHECK(contains(ran.out, "NOTE  environment.lockfile: code.repo ../missing (" +
                              (release.dir.path / "missing").string() +
                              ") does not exist on this machine; the lockfile is read by the "
                              "runner's checkout only"));
  CHECK(contains(ran.out, "cannot clone " + (release.dir.path / "missing").string()));
}
