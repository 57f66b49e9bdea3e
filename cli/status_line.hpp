#pragma once
// One line at the bottom of a terminal, redrawn in place ("\r\033[K") and cut to the terminal's
// width so it never wraps; permanent lines printed through print() appear above it. Thread-safe.
// When `out` is not a terminal it draws nothing (callers print plain lines instead), so logs and
// pipes stay clean.

#include <cstdio>
#include <mutex>
#include <string>

namespace reverify::cli {

class StatusLine {
 public:
  explicit StatusLine(std::FILE* out);
  ~StatusLine();  // erases the line
  StatusLine(const StatusLine&) = delete;
  StatusLine& operator=(const StatusLine&) = delete;

  bool enabled() const { return enabled_; }
  void draw(const std::string& text);   // replaces the line (no-op when disabled)
  void print(const std::string& line);  // a permanent line above it (printed when disabled too)

 private:
  void draw_locked();

  std::FILE* out_;
  const bool enabled_;
  std::mutex mutex_;
  std::string text_;  // what the line shows now ("" = nothing drawn)
};

}  // namespace reverify::cli
