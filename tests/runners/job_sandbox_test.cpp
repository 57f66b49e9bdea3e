// The job sandbox's pure parts: bwrap's argv for each mode, the folders made above binds, the
// check that keeps the verifier's own files out of a job's view, the plan's refusals, and the
// reading of bwrap's status file. (Running jobs in it: process_runner_itest, hostile_job_itest.)
#include <doctest/doctest.h>

#include <algorithm>

#include "runners/job_sandbox.hpp"
#include "tests/support/temp_dir.hpp"

using namespace reverify;
using namespace reverify::test;
namespace fs = std::filesystem;

namespace {

SandboxPlan job_plan() {
  SandboxPlan plan;
  plan.bwrap = "/usr/bin/bwrap";
  plan.links = {{"/bin", "usr/bin"}};
  plan.binds = {{"/usr", SandboxAccess::read_only, true},
                {"/etc/passwd", SandboxAccess::read_only, true},
                {"/var/lib/reverify/work/7/job/src", SandboxAccess::read_only},
                {"/var/lib/reverify/work/7/job/out", SandboxAccess::writable},
                {"/var/lib/reverify/work/7/job/in", SandboxAccess::read_only},
                {"/tmp/data/digits", SandboxAccess::read_only}};
  plan.workdir = "/var/lib/reverify/work/7/job/src";
  plan.tmp_bytes = 1 << 20;
  plan.status_fd = 9;
  plan.command = {"/usr/bin/python3", "train.py"};
  return plan;
}

std::ptrdiff_t position(const std::vector<std::string>& argv, const std::vector<std::string>& run) {
  const auto it = std::search(argv.begin(), argv.end(), run.begin(), run.end());
  return it == argv.end() ? -1 : it - argv.begin();
}

bool has(const std::vector<std::string>& argv, const std::vector<std::string>& run) {
  return position(argv, run) >= 0;
}

}  // namespace

TEST_CASE("an unprivileged daemon's sandbox: its own user namespace, no network, nothing else") {
  const auto argv = sandbox_argv(job_plan());
  CHECK(argv.front() == "/usr/bin/bwrap");
  for (const char* option :
       {"--unshare-user", "--disable-userns", "--unshare-pid", "--unshare-ipc", "--unshare-uts",
        "--unshare-cgroup", "--unshare-net", "--die-with-parent"}) {
    CHECK_MESSAGE(has(argv, {option}), option);
  }
  CHECK(has(argv, {"--json-status-fd", "9"}));
  CHECK(has(argv, {"--symlink", "usr/bin", "/bin"}));
  CHECK(has(argv, {"--ro-bind-try", "/usr", "/usr"}));
  CHECK(has(argv, {"--proc", "/proc", "--dev", "/dev"}));
  CHECK(has(argv, {"--perms", "1777", "--size", "1048576", "--tmpfs", "/tmp"}));
  CHECK(has(argv,
            {"--ro-bind", "/var/lib/reverify/work/7/job/src", "/var/lib/reverify/work/7/job/src"}));
  CHECK(has(argv,
            {"--ro-bind", "/var/lib/reverify/work/7/job/in", "/var/lib/reverify/work/7/job/in"}));
  CHECK(has(argv,
            {"--bind", "/var/lib/reverify/work/7/job/out", "/var/lib/reverify/work/7/job/out"}));
  CHECK_FALSE(has(argv, {"--bind", "/var/lib/reverify", "/var/lib/reverify"}));
  // The root goes read-only after every mount; the job's argv follows "--" unchanged.
  const auto remount = position(argv, {"--remount-ro", "/"});
  REQUIRE(remount > 0);
  CHECK(remount > position(argv, {"--bind", "/var/lib/reverify/work/7/job/out"}));
  CHECK(has(argv,
            {"--chdir", "/var/lib/reverify/work/7/job/src", "--", "/usr/bin/python3", "train.py"}));
  CHECK(argv.back() == "train.py");
  CHECK_FALSE(has(argv, {"/usr/bin/setpriv"}));
}

TEST_CASE("a root daemon's sandbox runs the job as the job uid through setpriv") {
  auto plan = job_plan();
  plan.as_root = true;
  plan.job_uid = 4242;
  plan.job_gid = 4343;
  const auto argv = sandbox_argv(plan);
  CHECK_FALSE(has(argv, {"--unshare-user"}));
  CHECK_FALSE(has(argv, {"--disable-userns"}));
  CHECK(has(argv, {"--unshare-pid"}));
  CHECK(has(argv, {"--", "/usr/bin/setpriv", "--reuid=4242", "--regid=4343", "--clear-groups",
                   "--inh-caps=-all", "--bounding-set=-all", "--no-new-privs", "--",
                   "/usr/bin/python3", "train.py"}));
}

TEST_CASE("a model that declares network keeps it; no other option changes") {
  auto plan = job_plan();
  plan.network = true;
  auto argv = sandbox_argv(plan);
  CHECK_FALSE(has(argv, {"--unshare-net"}));
  argv.insert(argv.begin() + 1, "--unshare-net");
  auto closed = sandbox_argv(job_plan());
  std::stable_partition(closed.begin() + 1, closed.end(),
                        [](const std::string& a) { return a == "--unshare-net"; });
  std::stable_partition(argv.begin() + 1, argv.end(),
                        [](const std::string& a) { return a == "--unshare-net"; });
  CHECK(argv == closed);
}

