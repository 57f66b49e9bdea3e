// The state folder (verify/state_dir.hpp): one reverifyd per state_dir and one `reverify run` per
// version, each lock released however its holder ends (kill -9 included) and naming its holder's
// pid while held; a store that is missing or empty where the folder shows history is refused;
// a backup restores every verification under a store id of its own.
#include <doctest/doctest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>

#include "core/suggested_command.hpp"
#include "core/text.hpp"
#include "tests/support/files.hpp"
#include "tests/support/temp_dir.hpp"
#include "verify/state_dir.hpp"
#include "verify/store_marker.hpp"

using namespace reverify;
namespace fs = std::filesystem;

namespace {

// A config whose state_dir, work and scratch folders live in `dir`, as read from the file
// kConfigFile there (the commands its refusals suggest name it).
constexpr const char* kConfigFile = "rev erify's.yaml";
Config config_in(const fs::path& dir) {
  Config config;
  config.api.command_scope = config_scope(dir / kConfigFile);
  config.state_dir = dir / "state";
  config.runner.process.scratch_root = config.state_dir / "scratch";
  config.runner.docker.scratch_root = config.state_dir / "scratch";
  return config;
}

UnixSeconds fixed_now() {
  return 1'800'000'000;
}

// A store holding one model version and `count` more finished verifications, each with a page.
void record_verifications(Store& store, int count) {
  ModelVersionRow version;
  version.model = "m";
  version.version = "1";
  version.source = "local";
  version.location = "/registry/m/1/manifest.json";
  REQUIRE(store.upsert_model_version(version).ok());
  for (int i = 0; i < count; ++i) {
    auto id = store.enqueue(QueuedVerification{"m", "1"});
    REQUIRE(id.ok());
    Verdict verdict;
    verdict.cls = VerdictClass::passed;
    verdict.explanation = "passed";
    PageToRecord page;
    page.event.dedup_key = "reverify/m/1";
    page.event.action = PageAction::resolve;
    page.senders = {"hook"};
    REQUIRE(store.record_verdict(*id, verdict, nullptr, "", {page}).ok());
  }
}

StoreHighWater high_water_of(Store& store) {
  auto mark = store.high_water();
  REQUIRE(mark.ok());
  return *mark;
}

// The marker's mark as the folder keeps it.
StoreHighWater marked(const Config& config) {
  const auto marker = read_store_marker(config.state_dir);
  REQUIRE(marker.has_value());
  return marker->handed_out;
}

void remove_store_files(const Config& config) {
  for (const char* suffix : {"-wal", "-shm", ""})
    fs::remove(config.db_path().string() + suffix);
}

std::size_t verifications_in(Store& store) {
  auto all = store.verifications("", "", 1000);
  REQUIRE(all.ok());
  return all->size();
}

}  // namespace

TEST_CASE("a run owns its version while it lives; a second run of it is refused, naming it") {
  test::TempDir dir;
  CHECK(run_owner(dir.path, "m", "1").empty());  // never owned
  {
    auto owned = StateLock::version(dir.path, "m", "1", "reverify run");
    REQUIRE(owned.ok());
    CHECK(run_owner(dir.path, "m", "1") == "pid " + std::to_string(::getpid()) + " (reverify run)");
    CHECK(run_owner(dir.path, "m", "2").empty());
    auto second =
        StateLock::version(dir.path, "m", "1", "reverify run", std::chrono::milliseconds(50));
    REQUIRE_FALSE(second.ok());
    CHECK(second.error().code == ErrorCode::conflict);
    CHECK(second.error().message.find("pid " + std::to_string(::getpid())) != std::string::npos);
    CHECK(StateLock::version(dir.path, "m", "2", "reverify run").ok());
  }
  CHECK(run_owner(dir.path, "m", "1").empty());  // released with its holder
}

