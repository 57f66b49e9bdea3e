// reverify restore --config FILE (BACKUP | --empty): puts a store back into a state_dir whose
// store was lost, from a file `reverify backup` wrote, or starts it over with an empty store on
// purpose; reverifyd refuses to start while the state_dir shows history its store lacks
// (verify/state_dir.hpp). Refused while reverifyd or a `reverify run` holds the state_dir, and
// over a store that holds verifications. The restored store gets an id of its own, so the pages
// it records never repeat the keys of pages the lost store recorded after the backup.
// Exit status: 0 restored, 2 refused or error.

#include <iostream>

#include "cli/command.hpp"
#include "settings/config.hpp"
#include "verify/state_dir.hpp"

namespace reverify::cli {
namespace {

constexpr const char* kRestoreName = "restore";

struct RestoreArguments {
  std::string config;
  std::optional<std::string> backup;
  bool empty = false;
};

int run_restore(const RestoreArguments& args) {
  if (args.empty == args.backup.has_value())
    return usage_error(kRestoreName, "give the BACKUP file to restore, or --empty to start over");
  auto config = load_config(args.config);
  if (!config.ok())
    return usage_error(kRestoreName, config.error().message);
  std::optional<std::filesystem::path> backup;
  if (args.backup)
    backup = *args.backup;
  auto store = restore_state_store(*config, backup, system_now);
  if (!store.ok()) {
    std::cerr << "reverify restore: " << store.error().message << "\n";
    return 2;
  }
  auto stats = (*store)->verification_stats();
  const StoreIdentity& identity = (*store)->identity();
  std::cout << (backup ? "restored " + std::to_string(stats.ok() ? stats->total() : 0) +
                             " verification(s) from " + backup->string()
                       : std::string("started over with an empty store"))
            << " into " << config->db_path().string() << "; store id " << identity.id
            << (identity.restored_from
                    ? " (the backup was of store " + *identity.restored_from + ")"
                    : std::string())
            << "\n";
  return 0;
}

Action define_restore(CLI::App& app) {
  auto o = std::make_shared<RestoreArguments>();
  app.add_option("--config", o->config, "reverifyd's config file: its state_dir gets the store")
      ->type_name("FILE")
      ->required();
  app.add_option("BACKUP", o->backup, "a file `reverify backup` wrote");
  app.add_flag("--empty", o->empty,
               "start over with a new, empty store instead (the verifications of the lost one "
               "are gone for good)");
  return [o] { return run_restore(*o); };
}

const Registrar kRestore{{kRestoreName,
                          "put a backup back as the state_dir's store, with reverifyd stopped "
                          "(exit 0 restored, 2 refused or error)",
                          define_restore}};

}  // namespace
}  // namespace reverify::cli
