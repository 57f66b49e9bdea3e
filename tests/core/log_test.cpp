// The log's lines: one per line of a message, every one with the full prefix; syslog priorities
// for the journal and an RFC 3339 time elsewhere; key=value fields in logfmt.
#include <doctest/doctest.h>

#include "core/log.hpp"
#include "core/text.hpp"

using namespace reverify;

namespace {
const LogStyle kJournal{"reverifyd", true, 0};
// 2026-12-01T14:03:07.412Z
const LogStyle kForeground{"reverifyd", false, 1'796'133'787'412};
}  // namespace

TEST_CASE("a line carries its priority for the journal and its time elsewhere") {
  CHECK(format_log(LogLevel::info, "listening on 127.0.0.1:8420", {}, kForeground) ==
        "2026-12-01T14:03:07.412Z reverifyd: info: listening on 127.0.0.1:8420\n");
  CHECK(format_log(LogLevel::critical, "x", {}, kJournal) == "<2>reverifyd: critical: x\n");
  CHECK(format_log(LogLevel::error, "x\n", {}, kJournal) == "<3>reverifyd: error: x\n");
  CHECK(format_log(LogLevel::warning, "x", {}, kJournal) == "<4>reverifyd: warning: x\n");
  CHECK(format_log(LogLevel::notice, "x", {}, kJournal) == "<5>reverifyd: notice: x\n");
  CHECK(format_log(LogLevel::info, "x", {}, kJournal) == "<6>reverifyd: info: x\n");
  CHECK(format_log(LogLevel::debug, "x", {}, kJournal) == "<7>reverifyd: debug: x\n");
  CHECK(format_log(LogLevel::info, "x", {}, LogStyle{"reverify", true, 0}) ==
        "<6>reverify: info: x\n");
}

TEST_CASE("fields follow the message in logfmt, quoted only when they must be") {
  CHECK(format_log(LogLevel::warning, "verification 12 of m@1: failed:input-drift",
                   {{"model", "m"},
                    {"version", "1"},
                    {"verification", "12"},
                    {"class", "failed:input-drift"},
                    {"url", "https://r.example/verifications/12"}},
                   kJournal) ==
        "<4>reverifyd: warning: verification 12 of m@1: failed:input-drift model=m version=1 "
        "verification=12 class=failed:input-drift url=https://r.example/verifications/12\n");
  CHECK(format_log(LogLevel::error, "x",
                   {{"reason", "HTTP 503: \"busy\" a=b"}, {"empty", ""}, {"nl", "a\nb\\"}},
                   kJournal) ==
        "<3>reverifyd: error: x reason=\"HTTP 503: \\\"busy\\\" a=b\" empty=\"\" "
        "nl=\"a\\nb\\\\\"\n");
}

TEST_CASE("every line of a multi-line message keeps the prefix; continuations are indented") {
  CHECK(format_log(LogLevel::error, "config invalid: a.yaml:\napi.port: bad\r\nschedule: bad",
                   {{"file", "a.yaml"}}, kJournal) ==
        "<3>reverifyd: error: config invalid: a.yaml: file=a.yaml\n"
        "<3>reverifyd: error:   api.port: bad\n"
        "<3>reverifyd: error:   schedule: bad\n");
  CHECK(format_log(LogLevel::warning, "", {}, kJournal) == "<4>reverifyd: warning: \n");
}

TEST_CASE("one_line: the first sentence of the first line, spaces folded, cut on a character") {
  CHECK(one_line("primary:accuracy 0.93 is below its band. 3 passed, 1 failed", 200) ==
        "primary:accuracy 0.93 is below its band.");
  CHECK(one_line("first line\nsecond line", 200) == "first line");
  CHECK(one_line("  a \t b  ", 200) == "a b");
  CHECK(one_line("", 10).empty());
  CHECK(one_line("abcdefghijkl", 8) == "abcde…");
  // "é" is two bytes: a cut never splits it.
  CHECK(truncate_utf8("aééé", 5) == "a…");
}

TEST_CASE("one_line never splits, folds or cuts a suggested command: it runs as printed") {
  const std::string command = "`reverify calibrate m@1 --seeds 10 --config '/tmp/a  b. c/r.yaml'`";
  // Cut inside the command: the command is kept whole, then the mark.
  CHECK(one_line("uncalibrated; calibrate with " + command + " (seed-only reruns)", 40) ==
        "uncalibrated; calibrate with " + command + "…");
  // Its ". " is no sentence end, its two spaces stay two.
  CHECK(one_line("calibrate with " + command + ". Then rerun it.", 500) ==
        "calibrate with " + command + ".");
  // Cut before the command: as before.
  CHECK(one_line("a long reason before " + command, 10) == "a long …");
  // A command that never closes is left out rather than cut.
  CHECK(one_line("run `reverify gate m@1 --config /etc/x.yaml", 20) == "run …");
}

TEST_CASE("shell_word: a plain word as it is, anything else single-quoted so it runs as printed") {
  CHECK(shell_word("/etc/reverify/reverify.yaml") == "/etc/reverify/reverify.yaml");
  CHECK(shell_word("https://git.example/a.git=/srv/mirror") ==
        "https://git.example/a.git=/srv/mirror");
  CHECK(shell_word("/tmp/my config.yaml") == "'/tmp/my config.yaml'");
  CHECK(shell_word("it's") == "'it'\\''s'");
  CHECK(shell_word("$HOME") == "'$HOME'");
  CHECK(shell_word("") == "''");
}