TEST_CASE("every folder above a bind is made 0755, parents first, none inside a bind") {
  auto plan = job_plan();
  plan.binds.push_back({"/var/lib/reverify/work/7/job/src/data", SandboxAccess::read_only});
  const auto argv = sandbox_argv(plan);
  const auto dir = [&](const std::string& path) {
    return position(argv, {"--perms", "0755", "--dir", path});
  };
  CHECK(dir("/var") > 0);
  CHECK(dir("/var/lib") > dir("/var"));
  CHECK(dir("/var/lib/reverify/work/7/job") > dir("/var/lib/reverify/work/7"));
  CHECK(dir("/etc") > 0);                              // above a system file
  CHECK(dir("/tmp/data") > 0);                         // inside the job's /tmp
  CHECK(dir("/tmp") < 0);                              // the tmpfs itself
  CHECK(dir("/var/lib/reverify/work/7/job/src") < 0);  // a bind provides it
  // Folders come before the binds that need them, parents before children.
  CHECK(dir("/var/lib/reverify/work/7/job") <
        position(argv, {"--ro-bind", "/var/lib/reverify/work/7/job/src"}));
  CHECK(position(argv, {"--ro-bind", "/var/lib/reverify/work/7/job/src",
                        "/var/lib/reverify/work/7/job/src"}) <
        position(argv, {"--ro-bind", "/var/lib/reverify/work/7/job/src/data"}));
}

TEST_CASE("a path that is, holds or lies inside one of the verifier's own is never shown") {
  TempDir tmp;
  const auto state = tmp.path / "state";
  fs::create_directories(state / "work" / "7" / "job" / "out");
  fs::create_directories(tmp.path / "etc" / "reverify");
  const auto db = tmp.write("state/reverify.db", "sqlite");
  const auto token = tmp.write("etc/reverify/api.token", "secret");
  const std::vector<fs::path> own = {db, tmp.path / "etc" / "reverify"};
  CHECK(check_not_verifier_own(state / "work" / "7" / "job" / "out", "out", own).ok());
  CHECK(
      check_not_verifier_own(tmp.path / "etc", "x", {token}).error().message.find(token.string()) !=
      std::string::npos);
  const auto holds = check_not_verifier_own(state, "REVERIFY_DATA", own);
  REQUIRE_FALSE(holds.ok());
  CHECK(holds.error().code == ErrorCode::provision);
  CHECK(holds.error().message.find("REVERIFY_DATA: " + state.string()) == 0);
  CHECK_FALSE(check_not_verifier_own(db, "x", own).ok());        // is one
  CHECK_FALSE(check_not_verifier_own(token, "x", own).ok());     // inside a secret folder
  CHECK_FALSE(check_not_verifier_own(tmp.path, "x", own).ok());  // holds both
  CHECK_FALSE(check_not_verifier_own(tmp.path / "a/../state", "x", own).ok());  // normalised
  fs::create_directory_symlink(state, tmp.path / "innocent");
  CHECK_FALSE(check_not_verifier_own(tmp.path / "innocent", "x", own).ok());  // through a link
}

TEST_CASE("a plan refuses a missing bind, a secret, and a command the sandbox would not show") {
  TempDir tmp;
  fs::create_directories(tmp.path / "src");
  const auto secret = tmp.write("secret.key", "k");
  SandboxJob job;
  job.binds = {{tmp.path / "src", SandboxAccess::read_only}};
  job.workdir = tmp.path / "src";
  job.command = {"/usr/bin/python3", "train.py"};
  SandboxConfig config;
  auto plan = plan_sandbox(config, job, {secret});
  REQUIRE_MESSAGE(plan.ok(), (plan.ok() ? "" : plan.error().message));
  CHECK(plan->bwrap == "/usr/bin/bwrap");
  CHECK_FALSE(plan->network);

  SUBCASE("a missing bind") {
    job.binds.push_back({tmp.path / "nowhere", SandboxAccess::read_only});
    const auto missing = plan_sandbox(config, job, {});
    REQUIRE_FALSE(missing.ok());
    CHECK(missing.error().message.find("nowhere") != std::string::npos);
  }
  SUBCASE("a bind that shows a secret, from the job or from the config") {
    auto shown = job;
    shown.binds.push_back({tmp.path, SandboxAccess::read_only});
    CHECK_FALSE(plan_sandbox(config, shown, {secret}).ok());
    config.writable = {tmp.path};
    CHECK_FALSE(plan_sandbox(config, job, {secret}).ok());
  }
  SUBCASE("an executable outside everything shown names the key that would show it") {
    const auto exe = tmp.write("opt/python", "");
    job.command = {exe.string()};
    const auto hidden = plan_sandbox(config, job, {});
    REQUIRE_FALSE(hidden.ok());
    CHECK(hidden.error().message.find("runner.process.sandbox.read_only") != std::string::npos);
    config.read_only = {tmp.path / "opt"};
    CHECK(plan_sandbox(config, job, {}).ok());
  }
  SUBCASE("a relative bind") {
    job.binds.push_back({"relative/dir", SandboxAccess::read_only});
    CHECK_FALSE(plan_sandbox(config, job, {}).ok());
  }
}

TEST_CASE("bwrap's status file says whether the job ran, and its exit") {
  TempDir tmp;
  const auto ran = tmp.write("ran.json",
                             "{ \"child-pid\": 12, \"pid-namespace\": 4026532174 }\n"
                             "{ \"exit-code\": 3 }\n");
  CHECK(sandbox_job_exit(ran) == 3);
  const auto failed = tmp.write("failed.json", "{ \"child-pid\": 12 }\n");
  CHECK_FALSE(sandbox_job_exit(failed).has_value());
  CHECK_FALSE(sandbox_job_exit(tmp.path / "none.json").has_value());
  CHECK_FALSE(sandbox_job_exit(tmp.write("garbage.json", "{ \"exit-code\n")).has_value());
}
