// reverifyd's log lines: one per line of a message, every one with the full prefix, syslog
// priorities only for the journal.
#include <doctest/doctest.h>

#include "daemon/daemon_log.hpp"

using reverify::format_log;
using reverify::LogLevel;

TEST_CASE("a one-line message is one line, with a priority only for the journal") {
  CHECK(format_log(LogLevel::info, "listening on 127.0.0.1:8420", false) ==
        "reverifyd: info: listening on 127.0.0.1:8420\n");
  CHECK(format_log(LogLevel::info, "x", true) == "<6>reverifyd: info: x\n");
  CHECK(format_log(LogLevel::warning, "x", true) == "<4>reverifyd: warning: x\n");
  CHECK(format_log(LogLevel::error, "x\n", true) == "<3>reverifyd: error: x\n");
}

TEST_CASE("every line of a multi-line message keeps the prefix; continuations are indented") {
  CHECK(format_log(LogLevel::error, "config invalid: a.yaml:\napi.port: bad\r\nschedule: bad",
                   true) ==
        "<3>reverifyd: error: config invalid: a.yaml:\n"
        "<3>reverifyd: error:   api.port: bad\n"
        "<3>reverifyd: error:   schedule: bad\n");
  CHECK(format_log(LogLevel::warning, "", false) == "reverifyd: warning: \n");
}
