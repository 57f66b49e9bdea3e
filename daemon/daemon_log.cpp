#include "daemon/daemon_log.hpp"

#include <iostream>
#include <mutex>
#include <string>

namespace reverify {
namespace {
std::mutex log_mutex;

void write(const char* level, std::string_view message) {
  std::string line = std::string("reverifyd: ") + level + ": " + std::string(message) + "\n";
  std::lock_guard lock(log_mutex);
  std::cerr << line << std::flush;
}
}  // namespace

void log_info(std::string_view message) {
  write("info", message);
}
void log_warning(std::string_view message) {
  write("warning", message);
}
void log_error(std::string_view message) {
  write("error", message);
}

}  // namespace reverify