TEST_CASE("the locks of a process killed with SIGKILL are gone at once") {
  test::TempDir dir;
  int ready[2];
  REQUIRE(::pipe(ready) == 0);
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    auto owned = StateLock::version(dir.path, "m", "1", "reverify run");
    auto whole = StateLock::whole(dir.path, "reverifyd");
    const char byte = owned.ok() && whole.ok() ? '1' : '0';
    (void)!::write(ready[1], &byte, 1);
    ::pause();
    ::_exit(0);
  }
  char byte = 0;
  REQUIRE(::read(ready[0], &byte, 1) == 1);
  REQUIRE(byte == '1');
  CHECK(run_owner(dir.path, "m", "1") == "pid " + std::to_string(child) + " (reverify run)");
  // A second reverifyd on the state_dir: refused, naming the first one's pid.
  auto second = StateLock::whole(dir.path, "reverifyd");
  REQUIRE_FALSE(second.ok());
  CHECK(second.error().code == ErrorCode::conflict);
  CHECK(second.error().message.find("pid " + std::to_string(child) + " (reverifyd)") !=
        std::string::npos);
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
  CHECK(run_owner(dir.path, "m", "1").empty());
  CHECK(StateLock::whole(dir.path, "reverifyd").ok());
  ::close(ready[0]);
  ::close(ready[1]);
}

TEST_CASE("a missing or empty store where the state folder shows history is refused") {
  test::TempDir dir;
  const Config config = config_in(dir.path);
  SUBCASE("a fresh state folder gets a new store, and the marker names it") {
    auto store = open_state_store(config, fixed_now);
    REQUIRE(store.ok());
    const std::string id = (*store)->identity().id;
    CHECK(id.size() == 16);
    CHECK(test::read_file(config.state_dir / "reverify.store-id") ==
          id + "\nverifications 0\npages 0\n");
    // Each id handed out is in the marker before the call that handed it out returns.
    record_verifications(**store, 2);
    CHECK(marked(config) == StoreHighWater{2, 2});
  }
  SUBCASE("a marker of an earlier version (its id alone) is read, and given the mark") {
    test::write_file(config.state_dir / "reverify.store-id", "0123456789abcdef\n");
    const auto old = read_store_marker(config.state_dir);
    REQUIRE(old.has_value());
    CHECK(old->store_id == "0123456789abcdef");
    CHECK(old->handed_out == StoreHighWater{});
  }
  const auto lose_the_store = [&](bool deleted) {
    {
      auto store = open_state_store(config, fixed_now);
      REQUIRE(store.ok());
      record_verifications(**store, 2);
    }
    CAPTURE(deleted);
    for (const char* suffix : {"-wal", "-shm"})
      fs::remove(config.db_path().string() + suffix);
    if (deleted)
      fs::remove(config.db_path());
    else
      fs::resize_file(config.db_path(), 0);
    auto refused = open_state_store(config, fixed_now);
    REQUIRE_FALSE(refused.ok());
    CHECK(refused.error().code == ErrorCode::conflict);
    const std::string& message = refused.error().message;
    CHECK(message.find(config.db_path().string() + (deleted ? " is missing" : " is empty")) !=
          std::string::npos);
    CHECK(message.find("reverify.store-id names store") != std::string::npos);
    // Each way on on a line of its own, runnable as printed (BACKUP: the file to restore).
    const std::string& scope = config.api.command_scope;
    CHECK(scope.ends_with("/rev erify'\\''s.yaml'"));
    CHECK(message.find("\n  reverify restore BACKUP " + scope + "\n") != std::string::npos);
    CHECK(message.ends_with("\n  reverify restore --empty " + scope));
    CHECK((deleted ? !fs::exists(config.db_path()) : fs::file_size(config.db_path()) == 0));
    // Starting over is a decision: `restore --empty` makes a new store with an id of its own.
    auto fresh = restore_state_store(config, std::nullopt, fixed_now);
    REQUIRE(fresh.ok());
    CHECK(verifications_in(**fresh) == 0);
  };
  SUBCASE("deleted after a store was there") {
    lose_the_store(true);
  }
  SUBCASE("cut to 0 bytes after a store was there") {
    lose_the_store(false);
  }
  SUBCASE("work left in the work folder, from before the marker existed") {
    fs::create_directories(config.work_root() / "verification-7");
    auto refused = open_state_store(config, fixed_now);
    REQUIRE_FALSE(refused.ok());
    CHECK(refused.error().message.find(config.work_root().string() + " holds 1 entries") !=
          std::string::npos);
  }
}

