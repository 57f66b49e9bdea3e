#pragma once
// reverifyd's log: one line per event on stderr, "reverifyd: <level>: <message>". Under systemd,
// when stderr is the journal stream $JOURNAL_STREAM names (systemd.exec(5)), every line starts
// with its syslog priority, "<3>" error, "<4>" warning, "<6>" info (sd-daemon(3)), so
// `journalctl -u reverifyd -p warning` shows exactly the warnings and errors. A message with
// newlines (a config with three errors) becomes one line per line of it, each with the full
// prefix and continuations indented: no line of it loses its priority. Thread-safe; the lines of
// one message are written together. Callers never pass secrets (tokens stay in Config).

#include <string>
#include <string_view>

namespace reverify {

enum class LogLevel { error, warning, info };

void log_info(std::string_view message);
void log_warning(std::string_view message);
void log_error(std::string_view message);

// The text written for one message (what the functions above write); `journal` adds priorities.
std::string format_log(LogLevel level, std::string_view message, bool journal);

// Whether stderr is the journal stream systemd connected (fstat(2) matches $JOURNAL_STREAM).
bool stderr_is_journal();

}  // namespace reverify
