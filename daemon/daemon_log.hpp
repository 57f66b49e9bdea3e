#pragma once
// One line per event on stderr (journald adds time and unit): "reverifyd: <level>: <message>".
// Thread-safe; lines never interleave. Callers never pass secrets (tokens stay in Config).

#include <string_view>

namespace reverify {

void log_info(std::string_view message);
void log_warning(std::string_view message);
void log_error(std::string_view message);

}  // namespace reverify
