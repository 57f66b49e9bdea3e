// Ownership of a `reverify run`'s verification: held while the process lives, released however
// it ends (kill -9 included), so a reconciler can tell a live run from an orphan.
#include <doctest/doctest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/support/temp_dir.hpp"
#include "verify/run_owner.hpp"

using namespace reverify;

namespace {

VerificationRow cli_row() {
  VerificationRow row;
  row.model = "m";
  row.version = "1";
  row.state = VerificationState::running;
  row.trigger = VerificationTrigger::cli;
  return row;
}

}  // namespace

TEST_CASE("a run owns its version while it lives; a second run of it is refused") {
  test::TempDir dir;
  CHECK_FALSE(run_owner_alive(dir.path, "m", "1"));
  CHECK(is_orphaned_cli_run(cli_row(), dir.path));  // never owned: nobody will finish it
  {
    auto owned = RunOwnership::acquire(dir.path, "m", "1");
    REQUIRE(owned.ok());
    CHECK(run_owner_alive(dir.path, "m", "1"));
    CHECK_FALSE(run_owner_alive(dir.path, "m", "2"));
    CHECK_FALSE(is_orphaned_cli_run(cli_row(), dir.path));
    auto second = RunOwnership::acquire(dir.path, "m", "1");
    REQUIRE_FALSE(second.ok());
    CHECK(second.error().code == ErrorCode::conflict);
    CHECK(RunOwnership::acquire(dir.path, "m", "2").ok());
  }
  CHECK_FALSE(run_owner_alive(dir.path, "m", "1"));
  VerificationRow daemon_row = cli_row();
  daemon_row.trigger = VerificationTrigger::manual;
  CHECK_FALSE(is_orphaned_cli_run(daemon_row, dir.path));  // the daemon's own: its start reconciles
}

TEST_CASE("the ownership of a process killed with SIGKILL is gone at once") {
  test::TempDir dir;
  int ready[2];
  REQUIRE(::pipe(ready) == 0);
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    auto owned = RunOwnership::acquire(dir.path, "m", "1");
    const char byte = owned.ok() ? '1' : '0';
    (void)!::write(ready[1], &byte, 1);
    ::pause();
    ::_exit(0);
  }
  char byte = 0;
  REQUIRE(::read(ready[0], &byte, 1) == 1);
  REQUIRE(byte == '1');
  CHECK(run_owner_alive(dir.path, "m", "1"));
  CHECK_FALSE(is_orphaned_cli_run(cli_row(), dir.path));
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
  CHECK_FALSE(run_owner_alive(dir.path, "m", "1"));
  CHECK(is_orphaned_cli_run(cli_row(), dir.path));
  ::close(ready[0]);
  ::close(ready[1]);
}