TEST_CASE("a damaged store is named with the way out, its commands naming the config") {
  test::TempDir dir;
  const Config config = config_in(dir.path);
  fs::create_directories(config.state_dir);
  test::write_file(config.db_path(), "not a database at all, but long enough to be read");
  auto refused = open_state_store(config, fixed_now);
  REQUIRE_FALSE(refused.ok());
  const std::string& message = refused.error().message;
  CHECK(message.find(config.db_path().string() + " is damaged or is not a reverify store") !=
        std::string::npos);
  const std::string& scope = config.api.command_scope;
  CHECK(message.find("`reverify restore BACKUP " + scope + "`") != std::string::npos);
  CHECK(message.find("`reverify restore --empty " + scope + "`") != std::string::npos);
  CHECK(message.find("FILE") == std::string::npos);
}

TEST_CASE("a backup restores every verification into a store with an id of its own") {
  test::TempDir dir;
  const Config config = config_in(dir.path);
  std::string original_id;
  {
    auto store = open_state_store(config, fixed_now);
    REQUIRE(store.ok());
    original_id = (*store)->identity().id;
    record_verifications(**store, 3);
    // The backup reads its own connection's snapshot, as `reverify backup` does beside a daemon.
    auto reader = Store::open(config.db_path(), fixed_now, /*read_only=*/true);
    REQUIRE(reader.ok());
    REQUIRE((*reader)->backup_to(dir.path / "backup.db").ok());
    const auto again = (*reader)->backup_to(dir.path / "backup.db");
    REQUIRE_FALSE(again.ok());  // never overwrites
    CHECK(again.error().message.find("exists") != std::string::npos);
    record_verifications(**store, 1);  // after the backup: lost with the disk
  }
  CHECK_FALSE(fs::exists(dir.path / "backup.db.partial"));
  // A restore over a store that holds verifications is refused: it never overwrites history.
  auto over = restore_state_store(config, dir.path / "backup.db", fixed_now);
  REQUIRE_FALSE(over.ok());
  CHECK(over.error().message.find("holds 4 verification(s)") != std::string::npos);

  fs::remove(config.db_path());
  for (const char* suffix : {"-wal", "-shm"})
    fs::remove(config.db_path().string() + suffix);
  REQUIRE_FALSE(open_state_store(config, fixed_now).ok());
  SUBCASE("refused while another process holds the state_dir") {
    auto daemon = StateLock::whole(config.state_dir, "reverifyd");
    REQUIRE(daemon.ok());
    auto refused = restore_state_store(config, dir.path / "backup.db", fixed_now);
    REQUIRE_FALSE(refused.ok());
    CHECK(refused.error().message.find("(reverifyd)") != std::string::npos);
    CHECK(refused.error().message.find("stop reverifyd") != std::string::npos);
  }
  SUBCASE("refused for a file that is not a reverify store") {
    test::write_file(dir.path / "junk.db", "not a database at all, but long enough to be read");
    CHECK_FALSE(restore_state_store(config, dir.path / "junk.db", fixed_now).ok());
  }
  SUBCASE("restored") {
    auto restored = restore_state_store(config, dir.path / "backup.db", fixed_now);
    REQUIRE(restored.ok());
    CHECK(verifications_in(**restored) == 3);
    const StoreIdentity identity = (*restored)->identity();
    CHECK(identity.id.size() == 16);
    CHECK(identity.id != original_id);  // pages recorded from now on get keys of their own
    CHECK(identity.restored_from == original_id);
    CHECK(read_store_marker(config.state_dir)->store_id == identity.id);
    // Its ids continue after every id handed out here, the one recorded after the backup too.
    CHECK(marked(config) == StoreHighWater{4, 4});
    record_verifications(**restored, 1);
    CHECK(high_water_of(**restored) == StoreHighWater{5, 5});
    restored->reset();
    // Opened again, it keeps that id; the backup file itself is still a backup copy.
    auto reopened = open_state_store(config, fixed_now);
    REQUIRE(reopened.ok());
    CHECK((*reopened)->identity().id == identity.id);
    auto backup = Store::open(dir.path / "backup.db", fixed_now, /*read_only=*/true);
    REQUIRE(backup.ok());
    CHECK((*backup)->identity().id == original_id);
  }
}

