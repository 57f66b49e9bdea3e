#pragma once
// The way back to a store that is damaged or gone, as commands a person runs as printed: they
// name the config of the state_dir, which the store itself does not know. Whoever opens a
// state_dir's store from a config says which (verify/state_dir.cpp, and the CLI commands that
// read the store); a process runs with one config. Thread-safe.

#include <string>

namespace reverify {

// `scope` is "--config <file>" as core/suggested_command.hpp's config_scope builds it.
void set_restore_scope(const std::string& scope);

// "put the latest backup back with `reverify restore BACKUP --config F` (BACKUP: a file `reverify
// backup` wrote), or start over with `reverify restore --empty --config F`". Before any
// set_restore_scope (a tool on a bare store file), F is the placeholder FILE, named as such.
std::string restore_commands();

}  // namespace reverify
