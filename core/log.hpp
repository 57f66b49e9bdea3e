#pragma once
// reverifyd's log: one line per event on stderr, with its priority and key=value fields (its
// loop, its verifications, its pager dispatcher, which takes a LogLineFn so `reverify run` can
// print its pages with its report instead).
//
//   foreground:  2026-12-01T14:03:07.412Z reverifyd: warning: verification 12 of m@v: failed:...
//                model=m version=v verification=12 class=failed:input-drift url=...
//   journal:     <4>reverifyd: warning: verification 12 of m@v: failed:... model=m version=v ...
//
// Under systemd, when stderr is the journal stream $JOURNAL_STREAM names (systemd.exec(5)), each
// line starts with its syslog priority (sd-daemon(3)): <2> critical, <3> error, <4> warning,
// <5> notice, <6> info, <7> debug, so `journalctl -u reverifyd -p warning` shows exactly warnings
// and worse and `-p info` leaves out what happens every few minutes without news (a registry sync
// that changed nothing); the journal adds the time. Elsewhere each line starts with its RFC 3339
// UTC time instead. Every level is written: what is kept is the journal's (or the reader's) choice.
// Fields follow the message in logfmt (key=value; a value with a space, a quote, '=' or nothing
// in it is quoted, with \" \\ \n escaped), so `journalctl -o json` consumers and log shippers
// filter on model=, version=, verification=, class=, sender=, page=, attempt=. A value is written
// whole, never cut: a caller that keeps a line short leaves the long text where a field points
// (url=).
// A message with newlines (a config with three errors) becomes one line per line of it, each
// with the full prefix and continuations indented (the fields go on the first): no line of it
// loses its priority. Thread-safe; the lines of one message are written together. Callers never
// pass secrets (tokens stay in Config; texts from outside are redacted first).

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/enum_names.hpp"

namespace reverify {

// Syslog severities (RFC 5424), most severe first.
enum class LogLevel { critical, error, warning, notice, info, debug };
template <>
struct EnumNames<LogLevel> {
  static constexpr EnumName<LogLevel> table[] = {
      {LogLevel::critical, "critical"}, {LogLevel::error, "error"}, {LogLevel::warning, "warning"},
      {LogLevel::notice, "notice"},     {LogLevel::info, "info"},   {LogLevel::debug, "debug"},
  };
};
int syslog_priority(LogLevel level);  // 2 critical ... 6 info, 7 debug

struct LogField {
  std::string key;  // a fixed identifier: model, version, verification, class, sender, ...
  std::string value;
};
using LogFields = std::vector<LogField>;

// Where a component that logs (the pager dispatcher) sends its lines; log_line by default.
using LogLineFn =
    std::function<void(LogLevel level, const std::string& message, const LogFields& fields)>;

struct LogStyle {
  std::string_view program = "reverifyd";
  bool journal = false;      // priorities instead of times
  std::int64_t unix_ms = 0;  // the time written when !journal
};

// The text written for one message, newline-terminated (log_line writes it for "reverifyd").
std::string format_log(LogLevel level, std::string_view message, const LogFields& fields,
                       const LogStyle& style);

void log_line(LogLevel level, std::string_view message, const LogFields& fields = {});
void log_critical(std::string_view message, const LogFields& fields = {});
void log_error(std::string_view message, const LogFields& fields = {});
void log_warning(std::string_view message, const LogFields& fields = {});
void log_notice(std::string_view message, const LogFields& fields = {});
void log_info(std::string_view message, const LogFields& fields = {});
void log_debug(std::string_view message, const LogFields& fields = {});
LogLineFn log_lines_to_stderr();  // log_line as a LogLineFn

// Whether stderr is the journal stream systemd connected (fstat(2) matches $JOURNAL_STREAM).
bool stderr_is_journal();

}  // namespace reverify