TEST_CASE("a lock survives its file being deleted: the holder is still found and named") {
  test::TempDir dir;
  const fs::path state_dir = dir.path / "state";
  const std::string me = "pid " + std::to_string(::getpid());
  SUBCASE("the state_dir's lock is the folder's: deleting reverifyd.lock changes nothing") {
    auto held = StateLock::whole(state_dir, "reverifyd");
    REQUIRE(held.ok());
    REQUIRE(fs::remove(state_dir / "reverifyd.lock"));
    auto second = StateLock::whole(state_dir, "reverifyd");
    REQUIRE_FALSE(second.ok());
    CHECK(second.error().code == ErrorCode::conflict);
    // Named from the kernel's table of locks, its label gone.
    CHECK(second.error().message.find("is held by " + me) != std::string::npos);
    // A restore beside it is refused too.
    Config config = config_in(dir.path);
    CHECK_FALSE(restore_state_store(config, std::nullopt, fixed_now).ok());
  }
  SUBCASE("a version's lock file deleted while held stays held") {
    const fs::path file = state_dir / "owners" / "m@1.lock";
    auto held = StateLock::version(state_dir, "m", "1", "reverify run");
    REQUIRE(held.ok());
    REQUIRE(fs::remove(file));
    const std::string owner = run_owner(state_dir, "m", "1");
    CHECK(owner.find(me) == 0);
    CHECK(owner.find("whose lock file " + fs::weakly_canonical(state_dir).string() +
                     "/owners/m@1.lock was deleted") != std::string::npos);
    auto second =
        StateLock::version(state_dir, "m", "1", "reverify run", std::chrono::milliseconds(50));
    REQUIRE_FALSE(second.ok());
    CHECK(second.error().code == ErrorCode::conflict);
    CHECK(second.error().message.find(me) != std::string::npos);
    // The refused try left a new file at the path; it holds nothing.
    CHECK(run_owner(state_dir, "m", "1").find(me) == 0);
    const auto owners = live_run_owners(state_dir);
    REQUIRE(owners.size() == 1);
    CHECK(owners.front().find("m@1 (" + me) == 0);
    CHECK(StateLock::version(state_dir, "m", "2", "reverify run").ok());  // others are free
  }
  // Released with the holder: the version is free again.
  CHECK(run_owner(state_dir, "m", "1").empty());
  CHECK(StateLock::version(state_dir, "m", "1", "reverify run").ok());
  CHECK(StateLock::whole(state_dir, "reverifyd").ok());
}

TEST_CASE("a store file put back from an older copy is refused; restored, its ids continue") {
  test::TempDir dir;
  const Config config = config_in(dir.path);
  const fs::path copy = dir.path / "snapshot.db";
  {
    auto store = open_state_store(config, fixed_now);
    REQUIRE(store.ok());
    record_verifications(**store, 2);
  }  // closed: its WAL is folded into the file, which is copied as a snapshot would hold it
  fs::copy_file(config.db_path(), copy);
  {
    auto store = open_state_store(config, fixed_now);
    REQUIRE(store.ok());
    record_verifications(**store, 2);  // verifications 3 and 4, pages 3 and 4: then rolled back
  }
  CHECK(marked(config) == StoreHighWater{4, 4});
  remove_store_files(config);
  fs::copy_file(copy, config.db_path());
  const auto size = fs::file_size(config.db_path());

  auto refused = open_state_store(config, fixed_now);
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.error().code == ErrorCode::conflict);
  const std::string& message = refused.error().message;
  CHECK(message.find("the store " + config.db_path().string() +
                     " is older than this state_dir's history") != std::string::npos);
  CHECK(message.find("verification ids up to 2 and page ids up to 2") != std::string::npos);
  CHECK(message.find("records ids up to 4 and 4 handed out") != std::string::npos);
  const std::string aside = config.db_path().string() + ".rolled-back";
  // The commands that keep it as a restore, one a line, each path one shell word.
  const std::string db = config.db_path().string();
  CHECK(message.find("\n  mv " + shell_word(db) + " " + shell_word(aside) + "\n") !=
        std::string::npos);
  CHECK(message.find("\n  [ ! -e " + shell_word(db + "-wal") + " ] || mv " +
                     shell_word(db + "-wal") + " " + shell_word(aside + "-wal") + "\n") !=
        std::string::npos);
  CHECK(message.ends_with("\n  reverify restore " + shell_word(aside) + " " +
                          config.api.command_scope));
  CHECK(fs::file_size(config.db_path()) == size);  // left as it was
  CHECK(marked(config) == StoreHighWater{4, 4});
  // `reverify backup` refuses it as well.
  auto to_copy = open_state_store_to_copy(config, fixed_now);
  REQUIRE_FALSE(to_copy.ok());
  CHECK(to_copy.error().message.find("is older than this state_dir's history") !=
        std::string::npos);

  // The way on it names: the copy kept as a restore, its ids continuing after 4.
  fs::rename(config.db_path(), aside);
  auto restored = restore_state_store(config, fs::path(aside), fixed_now);
  REQUIRE(restored.ok());
  CHECK(verifications_in(**restored) == 2);
  record_verifications(**restored, 1);
  CHECK(high_water_of(**restored) == StoreHighWater{5, 5});
  auto all = (*restored)->verifications("", "", 10);
  REQUIRE(all.ok());
  CHECK(all->front().id == 5);  // never 3 again: a link to verification 3 opens no other one
}

