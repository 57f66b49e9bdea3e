#include "daemon/daemon_log.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <iostream>
#include <mutex>

namespace reverify {
namespace {

std::mutex log_mutex;

const char* priority(LogLevel level) {
  switch (level) {
    case LogLevel::error:
      return "<3>";
    case LogLevel::warning:
      return "<4>";
    case LogLevel::info:
      return "<6>";
  }
  return "<6>";
}

const char* name(LogLevel level) {
  switch (level) {
    case LogLevel::error:
      return "error";
    case LogLevel::warning:
      return "warning";
    case LogLevel::info:
      return "info";
  }
  return "info";
}

void write(LogLevel level, std::string_view message) {
  static const bool journal = stderr_is_journal();
  const std::string text = format_log(level, message, journal);
  std::lock_guard lock(log_mutex);
  std::cerr << text << std::flush;
}

}  // namespace

std::string format_log(LogLevel level, std::string_view message, bool journal) {
  const std::string prefix =
      std::string(journal ? priority(level) : "") + "reverifyd: " + name(level) + ": ";
  while (!message.empty() && (message.back() == '\n' || message.back() == '\r'))
    message.remove_suffix(1);
  std::string text;
  std::size_t start = 0;
  do {
    const std::size_t end = message.find('\n', start);
    std::string_view line =
        message.substr(start, end == std::string_view::npos ? end : end - start);
    if (!line.empty() && line.back() == '\r')
      line.remove_suffix(1);
    text += prefix + (start == 0 ? "" : "  ") + std::string(line) + "\n";
    start = end == std::string_view::npos ? message.size() + 1 : end + 1;
  } while (start <= message.size());
  return text;
}

bool stderr_is_journal() {
  const char* stream = std::getenv("JOURNAL_STREAM");
  struct stat info {};
  if (!stream || ::fstat(STDERR_FILENO, &info) != 0)
    return false;
  return std::string(stream) == std::to_string(info.st_dev) + ":" + std::to_string(info.st_ino);
}

void log_info(std::string_view message) {
  write(LogLevel::info, message);
}
void log_warning(std::string_view message) {
  write(LogLevel::warning, message);
}
void log_error(std::string_view message) {
  write(LogLevel::error, message);
}

}  // namespace reverify
