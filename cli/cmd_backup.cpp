// reverify backup --config FILE OUT: a consistent copy of the state_dir's store, taken with
// SQLite's online backup API while reverifyd or a `reverify run` keeps writing into it
// (Store::backup_to: one read transaction, so every commit is wholly in the copy or not at all).
// `reverify restore --config FILE OUT` puts it back. A store that is missing or empty, or that
// every writer refuses (its history lost, or older than its state_dir's marker), is refused:
// nothing is written. Exit status: 0 written, 2 refused or error.

#include <iostream>

#include "cli/command.hpp"
#include "settings/config.hpp"
#include "verify/state_dir.hpp"

namespace reverify::cli {
namespace {

constexpr const char* kBackupName = "backup";

struct BackupArguments {
  std::string config, out;
};

int run_backup(const BackupArguments& args) {
  auto config = load_config(args.config);
  if (!config.ok())
    return usage_error(kBackupName, config.error().message);
  // Read-only: a backup never changes the store it copies. Refused as every other command refuses
  // a store with its history lost, and a missing or empty one (verify/state_dir.hpp).
  auto store = open_state_store_to_copy(*config, system_now);
  if (!store.ok()) {
    std::cerr << "reverify backup: " << store.error().message << "\n";
    return 2;
  }
  if (auto s = (*store)->backup_to(args.out); !s.ok()) {
    std::cerr << "reverify backup: " << s.error().message << "\n";
    return 2;
  }
  auto copy = Store::open(args.out, system_now, /*read_only=*/true);
  auto stats = copy.ok() ? (*copy)->verification_stats() : Result<VerificationStats>(copy.error());
  if (!stats.ok()) {
    std::cerr << "reverify backup: " << args.out
              << " was written but cannot be read back: " << stats.error().message << "\n";
    return 2;
  }
  std::cout << "backed up " << stats->total() << " verification(s) of store "
            << (*store)->identity().id << " to " << args.out << "\nrestore it with: reverify "
            << "restore --config " << args.config << " " << args.out << "\n";
  return 0;
}

Action define_backup(CLI::App& app) {
  auto o = std::make_shared<BackupArguments>();
  app.add_option("--config", o->config, "reverifyd's config file: its state_dir holds the store")
      ->type_name("FILE")
      ->required();
  app.add_option("OUT", o->out,
                 "the backup file to write (never overwritten: it must not exist); safe while "
                 "reverifyd runs")
      ->required();
  return [o] { return run_backup(*o); };
}

const Registrar kBackup{{kBackupName,
                         "copy the state_dir's store to a file, consistent while reverifyd runs "
                         "(exit 0 written, 2 refused or error)",
                         define_backup}};

}  // namespace
}  // namespace reverify::cli