TEST_CASE("a backup copy put in place by hand is a restore: accepted, its ids continuing") {
  test::TempDir dir;
  const Config config = config_in(dir.path);
  {
    auto store = open_state_store(config, fixed_now);
    REQUIRE(store.ok());
    record_verifications(**store, 1);
    REQUIRE((*store)->backup_to(dir.path / "backup.db").ok());
    record_verifications(**store, 2);
  }
  remove_store_files(config);
  fs::copy_file(dir.path / "backup.db", config.db_path());
  auto store = open_state_store(config, fixed_now);
  REQUIRE(store.ok());
  CHECK((*store)->identity().adopted);
  record_verifications(**store, 1);
  CHECK(high_water_of(**store) == StoreHighWater{4, 4});
}

TEST_CASE("a new store started on purpose numbers its ids after the lost store's") {
  test::TempDir dir;
  const Config config = config_in(dir.path);
  {
    auto store = open_state_store(config, fixed_now);
    REQUIRE(store.ok());
    record_verifications(**store, 3);
  }
  remove_store_files(config);
  auto fresh = restore_state_store(config, std::nullopt, fixed_now);
  REQUIRE(fresh.ok());
  CHECK(verifications_in(**fresh) == 0);
  record_verifications(**fresh, 1);
  CHECK(high_water_of(**fresh) == StoreHighWater{4, 4});
}

TEST_CASE("`reverify backup` refuses a store that is missing or empty: nothing to copy") {
  test::TempDir dir;
  const Config config = config_in(dir.path);
  SUBCASE("never made") {
    auto refused = open_state_store_to_copy(config, fixed_now);
    REQUIRE_FALSE(refused.ok());
    CHECK(refused.error().code == ErrorCode::conflict);
    CHECK(refused.error().message.find(config.db_path().string() +
                                       " is missing: there is nothing to back up") !=
          std::string::npos);
  }
  SUBCASE("0 bytes where the folder shows history: the refusal every writer gives") {
    {
      auto store = open_state_store(config, fixed_now);
      REQUIRE(store.ok());
      record_verifications(**store, 1);
    }
    remove_store_files(config);
    test::write_file(config.db_path(), "");
    auto refused = open_state_store_to_copy(config, fixed_now);
    REQUIRE_FALSE(refused.ok());
    CHECK(refused.error().code == ErrorCode::conflict);
    CHECK(refused.error().message.find(config.db_path().string() + " is empty (0 bytes)") !=
          std::string::npos);
    CHECK(refused.error().message.find("reverify restore BACKUP " + config.api.command_scope) !=
          std::string::npos);
  }
  SUBCASE("a store that holds one is copied") {
    {
      auto store = open_state_store(config, fixed_now);
      REQUIRE(store.ok());
    }
    CHECK(open_state_store_to_copy(config, fixed_now).ok());
  }
}
