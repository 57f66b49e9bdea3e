#include "store/restore_advice.hpp"

#include <mutex>

#include "core/suggested_command.hpp"

namespace reverify {
namespace {

std::mutex scope_mutex;
std::string restore_scope;  // guarded by scope_mutex

}  // namespace

void set_restore_scope(const std::string& scope) {
  std::lock_guard lock(scope_mutex);
  restore_scope = scope;
}

std::string restore_commands() {
  std::string scope;
  {
    std::lock_guard lock(scope_mutex);
    scope = restore_scope;
  }
  const bool named = !scope.empty();
  if (!named)
    scope = "--config FILE";
  return "put the latest backup back with " + suggested_command("restore BACKUP", scope) +
         " (BACKUP: a file `reverify backup` wrote" +
         (named ? "" : "; FILE: the config whose state_dir holds the store") +
         "), or start over with " + suggested_command("restore --empty", scope);
}

}  // namespace reverify
