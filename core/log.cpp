#include "core/log.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <iostream>
#include <mutex>

namespace reverify {
namespace {

std::mutex log_mutex;

// "2026-12-01T14:03:07.412Z"
std::string rfc3339_ms(std::int64_t unix_ms) {
  const std::time_t seconds = static_cast<std::time_t>(unix_ms / 1000);
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char text[64];
  std::snprintf(text, sizeof text, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", utc.tm_year + 1900,
                utc.tm_mon + 1, utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec,
                static_cast<int>(unix_ms % 1000));
  return text;
}

// A logfmt value: bare when it is a plain word, else quoted with \" \\ \n \r \t escaped.
std::string logfmt_value(std::string_view value) {
  bool plain = !value.empty();
  for (char c : value) {
    if (c == ' ' || c == '"' || c == '=' || c == '\\' || static_cast<unsigned char>(c) < 0x20)
      plain = false;
  }
  if (plain)
    return std::string(value);
  std::string out = "\"";
  for (char c : value) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        out += c;
    }
  }
  return out + "\"";
}

std::int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

int syslog_priority(LogLevel level) {
  switch (level) {
    case LogLevel::critical:
      return 2;
    case LogLevel::error:
      return 3;
    case LogLevel::warning:
      return 4;
    case LogLevel::notice:
      return 5;
    case LogLevel::info:
      return 6;
    case LogLevel::debug:
      return 7;
  }
  return 6;
}

std::string format_log(LogLevel level, std::string_view message, const LogFields& fields,
                       const LogStyle& style) {
  const std::string prefix = (style.journal ? "<" + std::to_string(syslog_priority(level)) + ">"
                                            : rfc3339_ms(style.unix_ms) + " ") +
                             std::string(style.program) + ": " + to_string(level) + ": ";
  std::string tail;
  for (const auto& field : fields)
    tail += " " + field.key + "=" + logfmt_value(field.value);
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
    text += prefix + (start == 0 ? "" : "  ") + std::string(line) + (start == 0 ? tail : "") + "\n";
    start = end == std::string_view::npos ? message.size() + 1 : end + 1;
  } while (start <= message.size());
  return text;
}

void log_line(LogLevel level, std::string_view message, const LogFields& fields) {
  static const bool journal = stderr_is_journal();
  const std::string text =
      format_log(level, message, fields, LogStyle{"reverifyd", journal, now_ms()});
  std::lock_guard lock(log_mutex);
  std::cerr << text << std::flush;
}

void log_critical(std::string_view message, const LogFields& fields) {
  log_line(LogLevel::critical, message, fields);
}
void log_error(std::string_view message, const LogFields& fields) {
  log_line(LogLevel::error, message, fields);
}
void log_warning(std::string_view message, const LogFields& fields) {
  log_line(LogLevel::warning, message, fields);
}
void log_notice(std::string_view message, const LogFields& fields) {
  log_line(LogLevel::notice, message, fields);
}
void log_info(std::string_view message, const LogFields& fields) {
  log_line(LogLevel::info, message, fields);
}
void log_debug(std::string_view message, const LogFields& fields) {
  log_line(LogLevel::debug, message, fields);
}

LogLineFn log_lines_to_stderr() {
  return [](LogLevel level, const std::string& message, const LogFields& fields) {
    log_line(level, message, fields);
  };
}

bool stderr_is_journal() {
  const char* stream = std::getenv("JOURNAL_STREAM");
  struct stat info {};
  if (!stream || ::fstat(STDERR_FILENO, &info) != 0)
    return false;
  return std::string(stream) == std::to_string(info.st_dev) + ":" + std::to_string(info.st_ino);
}

}  // namespace reverify
